// Rholang parser: recursive descent over the token vector, precedence
// climbing for binary operators, node heights checked against
// kMaxNestingDepth.
#include "rholang/frontend/parser.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/internal/precedence.h"
#include "rholang/frontend/lexer.h"
#include "rholang/frontend/limits.h"
#include "util/status_macros.h"

namespace rnode::rholang {
namespace {

using ast::Name;
using ast::NameKind;
using ast::Proc;
using ast::ProcKind;
using internal::BinaryInfo;
using internal::BinaryLevel;
using internal::kLevelAtom;
using internal::kLevelEval;
using internal::kLevelFor;
using internal::kLevelMethod;
using internal::kLevelNegation;
using internal::kLevelNew;
using internal::kLevelPar;
using internal::kLevelSend;
using internal::kLevelUnary;

// A parsed process and the level it binds at.
struct Parsed {
  const Proc* proc;
  int level;
};

uint32_t NameHeight(const Name* n) {
  if (n == nullptr) return 0;
  return n->kind == NameKind::kQuote && n->quote ? n->quote->height + 1 : 1;
}

uint32_t PatternHeight(const ast::NamePattern& p) {
  uint32_t h = 0;
  for (const Name* n : p.names) h = std::max(h, NameHeight(n));
  return h;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, ast::Arena* arena)
      : toks_(std::move(tokens)), arena_(arena) {}

  absl::StatusOr<const Proc*> Program() {
    ASSIGN_OR_RETURN(Parsed p, ParseProc(kLevelPar));
    if (Peek().kind != Tok::kEof) {
      return Unexpected("an operator, `|` or end of input");
    }
    return p.proc;
  }

 private:
  // Counts recursion so a pathological input (`((((...` or `@@@@...`) stops
  // at kMaxNestingDepth instead of exhausting the stack.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser* p_;
  };

  const Token& Peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, toks_.size() - 1);
    return toks_[i];
  }
  const Token& Take() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool Accept(Tok k) {
    if (Peek().kind != k) return false;
    Take();
    return true;
  }

  absl::Status ErrorAt(ast::Pos pos, std::string msg) const {
    return DiagnosticError(absl::StatusCode::kInvalidArgument, pos.line,
                           pos.col, std::move(msg));
  }
  std::string Found() const {
    const Token& t = Peek();
    if (t.kind == Tok::kIdent || t.kind == Tok::kInt) {
      return absl::StrCat("`", std::string(t.text), "`");
    }
    return TokDescription(t.kind);
  }
  absl::Status Unexpected(std::string_view expected) const {
    return ErrorAt(Peek().pos, absl::StrCat("expected ", std::string(expected),
                                            ", found ", Found()));
  }
  absl::Status Expect(Tok k, std::string_view context = {}) {
    if (Peek().kind == k) {
      Take();
      return absl::OkStatus();
    }
    std::string what = TokDescription(k);
    if (!context.empty()) absl::StrAppend(&what, " ", std::string(context));
    return Unexpected(what);
  }
  absl::Status Unsupported(ast::Pos pos, std::string_view what) const {
    return ErrorAt(pos, absl::StrCat("unsupported: ", std::string(what),
                                     " (outside the supported Rholang "
                                     "language)"));
  }
  absl::Status CheckDepth() const {
    if (depth_ > kMaxNestingDepth) {
      const Token& t = Peek();
      return DiagnosticError(
          absl::StatusCode::kResourceExhausted, t.pos.line, t.pos.col,
          absl::StrCat("nesting deeper than ", kMaxNestingDepth, " levels"));
    }
    return absl::OkStatus();
  }

  Proc* NewProc(ProcKind kind, ast::Pos pos) {
    Proc* p = arena_->NewProc();
    p->kind = kind;
    p->pos = pos;
    return p;
  }

  // Sets p->height from its children and enforces kMaxNestingDepth.
  absl::StatusOr<const Proc*> Finish(Proc* p) {
    uint32_t h = 0;
    for (const Proc* c : p->procs) h = std::max(h, c->height);
    if (p->body) h = std::max(h, p->body->height);
    if (p->else_body) h = std::max(h, p->else_body->height);
    if (p->remainder) h = std::max(h, p->remainder->height);
    h = std::max(h, NameHeight(p->name));
    if (const ast::ProcExtra* x = p->extra) {
      for (const auto& group : x->receipts) {
        for (const ast::Bind& b : group) {
          h = std::max(h, PatternHeight(b.lhs));
          h = std::max(h, NameHeight(b.chan));
          for (const Proc* a : b.args) h = std::max(h, a->height);
        }
      }
      // Desugarings nest deeper than the syntax: sequential receipts become
      // one receive each, `?!` / `!?` sources add a `new` and a Par, and each
      // let declaration a match (or send and receive) on a list.
      h += static_cast<uint32_t>(x->receipts.size() + 2 * x->lets.size());
      for (const auto& group : x->receipts) {
        for (const ast::Bind& b : group) {
          if (b.source != ast::SourceKind::kSimple) h += 2;
        }
      }
      h = std::max(h, PatternHeight(x->formals));
      for (const ast::Case& c : x->cases) {
        h = std::max({h, c.pattern->height, c.body->height});
      }
      for (const ast::LetDecl& l : x->lets) {
        h = std::max(h, PatternHeight(l.lhs));
        for (const Proc* r : l.rhs) h = std::max(h, r->height);
      }
    }
    // `x!?(args); P` becomes new, Par and receive around P.
    if (p->kind == ProcKind::kSendSync) h += 3;
    p->height = h + 1;
    if (p->height > kMaxNestingDepth) {
      return DiagnosticError(
          absl::StatusCode::kResourceExhausted, p->pos.line, p->pos.col,
          absl::StrCat("nesting deeper than ", kMaxNestingDepth, " levels"));
    }
    return p;
  }

  absl::StatusOr<Parsed> ParseProc(int min_level) {
    DepthGuard guard(this);
    RETURN_IF_ERROR(CheckDepth());
    ASSIGN_OR_RETURN(Parsed lhs, ParsePrefix(min_level));
    Proc* open_par = nullptr;
    while (true) {
      BinaryInfo info;
      Tok t = Peek().kind;
      if (!BinaryLevel(t, &info)) break;
      if (info.level < min_level || lhs.level < info.level) break;
      ast::Pos op_pos = Peek().pos;
      if (t == Tok::kDot) {
        ASSIGN_OR_RETURN(lhs.proc, ParseMethod(lhs.proc));
        lhs.level = kLevelMethod;
        open_par = nullptr;
        continue;
      }
      Take();
      ASSIGN_OR_RETURN(Parsed rhs, ParseProc(info.level + 1));
      if (t == Tok::kBar) {
        if (open_par == nullptr) {
          open_par = NewProc(ProcKind::kPar, lhs.proc->pos);
          open_par->procs.push_back(lhs.proc);
          open_par->height = lhs.proc->height + 1;
        }
        open_par->procs.push_back(rhs.proc);
        open_par->height = std::max(open_par->height, rhs.proc->height + 1);
        if (open_par->height > kMaxNestingDepth) {
          return DiagnosticError(absl::StatusCode::kResourceExhausted,
                                 op_pos.line, op_pos.col,
                                 absl::StrCat("nesting deeper than ",
                                              kMaxNestingDepth, " levels"));
        }
        lhs.proc = open_par;
        lhs.level = kLevelPar;
        continue;
      }
      open_par = nullptr;
      Proc* node = NewProc(
          t == Tok::kMatches ? ProcKind::kMatches : ProcKind::kBinary, op_pos);
      node->binary = info.op;
      node->procs = {lhs.proc, rhs.proc};
      ASSIGN_OR_RETURN(lhs.proc, Finish(node));
      lhs.level = info.level;
    }
    return lhs;
  }

  absl::StatusOr<const Proc*> ParseMethod(const Proc* target) {
    Take();  // `.`
    if (Peek().kind != Tok::kIdent) return Unexpected("a method name");
    const Token& name = Take();
    Proc* node = NewProc(ProcKind::kMethod, name.pos);
    node->text = std::string(name.text);
    node->procs.push_back(target);
    RETURN_IF_ERROR(Expect(Tok::kLParen, "after the method name"));
    RETURN_IF_ERROR(ParseArgs(Tok::kRParen, &node->procs));
    return Finish(node);
  }

  // Comma-separated processes up to and including `close`.
  absl::Status ParseArgs(Tok close, std::vector<const Proc*>* out) {
    if (Accept(close)) return absl::OkStatus();
    while (true) {
      ASSIGN_OR_RETURN(Parsed p, ParseProc(kLevelPar));
      out->push_back(p.proc);
      if (Accept(close)) return absl::OkStatus();
      if (!Accept(Tok::kComma)) {
        return Unexpected(absl::StrCat("`,` or ", TokDescription(close)));
      }
    }
  }

  absl::StatusOr<Parsed> Atom(Proc* p) {
    ASSIGN_OR_RETURN(const Proc* done, Finish(p));
    return Parsed{done, kLevelAtom};
  }

  absl::StatusOr<Parsed> ParsePrefix(int min_level) {
    const Token& t = Peek();
    ast::Pos pos = t.pos;
    bool sends_allowed = min_level <= kLevelSend;
    switch (t.kind) {
      case Tok::kNot:
      case Tok::kTilde: {
        bool is_not = t.kind == Tok::kNot;
        Take();
        ASSIGN_OR_RETURN(Parsed operand,
                         ParseProc(is_not ? kLevelUnary : kLevelNegation));
        Proc* p = NewProc(ProcKind::kUnary, pos);
        p->unary = is_not ? ast::UnaryOp::kNot : ast::UnaryOp::kConnNot;
        p->procs.push_back(operand.proc);
        ASSIGN_OR_RETURN(const Proc* done, Finish(p));
        return Parsed{done, is_not ? kLevelUnary : kLevelNegation};
      }
      case Tok::kMinus: {
        Take();
        if (Peek().kind == Tok::kInt && Peek(1).kind != Tok::kDot) {
          const Token& lit = Take();
          Proc* p = NewProc(ProcKind::kInt, pos);
          p->int_value = static_cast<int64_t>(uint64_t{0} - lit.int_magnitude);
          return Atom(p);
        }
        ASSIGN_OR_RETURN(Parsed operand, ParseProc(kLevelUnary));
        Proc* p = NewProc(ProcKind::kUnary, pos);
        p->unary = ast::UnaryOp::kNeg;
        p->procs.push_back(operand.proc);
        ASSIGN_OR_RETURN(const Proc* done, Finish(p));
        return Parsed{done, kLevelUnary};
      }
      case Tok::kStar: {
        Take();
        ASSIGN_OR_RETURN(const Name* n, ParseName());
        Proc* p = NewProc(ProcKind::kEval, pos);
        p->name = n;
        ASSIGN_OR_RETURN(const Proc* done, Finish(p));
        return Parsed{done, kLevelEval};
      }
      case Tok::kEq: {
        Take();
        Proc* p = NewProc(ProcKind::kVarRef, pos);
        p->var_ref_name = Accept(Tok::kStar);
        if (Peek().kind != Tok::kIdent) {
          return Unexpected("a variable name after `=`");
        }
        p->text = std::string(Take().text);
        ASSIGN_OR_RETURN(const Proc* done, Finish(p));
        // The grammar lists `=x` at level 13, but its operand is a bare
        // variable, so it is self-delimiting: like an atom it may be the
        // left operand of any operator, `/\` (level 14) included.
        return Parsed{done, kLevelAtom};
      }
      case Tok::kAt: {
        if (!sends_allowed) {
          return ErrorAt(pos,
                         "a quoted name `@P` is not a process here; use "
                         "`*@P` or the process itself");
        }
        ASSIGN_OR_RETURN(const Name* n, ParseName());
        return ParseSendAfterName(n, pos);
      }
      case Tok::kIdent:
      case Tok::kWildcard: {
        Tok next = Peek(1).kind;
        if (sends_allowed && (next == Tok::kBang || next == Tok::kBangBang ||
                              next == Tok::kBangQuestion)) {
          ASSIGN_OR_RETURN(const Name* n, ParseName());
          return ParseSendAfterName(n, pos);
        }
        const Token& tok = Take();
        if (tok.kind == Tok::kWildcard) {
          return Atom(NewProc(ProcKind::kWildcard, pos));
        }
        Proc* p = NewProc(ProcKind::kVar, pos);
        p->text = std::string(tok.text);
        return Atom(p);
      }
      case Tok::kNil:
        Take();
        return Atom(NewProc(ProcKind::kNil, pos));
      case Tok::kTrue:
      case Tok::kFalse: {
        Proc* p = NewProc(ProcKind::kBool, pos);
        p->bool_value = Take().kind == Tok::kTrue;
        return Atom(p);
      }
      case Tok::kInt: {
        const Token& lit = Take();
        if (lit.int_magnitude > static_cast<uint64_t>(INT64_MAX)) {
          return ErrorAt(pos, "integer literal out of the 64-bit range");
        }
        Proc* p = NewProc(ProcKind::kInt, pos);
        p->int_value = static_cast<int64_t>(lit.int_magnitude);
        return Atom(p);
      }
      case Tok::kString:
      case Tok::kUri: {
        const Token& lit = Take();
        Proc* p = NewProc(
            lit.kind == Tok::kString ? ProcKind::kString : ProcKind::kUri, pos);
        p->text = lit.value;
        return Atom(p);
      }
      case Tok::kBadNumber:
        return Unsupported(
            pos, absl::StrCat("numeric literal `", std::string(t.text),
                              "` (only 64-bit Int literals are supported)"));
      case Tok::kTypeBool:
      case Tok::kTypeInt:
      case Tok::kTypeString:
      case Tok::kTypeUri:
      case Tok::kTypeByteArray: {
        Proc* p = NewProc(ProcKind::kSimpleType, pos);
        Tok k = Take().kind;
        p->simple_type = k == Tok::kTypeBool     ? ast::SimpleType::kBool
                         : k == Tok::kTypeInt    ? ast::SimpleType::kInt
                         : k == Tok::kTypeString ? ast::SimpleType::kString
                         : k == Tok::kTypeUri    ? ast::SimpleType::kUri
                                                 : ast::SimpleType::kByteArray;
        return Atom(p);
      }
      case Tok::kLParen:
        return ParseParen();
      case Tok::kLBracket:
        return ParseList();
      case Tok::kLBrace:
        return ParseBrace();
      case Tok::kSet:
        return ParseSet();
      case Tok::kNew:
        return ParseNew();
      case Tok::kIf:
        return ParseIf();
      case Tok::kContract:
        return ParseContract();
      case Tok::kFor:
        return ParseFor();
      case Tok::kMatch:
        return ParseMatch();
      case Tok::kLet:
        return ParseLet();
      case Tok::kBundle:
      case Tok::kBundlePlus:
      case Tok::kBundleMinus:
      case Tok::kBundleZero:
        return ParseBundle();
      case Tok::kSelect:
        return Unsupported(pos, "`select`");
      default:
        return Unexpected("a process");
    }
  }

  absl::StatusOr<const Name*> ParseName() {
    DepthGuard guard(this);
    RETURN_IF_ERROR(CheckDepth());
    const Token& t = Peek();
    Name* n = arena_->NewName();
    n->pos = t.pos;
    switch (t.kind) {
      case Tok::kWildcard:
        Take();
        n->kind = NameKind::kWildcard;
        return n;
      case Tok::kIdent:
        n->kind = NameKind::kVar;
        n->var = std::string(Take().text);
        return n;
      case Tok::kAt: {
        Take();
        ASSIGN_OR_RETURN(Parsed q, ParseProc(kLevelEval));
        n->kind = NameKind::kQuote;
        n->quote = q.proc;
        if (q.proc->height + 1 > kMaxNestingDepth) {
          return DiagnosticError(absl::StatusCode::kResourceExhausted,
                                 t.pos.line, t.pos.col,
                                 absl::StrCat("nesting deeper than ",
                                              kMaxNestingDepth, " levels"));
        }
        return n;
      }
      default:
        return Unexpected("a name (identifier, `_` or `@process`)");
    }
  }

  absl::StatusOr<Parsed> ParseSendAfterName(const Name* chan, ast::Pos pos) {
    Tok k = Peek().kind;
    if (k != Tok::kBang && k != Tok::kBangBang && k != Tok::kBangQuestion) {
      return Unexpected("`!`, `!!` or `!?` after a channel name");
    }
    Take();
    Proc* p = NewProc(
        k == Tok::kBangQuestion ? ProcKind::kSendSync : ProcKind::kSend, pos);
    p->name = chan;
    p->send = k == Tok::kBangBang ? ast::SendKind::kPersistent
                                  : ast::SendKind::kSingle;
    if (Peek().kind == Tok::kIdent && Peek(1).kind == Tok::kLParen) {
      return Unsupported(Peek().pos, "method sends `x!method(...)`");
    }
    RETURN_IF_ERROR(Expect(Tok::kLParen, "to open the send's arguments"));
    RETURN_IF_ERROR(ParseArgs(Tok::kRParen, &p->procs));
    int level = kLevelSend;
    if (p->kind == ProcKind::kSendSync) {
      level = kLevelNew;
      if (Accept(Tok::kSemi)) {
        ASSIGN_OR_RETURN(Parsed cont, ParseProc(kLevelNew));
        p->body = cont.proc;
      } else {
        Accept(Tok::kDot);
      }
    }
    ASSIGN_OR_RETURN(const Proc* done, Finish(p));
    return Parsed{done, level};
  }

  absl::StatusOr<Parsed> ParseParen() {
    ast::Pos pos = Take().pos;
    if (Peek().kind == Tok::kRParen) {
      return Unsupported(pos, "the unit value `()`");
    }
    ASSIGN_OR_RETURN(Parsed first, ParseProc(kLevelPar));
    if (Accept(Tok::kRParen)) return Parsed{first.proc, kLevelAtom};
    if (Peek().kind != Tok::kComma) return Unexpected("`,` or `)`");
    Proc* tuple = NewProc(ProcKind::kTuple, pos);
    tuple->procs.push_back(first.proc);
    while (Accept(Tok::kComma)) {
      if (Peek().kind == Tok::kRParen) break;
      ASSIGN_OR_RETURN(Parsed p, ParseProc(kLevelPar));
      tuple->procs.push_back(p.proc);
    }
    RETURN_IF_ERROR(Expect(Tok::kRParen, "to close the tuple"));
    return Atom(tuple);
  }

  // `...rest` or `..._` after a collection's elements.
  absl::StatusOr<const Proc*> ParseProcRemainder() {
    Take();  // `...`
    const Token& t = Peek();
    if (t.kind == Tok::kIdent) {
      Proc* p = NewProc(ProcKind::kVar, t.pos);
      p->text = std::string(Take().text);
      return Finish(p);
    }
    if (t.kind == Tok::kWildcard) {
      Take();
      return Finish(NewProc(ProcKind::kWildcard, t.pos));
    }
    return Unexpected("a variable or `_` after `...`");
  }

  // Elements with an optional remainder, up to and including `close`.
  absl::Status ParseElements(Tok close, Proc* coll) {
    while (true) {
      if (Accept(close)) return absl::OkStatus();
      if (Peek().kind == Tok::kEllipsis) {
        ASSIGN_OR_RETURN(coll->remainder, ParseProcRemainder());
        return Expect(close, "after the remainder");
      }
      ASSIGN_OR_RETURN(Parsed p, ParseProc(kLevelPar));
      coll->procs.push_back(p.proc);
      if (Accept(Tok::kComma)) continue;
      if (Peek().kind == Tok::kEllipsis || Peek().kind == close) continue;
      return Unexpected(absl::StrCat("`,`, `...` or ", TokDescription(close)));
    }
  }

  absl::StatusOr<Parsed> ParseList() {
    Proc* list = NewProc(ProcKind::kList, Take().pos);
    RETURN_IF_ERROR(ParseElements(Tok::kRBracket, list));
    return Atom(list);
  }

  absl::StatusOr<Parsed> ParseSet() {
    Proc* set = NewProc(ProcKind::kSet, Take().pos);
    RETURN_IF_ERROR(Expect(Tok::kLParen, "after `Set`"));
    RETURN_IF_ERROR(ParseElements(Tok::kRParen, set));
    return Atom(set);
  }

  absl::StatusOr<Parsed> ParseBrace() {
    ast::Pos pos = Take().pos;
    Proc* map = NewProc(ProcKind::kMap, pos);
    if (Accept(Tok::kRBrace)) return Atom(map);
    if (Peek().kind == Tok::kBar) return Unsupported(pos, "PathMap literals");
    if (Peek().kind == Tok::kEllipsis) {
      ASSIGN_OR_RETURN(map->remainder, ParseProcRemainder());
      RETURN_IF_ERROR(Expect(Tok::kRBrace, "after the map remainder"));
      return Atom(map);
    }
    ASSIGN_OR_RETURN(Parsed first, ParseProc(kLevelPar));
    if (Accept(Tok::kRBrace)) return Parsed{first.proc, kLevelAtom};
    if (!Accept(Tok::kColon)) return Unexpected("`}` or `:`");
    ASSIGN_OR_RETURN(Parsed value, ParseProc(kLevelPar));
    map->procs = {first.proc, value.proc};
    while (true) {
      if (Accept(Tok::kRBrace)) break;
      if (Peek().kind == Tok::kEllipsis) {
        ASSIGN_OR_RETURN(map->remainder, ParseProcRemainder());
        RETURN_IF_ERROR(Expect(Tok::kRBrace, "after the map remainder"));
        break;
      }
      if (!Accept(Tok::kComma)) return Unexpected("`,`, `...` or `}`");
      if (Peek().kind == Tok::kRBrace || Peek().kind == Tok::kEllipsis) {
        continue;
      }
      ASSIGN_OR_RETURN(Parsed k, ParseProc(kLevelPar));
      RETURN_IF_ERROR(Expect(Tok::kColon, "between a map key and its value"));
      ASSIGN_OR_RETURN(Parsed v, ParseProc(kLevelPar));
      map->procs.push_back(k.proc);
      map->procs.push_back(v.proc);
    }
    return Atom(map);
  }

  absl::StatusOr<const Proc*> ParseBlock(std::string_view context) {
    RETURN_IF_ERROR(Expect(Tok::kLBrace, context));
    ASSIGN_OR_RETURN(Parsed body, ParseProc(kLevelPar));
    RETURN_IF_ERROR(Expect(Tok::kRBrace, "to close the block"));
    return body.proc;
  }

  absl::StatusOr<Parsed> Low(Proc* p, int level) {
    ASSIGN_OR_RETURN(const Proc* done, Finish(p));
    return Parsed{done, level};
  }

  absl::StatusOr<Parsed> ParseNew() {
    Proc* p = NewProc(ProcKind::kNew, Take().pos);
    ast::ProcExtra* extra = arena_->NewExtra();
    p->extra = extra;
    while (true) {
      const Token& t = Peek();
      if (t.kind != Tok::kIdent) return Unexpected("a name to declare");
      ast::NewDecl decl;
      decl.pos = t.pos;
      decl.var = std::string(Take().text);
      if (Accept(Tok::kLParen)) {
        if (Peek().kind != Tok::kUri) return Unexpected("a URI in backticks");
        decl.has_uri = true;
        decl.uri = Take().value;
        RETURN_IF_ERROR(Expect(Tok::kRParen, "after the URI"));
      }
      extra->decls.push_back(std::move(decl));
      if (!Accept(Tok::kComma)) break;
    }
    RETURN_IF_ERROR(Expect(Tok::kIn, "after the declared names"));
    ASSIGN_OR_RETURN(Parsed body, ParseProc(kLevelNew));
    p->body = body.proc;
    return Low(p, kLevelNew);
  }

  absl::StatusOr<Parsed> ParseIf() {
    Proc* p = NewProc(ProcKind::kIf, Take().pos);
    RETURN_IF_ERROR(Expect(Tok::kLParen, "after `if`"));
    ASSIGN_OR_RETURN(Parsed cond, ParseProc(kLevelPar));
    RETURN_IF_ERROR(Expect(Tok::kRParen, "after the condition"));
    ASSIGN_OR_RETURN(Parsed then_branch, ParseProc(kLevelFor));
    p->procs.push_back(cond.proc);
    p->body = then_branch.proc;
    if (Accept(Tok::kElse)) {
      ASSIGN_OR_RETURN(Parsed else_branch, ParseProc(kLevelNew));
      p->else_body = else_branch.proc;
    }
    return Low(p, kLevelNew);
  }

  // Names separated by commas with an optional `...@rest` remainder; stops
  // before any token that cannot continue the list.
  absl::Status ParseNamePattern(ast::NamePattern* out) {
    while (true) {
      Tok k = Peek().kind;
      if (k == Tok::kEllipsis) {
        Take();
        Accept(Tok::kAt);
        const Token& t = Peek();
        Name* n = arena_->NewName();
        n->pos = t.pos;
        if (t.kind == Tok::kIdent) {
          n->kind = NameKind::kVar;
          n->var = std::string(Take().text);
        } else if (t.kind == Tok::kWildcard) {
          Take();
          n->kind = NameKind::kWildcard;
        } else {
          return Unexpected("a variable or `_` after `...@`");
        }
        out->remainder = n;
        return absl::OkStatus();
      }
      if (k != Tok::kIdent && k != Tok::kWildcard && k != Tok::kAt) {
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(const Name* n, ParseName());
      out->names.push_back(n);
      if (!Accept(Tok::kComma) && Peek().kind != Tok::kEllipsis) {
        return absl::OkStatus();
      }
    }
  }

  absl::StatusOr<Parsed> ParseContract() {
    Proc* p = NewProc(ProcKind::kContract, Take().pos);
    ast::ProcExtra* extra = arena_->NewExtra();
    p->extra = extra;
    ASSIGN_OR_RETURN(p->name, ParseName());
    RETURN_IF_ERROR(Expect(Tok::kLParen, "after the contract name"));
    RETURN_IF_ERROR(ParseNamePattern(&extra->formals));
    RETURN_IF_ERROR(Expect(Tok::kRParen, "to close the contract's formals"));
    RETURN_IF_ERROR(Expect(Tok::kEq, "before the contract body"));
    ASSIGN_OR_RETURN(p->body, ParseBlock("to open the contract body"));
    return Low(p, kLevelFor);
  }

  absl::Status ParseBind(ast::Bind* bind) {
    bind->pos = Peek().pos;
    RETURN_IF_ERROR(ParseNamePattern(&bind->lhs));
    switch (Peek().kind) {
      case Tok::kLArrow:
        bind->kind = ast::BindKind::kLinear;
        break;
      case Tok::kLe:
        bind->kind = ast::BindKind::kRepeated;
        break;
      case Tok::kPeekArrow:
        bind->kind = ast::BindKind::kPeek;
        break;
      default:
        return Unexpected("`<-`, `<=` or `<<-` in a receipt");
    }
    Take();
    ASSIGN_OR_RETURN(bind->chan, ParseName());
    if (Accept(Tok::kQuestionBang)) {
      bind->source = ast::SourceKind::kReceiveSend;
    } else if (Accept(Tok::kBangQuestion)) {
      bind->source = ast::SourceKind::kSendReceive;
      RETURN_IF_ERROR(Expect(Tok::kLParen, "after `!?`"));
      RETURN_IF_ERROR(ParseArgs(Tok::kRParen, &bind->args));
    }
    if (bind->source != ast::SourceKind::kSimple &&
        bind->kind != ast::BindKind::kLinear) {
      return ErrorAt(bind->pos,
                     "`?!` and `!?` sources are allowed only with `<-`");
    }
    if (Peek().kind == Tok::kWhere) {
      return Unsupported(Peek().pos, "receive guards (`where`)");
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Parsed> ParseFor() {
    Proc* p = NewProc(ProcKind::kFor, Take().pos);
    ast::ProcExtra* extra = arena_->NewExtra();
    p->extra = extra;
    RETURN_IF_ERROR(Expect(Tok::kLParen, "after `for`"));
    extra->receipts.emplace_back();
    while (true) {
      ast::Bind bind;
      RETURN_IF_ERROR(ParseBind(&bind));
      extra->receipts.back().push_back(std::move(bind));
      if (Accept(Tok::kAmp)) continue;
      if (Accept(Tok::kSemi)) {
        extra->receipts.emplace_back();
        continue;
      }
      break;
    }
    RETURN_IF_ERROR(Expect(Tok::kRParen, "to close the receipts"));
    ASSIGN_OR_RETURN(p->body, ParseBlock("to open the `for` body"));
    return Low(p, kLevelFor);
  }

  absl::StatusOr<Parsed> ParseMatch() {
    Proc* p = NewProc(ProcKind::kMatch, Take().pos);
    ast::ProcExtra* extra = arena_->NewExtra();
    p->extra = extra;
    ASSIGN_OR_RETURN(Parsed target, ParseProc(4));
    p->procs.push_back(target.proc);
    RETURN_IF_ERROR(Expect(Tok::kLBrace, "to open the match cases"));
    do {
      ast::Case c;
      ASSIGN_OR_RETURN(Parsed pattern, ParseProc(4));
      c.pattern = pattern.proc;
      if (Peek().kind == Tok::kWhere) {
        return Unsupported(Peek().pos, "match guards (`where`)");
      }
      RETURN_IF_ERROR(Expect(Tok::kFatArrow, "after the case pattern"));
      ASSIGN_OR_RETURN(Parsed body, ParseProc(kLevelPar));
      c.body = body.proc;
      extra->cases.push_back(c);
    } while (Peek().kind != Tok::kRBrace && Peek().kind != Tok::kEof);
    RETURN_IF_ERROR(Expect(Tok::kRBrace, "to close the match"));
    return Low(p, kLevelFor);
  }

  absl::StatusOr<Parsed> ParseLet() {
    Proc* p = NewProc(ProcKind::kLet, Take().pos);
    ast::ProcExtra* extra = arena_->NewExtra();
    p->extra = extra;
    Tok separator = Tok::kEof;
    while (true) {
      ast::LetDecl decl;
      decl.pos = Peek().pos;
      RETURN_IF_ERROR(ParseNamePattern(&decl.lhs));
      if (decl.lhs.names.empty() && decl.lhs.remainder == nullptr) {
        return Unexpected("a name to bind in `let`");
      }
      if (!Accept(Tok::kLArrow) && !Accept(Tok::kEq)) {
        return Unexpected("`<-` or `=` in a `let` declaration");
      }
      while (true) {
        ASSIGN_OR_RETURN(Parsed v, ParseProc(kLevelPar));
        decl.rhs.push_back(v.proc);
        if (!Accept(Tok::kComma)) break;
      }
      extra->lets.push_back(std::move(decl));
      Tok k = Peek().kind;
      if (k != Tok::kSemi && k != Tok::kAmp) break;
      if (separator != Tok::kEof && separator != k) {
        return ErrorAt(Peek().pos,
                       "a `let` uses either `;` or `&` between declarations, "
                       "not both");
      }
      separator = k;
      Take();
    }
    p->let_concurrent = separator == Tok::kAmp;
    RETURN_IF_ERROR(Expect(Tok::kIn, "after the `let` declarations"));
    ASSIGN_OR_RETURN(Parsed body, ParseProc(kLevelNew));
    p->body = body.proc;
    return Low(p, kLevelFor);
  }

  absl::StatusOr<Parsed> ParseBundle() {
    const Token& t = Take();
    Proc* p = NewProc(ProcKind::kBundle, t.pos);
    p->bundle = t.kind == Tok::kBundlePlus    ? ast::BundleKind::kWrite
                : t.kind == Tok::kBundleMinus ? ast::BundleKind::kRead
                : t.kind == Tok::kBundleZero  ? ast::BundleKind::kNone
                                              : ast::BundleKind::kReadWrite;
    ASSIGN_OR_RETURN(p->body, ParseBlock("to open the bundle body"));
    return Low(p, kLevelFor);
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  ast::Arena* arena_;
  uint32_t depth_ = 0;
};

}  // namespace

absl::StatusOr<ParsedProgram> Parse(std::string_view source) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(source));
  ParsedProgram program;
  program.arena = std::make_unique<ast::Arena>();
  Parser parser(std::move(tokens), program.arena.get());
  ASSIGN_OR_RETURN(program.root, parser.Program());
  return program;
}

}  // namespace rnode::rholang
