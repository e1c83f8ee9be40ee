// Rholang normalizer: scopes, free-variable maps, desugarings and the
// construction of canonical IR nodes.
#include "rholang/frontend/normalizer.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/internal/desugar.h"
#include "rholang/frontend/limits.h"
#include "rholang/frontend/parser.h"
#include "util/status_macros.h"

namespace rnode::rholang {
namespace {

using ast::NameKind;
using ast::ProcKind;
using ir::ParPtr;

// Recursion bound of the normalizer: desugarings add a few synthetic levels
// per syntax level, so allow 4x the parser's nesting bound.
constexpr uint32_t kMaxNormalizeDepth = 4 * kMaxNestingDepth;

enum class Sort : uint8_t { kProc, kName };

struct Binding {
  std::string name;
  Sort sort;
  ast::Pos pos;
};

enum class ConnectiveUse : uint8_t { kAnd, kOr, kNot };

// The free variables, wildcards and connectives of the pattern being
// normalized (or of the top level, where any of them is an error).
struct FreeMap {
  std::vector<Binding> vars;  // level = position
  size_t wildcards = 0;
  std::vector<std::pair<ConnectiveUse, ast::Pos>> connectives;

  const Binding* Find(std::string_view name) const {
    for (const Binding& b : vars) {
      if (b.name == name) return &b;
    }
    return nullptr;
  }
};

std::string PosText(ast::Pos p) { return absl::StrCat(p.line, ":", p.col); }

ir::ExprKind BinaryKind(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::kOr:
      return ir::ExprKind::kOr;
    case ast::BinaryOp::kAnd:
      return ir::ExprKind::kAnd;
    case ast::BinaryOp::kShortOr:
      return ir::ExprKind::kShortOr;
    case ast::BinaryOp::kShortAnd:
      return ir::ExprKind::kShortAnd;
    case ast::BinaryOp::kEq:
      return ir::ExprKind::kEq;
    case ast::BinaryOp::kNeq:
      return ir::ExprKind::kNeq;
    case ast::BinaryOp::kLt:
      return ir::ExprKind::kLt;
    case ast::BinaryOp::kLte:
      return ir::ExprKind::kLte;
    case ast::BinaryOp::kGt:
      return ir::ExprKind::kGt;
    case ast::BinaryOp::kGte:
      return ir::ExprKind::kGte;
    case ast::BinaryOp::kAdd:
      return ir::ExprKind::kAdd;
    case ast::BinaryOp::kSub:
      return ir::ExprKind::kSub;
    case ast::BinaryOp::kConcat:
      return ir::ExprKind::kPlusPlus;
    case ast::BinaryOp::kDiff:
      return ir::ExprKind::kMinusMinus;
    case ast::BinaryOp::kMul:
      return ir::ExprKind::kMul;
    case ast::BinaryOp::kDiv:
      return ir::ExprKind::kDiv;
    case ast::BinaryOp::kMod:
      return ir::ExprKind::kMod;
    case ast::BinaryOp::kInterpolate:
      return ir::ExprKind::kPercentPercent;
    case ast::BinaryOp::kConj:
    case ast::BinaryOp::kDisj:
      break;
  }
  return ir::ExprKind::kEq;  // connectives are handled by the caller
}

class Normalizer {
 public:
  explicit Normalizer(const NormalizerEnv& env) : env_(env) {
    chain_.emplace_back();
    free_ = &root_free_;
  }

  absl::StatusOr<ParPtr> Run(const ast::Proc& root) {
    ASSIGN_OR_RETURN(ParPtr par, ProcToPar(root));
    if (par->height > kMaxIrDepth) {
      return DiagnosticError(
          absl::StatusCode::kResourceExhausted, root.pos.line, root.pos.col,
          absl::StrCat("normalized term deeper than ", kMaxIrDepth, " levels"));
    }
    return par;
  }

 private:
  class DepthGuard {
   public:
    explicit DepthGuard(Normalizer* n) : n_(n) { ++n_->depth_; }
    ~DepthGuard() { --n_->depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Normalizer* n_;
  };

  // Swaps in a fresh scope and free map for a pattern; restores both on
  // destruction.
  class PatternScope {
   public:
    PatternScope(Normalizer* n, FreeMap* fresh) : n_(n), saved_(n->free_) {
      n_->chain_.emplace_back();
      n_->free_ = fresh;
    }
    ~PatternScope() {
      n_->chain_.pop_back();
      n_->free_ = saved_;
    }
    PatternScope(const PatternScope&) = delete;
    PatternScope& operator=(const PatternScope&) = delete;

   private:
    Normalizer* n_;
    FreeMap* saved_;
  };

  // Swaps in a fresh free map only (for `\/` and `~`, whose variables are
  // never bound).
  class FreeMapSwap {
   public:
    FreeMapSwap(Normalizer* n, FreeMap* fresh) : n_(n), saved_(n->free_) {
      n_->free_ = fresh;
    }
    ~FreeMapSwap() { n_->free_ = saved_; }
    FreeMapSwap(const FreeMapSwap&) = delete;
    FreeMapSwap& operator=(const FreeMapSwap&) = delete;

   private:
    Normalizer* n_;
    FreeMap* saved_;
  };

  static absl::Status Error(ast::Pos pos, std::string msg) {
    return DiagnosticError(absl::StatusCode::kInvalidArgument, pos.line,
                           pos.col, std::move(msg));
  }

  bool InPattern() const { return free_ != &root_free_; }
  std::vector<Binding>& Scope() { return chain_.back(); }

  // The innermost binding of `name` in the current scope, as an index.
  const Binding* LookupBound(std::string_view name, uint32_t* index) {
    const std::vector<Binding>& scope = chain_.back();
    for (size_t i = scope.size(); i-- > 0;) {
      if (scope[i].name == name) {
        *index = static_cast<uint32_t>(scope.size() - 1 - i);
        return &scope[i];
      }
    }
    return nullptr;
  }

  // Registers a new free variable in the current pattern.
  absl::StatusOr<ir::Var> AddFree(const std::string& name, Sort sort,
                                  ast::Pos pos) {
    if (!InPattern()) {
      return Error(pos, absl::StrCat("unbound variable `", name,
                                     "` (free variables are allowed only in "
                                     "patterns)"));
    }
    if (const Binding* first = free_->Find(name)) {
      return Error(pos, absl::StrCat("variable `", name,
                                     "` is bound twice in one pattern "
                                     "(first at ",
                                     PosText(first->pos), ")"));
    }
    free_->vars.push_back({name, sort, pos});
    return ir::Var{ir::VarKind::kFree,
                   static_cast<uint32_t>(free_->vars.size() - 1)};
  }

  absl::StatusOr<ir::Var> AddWildcard(ast::Pos pos) {
    if (!InPattern()) {
      return Error(pos, "wildcard `_` outside a pattern");
    }
    ++free_->wildcards;
    return ir::Var{ir::VarKind::kWildcard, 0};
  }

  absl::Status NoteConnective(ConnectiveUse use, ast::Pos pos,
                              std::string_view what) {
    if (!InPattern()) {
      return Error(pos, absl::StrCat("logical connective ", std::string(what),
                                     " outside a pattern"));
    }
    free_->connectives.emplace_back(use, pos);
    return absl::OkStatus();
  }

  absl::StatusOr<ParPtr> ProcToPar(const ast::Proc& p) {
    ir::ParBuilder b;
    RETURN_IF_ERROR(Proc(p, b));
    return b.Build();
  }

  absl::StatusOr<std::vector<ParPtr>> ProcsToPars(
      const std::vector<const ast::Proc*>& procs) {
    std::vector<ParPtr> out;
    out.reserve(procs.size());
    for (const ast::Proc* p : procs) {
      ASSIGN_OR_RETURN(ParPtr par, ProcToPar(*p));
      out.push_back(std::move(par));
    }
    return out;
  }

  absl::StatusOr<ParPtr> NameToPar(const ast::Name& n) {
    switch (n.kind) {
      case NameKind::kWildcard: {
        ASSIGN_OR_RETURN(ir::Var v, AddWildcard(n.pos));
        return ir::VarPar(v);
      }
      case NameKind::kVar: {
        uint32_t index = 0;
        if (const Binding* b = LookupBound(n.var, &index)) {
          if (b->sort != Sort::kName) {
            return Error(
                n.pos, absl::StrCat("process variable `", n.var,
                                    "` used as a name; write `@", n.var, "`"));
          }
          return ir::VarPar({ir::VarKind::kBound, index});
        }
        ASSIGN_OR_RETURN(ir::Var v, AddFree(n.var, Sort::kName, n.pos));
        return ir::VarPar(v);
      }
      case NameKind::kQuote:
        return ProcToPar(*n.quote);
    }
    return Error(n.pos, "unknown name form");
  }

  absl::StatusOr<std::optional<ir::Var>> ProcRemainder(const ast::Proc* r) {
    if (r == nullptr) return std::optional<ir::Var>();
    if (r->kind == ProcKind::kWildcard) {
      ASSIGN_OR_RETURN(ir::Var v, AddWildcard(r->pos));
      return std::optional<ir::Var>(v);
    }
    ASSIGN_OR_RETURN(ir::Var v, AddFree(r->text, Sort::kProc, r->pos));
    return std::optional<ir::Var>(v);
  }

  absl::StatusOr<std::optional<ir::Var>> NameRemainder(const ast::Name* r) {
    if (r == nullptr) return std::optional<ir::Var>();
    if (r->kind == NameKind::kWildcard) {
      ASSIGN_OR_RETURN(ir::Var v, AddWildcard(r->pos));
      return std::optional<ir::Var>(v);
    }
    ASSIGN_OR_RETURN(ir::Var v, AddFree(r->var, Sort::kProc, r->pos));
    return std::optional<ir::Var>(v);
  }

  // Dispatches on the process kind. Every case with locals lives in its own
  // non-inlined helper so the frames on the recursion path stay small (the
  // deepest accepted program must fit the stack in sanitizer builds too).
  absl::Status Proc(const ast::Proc& p, ir::ParBuilder& out) {
    DepthGuard guard(this);
    if (depth_ > kMaxNormalizeDepth) return TooDeep(p);
    switch (p.kind) {
      case ProcKind::kNil:
        return absl::OkStatus();
      case ProcKind::kBool:
      case ProcKind::kInt:
      case ProcKind::kString:
      case ProcKind::kUri:
        return Ground(p, out);
      case ProcKind::kVar:
        return Var(p, out);
      case ProcKind::kWildcard:
        return Wildcard(p, out);
      case ProcKind::kSimpleType:
        return SimpleType(p, out);
      case ProcKind::kVarRef:
        return VarRef(p, out);
      case ProcKind::kPar:
        for (const ast::Proc* c : p.procs) RETURN_IF_ERROR(Proc(*c, out));
        return absl::OkStatus();
      case ProcKind::kSend:
        return Send(p, out);
      case ProcKind::kSendSync:
        return Proc(*desugar_.SendSync(p), out);
      case ProcKind::kFor:
        return For(p, out);
      case ProcKind::kContract:
        return Contract(p, out);
      case ProcKind::kNew:
        return New(p, out);
      case ProcKind::kMatch:
        return Match(p, out);
      case ProcKind::kIf:
        return If(p, out);
      case ProcKind::kLet:
        return Proc(*desugar_.Let(p), out);
      case ProcKind::kBundle:
        return Bundle(p, out);
      case ProcKind::kEval:
        return Eval(p, out);
      case ProcKind::kMethod:
        return Method(p, out);
      case ProcKind::kBinary:
        return Binary(p, out);
      case ProcKind::kUnary:
        return Unary(p, out);
      case ProcKind::kMatches:
        return Matches(p, out);
      case ProcKind::kList:
      case ProcKind::kTuple:
      case ProcKind::kSet:
      case ProcKind::kMap:
        return Collection(p, out);
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status TooDeep(const ast::Proc& p) {
    return DiagnosticError(
        absl::StatusCode::kResourceExhausted, p.pos.line, p.pos.col,
        absl::StrCat("nesting deeper than ", kMaxNormalizeDepth,
                     " levels after desugaring"));
  }

  [[gnu::noinline]] absl::Status Ground(const ast::Proc& p,
                                        ir::ParBuilder& out) {
    switch (p.kind) {
      case ProcKind::kBool:
        out.Add(ir::Expr::Bool(p.bool_value));
        break;
      case ProcKind::kInt:
        out.Add(ir::Expr::Int(p.int_value));
        break;
      case ProcKind::kString:
        out.Add(ir::Expr::String(p.text));
        break;
      default:
        out.Add(ir::Expr::Uri(p.text));
        break;
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Wildcard(const ast::Proc& p,
                                          ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ir::Var v, AddWildcard(p.pos));
    out.Add(ir::Expr::Variable(v));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Send(const ast::Proc& p, ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ParPtr chan, NameToPar(*p.name));
    ASSIGN_OR_RETURN(std::vector<ParPtr> data, ProcsToPars(p.procs));
    out.Add(ir::Send::Make(std::move(chan), std::move(data),
                           p.send == ast::SendKind::kPersistent));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Contract(const ast::Proc& p,
                                          ir::ParBuilder& out) {
    ast::Bind bind;
    bind.kind = ast::BindKind::kRepeated;
    bind.pos = p.pos;
    bind.lhs = p.extra->formals;
    bind.chan = p.name;
    return Receive({&bind}, *p.body, out);
  }

  [[gnu::noinline]] absl::Status If(const ast::Proc& p, ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ParPtr cond, ProcToPar(*p.procs[0]));
    ASSIGN_OR_RETURN(ParPtr yes, ProcToPar(*p.body));
    ParPtr no = ir::Nil();
    if (p.else_body != nullptr) {
      ASSIGN_OR_RETURN(no, ProcToPar(*p.else_body));
    }
    out.Add(ir::If::Make(std::move(cond), std::move(yes), std::move(no)));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Eval(const ast::Proc& p, ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ParPtr name, NameToPar(*p.name));
    out.AddAll(*name);
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Method(const ast::Proc& p,
                                        ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ParPtr target, ProcToPar(*p.procs[0]));
    std::vector<const ast::Proc*> args(p.procs.begin() + 1, p.procs.end());
    ASSIGN_OR_RETURN(std::vector<ParPtr> argv, ProcsToPars(args));
    out.Add(ir::Expr::Method(p.text, std::move(target), std::move(argv)));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Matches(const ast::Proc& p,
                                         ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ParPtr target, ProcToPar(*p.procs[0]));
    FreeMap pattern_free;
    ParPtr pattern;
    {
      PatternScope scope(this, &pattern_free);
      ASSIGN_OR_RETURN(pattern, ProcToPar(*p.procs[1]));
    }
    out.Add(ir::Expr::Binary(ir::ExprKind::kMatches, std::move(target),
                             std::move(pattern)));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Collection(const ast::Proc& p,
                                            ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(std::vector<ParPtr> ps, ProcsToPars(p.procs));
    if (p.kind == ProcKind::kTuple) {
      out.Add(ir::Expr::Tuple(std::move(ps)));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<ir::Var> rem, ProcRemainder(p.remainder));
    if (p.kind == ProcKind::kList) {
      out.Add(ir::Expr::List(std::move(ps), rem));
    } else if (p.kind == ProcKind::kSet) {
      out.Add(ir::Expr::Set(std::move(ps), rem));
    } else {
      std::vector<std::pair<ParPtr, ParPtr>> kvs;
      for (size_t i = 0; i + 1 < ps.size(); i += 2) {
        kvs.emplace_back(std::move(ps[i]), std::move(ps[i + 1]));
      }
      out.Add(ir::Expr::Map(std::move(kvs), rem));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Var(const ast::Proc& p, ir::ParBuilder& out) {
    uint32_t index = 0;
    if (const Binding* b = LookupBound(p.text, &index)) {
      if (b->sort != Sort::kProc) {
        return Error(
            p.pos, absl::StrCat("name variable `", p.text,
                                "` used as a process; write `*", p.text, "`"));
      }
      out.Add(ir::Expr::Variable({ir::VarKind::kBound, index}));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(ir::Var v, AddFree(p.text, Sort::kProc, p.pos));
    out.Add(ir::Expr::Variable(v));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status SimpleType(const ast::Proc& p,
                                            ir::ParBuilder& out) {
    if (!InPattern()) {
      return Error(p.pos, "simple type used outside a pattern");
    }
    ir::ConnectiveKind k = ir::ConnectiveKind::kBool;
    switch (p.simple_type) {
      case ast::SimpleType::kBool:
        k = ir::ConnectiveKind::kBool;
        break;
      case ast::SimpleType::kInt:
        k = ir::ConnectiveKind::kInt;
        break;
      case ast::SimpleType::kString:
        k = ir::ConnectiveKind::kString;
        break;
      case ast::SimpleType::kUri:
        k = ir::ConnectiveKind::kUri;
        break;
      case ast::SimpleType::kByteArray:
        k = ir::ConnectiveKind::kByteArray;
        break;
    }
    out.Add(ir::Connective::Make(k, {}));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status VarRef(const ast::Proc& p,
                                        ir::ParBuilder& out) {
    for (size_t k = chain_.size(); k-- > 0;) {
      const std::vector<Binding>& scope = chain_[k];
      for (size_t i = scope.size(); i-- > 0;) {
        if (scope[i].name != p.text) continue;
        Sort want = p.var_ref_name ? Sort::kName : Sort::kProc;
        if (scope[i].sort != want) {
          return Error(p.pos,
                       p.var_ref_name
                           ? absl::StrCat("`=*", p.text,
                                          "` refers to a process variable; "
                                          "write `=",
                                          p.text, "`")
                           : absl::StrCat("`=", p.text,
                                          "` refers to a name variable; "
                                          "write `=*",
                                          p.text, "`"));
        }
        auto index = static_cast<uint32_t>(scope.size() - 1 - i);
        auto depth = static_cast<uint32_t>(chain_.size() - 1 - k);
        out.Add(ir::Connective::VarRef(index, depth, k == 0));
        return absl::OkStatus();
      }
    }
    return Error(p.pos, absl::StrCat("`=", p.var_ref_name ? "*" : "", p.text,
                                     "` refers to an unbound variable"));
  }

  [[gnu::noinline]] absl::Status Binary(const ast::Proc& p,
                                        ir::ParBuilder& out) {
    bool conj = p.binary == ast::BinaryOp::kConj;
    if (conj || p.binary == ast::BinaryOp::kDisj) {
      RETURN_IF_ERROR(
          NoteConnective(conj ? ConnectiveUse::kAnd : ConnectiveUse::kOr, p.pos,
                         conj ? "`/\\`" : "`\\/`"));
      ir::ConnectiveKind kind =
          conj ? ir::ConnectiveKind::kAnd : ir::ConnectiveKind::kOr;
      std::vector<ParPtr> ps;
      for (const ast::Proc* side : p.procs) {
        ParPtr par;
        if (conj) {
          ASSIGN_OR_RETURN(par, ProcToPar(*side));
        } else {
          FreeMap fresh;
          FreeMapSwap swap(this, &fresh);
          ASSIGN_OR_RETURN(par, ProcToPar(*side));
        }
        // Flatten a left-nested chain of the same connective.
        if (ps.empty() && par->ComponentCount() == 1 &&
            par->connectives.size() == 1 && par->connectives[0]->kind == kind) {
          ps = par->connectives[0]->ps;
          continue;
        }
        ps.push_back(std::move(par));
      }
      out.Add(ir::Connective::Make(kind, std::move(ps)));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(ParPtr a, ProcToPar(*p.procs[0]));
    ASSIGN_OR_RETURN(ParPtr b, ProcToPar(*p.procs[1]));
    out.Add(ir::Expr::Binary(BinaryKind(p.binary), std::move(a), std::move(b)));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Unary(const ast::Proc& p,
                                       ir::ParBuilder& out) {
    if (p.unary == ast::UnaryOp::kConnNot) {
      RETURN_IF_ERROR(NoteConnective(ConnectiveUse::kNot, p.pos, "`~`"));
      FreeMap fresh;
      ParPtr body;
      {
        FreeMapSwap swap(this, &fresh);
        ASSIGN_OR_RETURN(body, ProcToPar(*p.procs[0]));
      }
      out.Add(
          ir::Connective::Make(ir::ConnectiveKind::kNot, {std::move(body)}));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(ParPtr operand, ProcToPar(*p.procs[0]));
    out.Add(ir::Expr::Unary(
        p.unary == ast::UnaryOp::kNot ? ir::ExprKind::kNot : ir::ExprKind::kNeg,
        std::move(operand)));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Bundle(const ast::Proc& p,
                                        ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ParPtr body, ProcToPar(*p.body));
    if (body->connective_used) {
      return Error(p.pos,
                   "bundle contents must not contain free variables, "
                   "wildcards or logical connectives");
    }
    bool write = p.bundle == ast::BundleKind::kReadWrite ||
                 p.bundle == ast::BundleKind::kWrite;
    bool read = p.bundle == ast::BundleKind::kReadWrite ||
                p.bundle == ast::BundleKind::kRead;
    out.Add(ir::Bundle::Make(std::move(body), write, read));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status New(const ast::Proc& p, ir::ParBuilder& out) {
    const std::vector<ast::NewDecl>& decls = p.extra->decls;
    std::vector<const ast::NewDecl*> order;
    for (const ast::NewDecl& d : decls) {
      if (!d.has_uri) order.push_back(&d);
    }
    std::vector<const ast::NewDecl*> with_uri;
    for (const ast::NewDecl& d : decls) {
      if (d.has_uri) with_uri.push_back(&d);
    }
    std::stable_sort(with_uri.begin(), with_uri.end(),
                     [](const ast::NewDecl* a, const ast::NewDecl* b) {
                       return a->uri < b->uri;
                     });
    std::vector<std::string> uris;
    std::vector<std::pair<std::string, ParPtr>> injections;
    for (const ast::NewDecl* d : with_uri) {
      order.push_back(d);
      uris.push_back(d->uri);
      auto it = env_.injections.find(d->uri);
      if (it != env_.injections.end() &&
          (injections.empty() || injections.back().first != d->uri)) {
        injections.emplace_back(it->first, it->second);
      }
    }
    std::vector<Binding>& scope = Scope();
    size_t mark = scope.size();
    for (const ast::NewDecl* d : order) {
      scope.push_back({d->var, Sort::kName, d->pos});
    }
    absl::StatusOr<ParPtr> body = ProcToPar(*p.body);
    Scope().resize(mark);
    if (!body.ok()) return body.status();
    out.Add(ir::New::Make(static_cast<uint32_t>(order.size()), *std::move(body),
                          std::move(uris), std::move(injections)));
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status Match(const ast::Proc& p,
                                       ir::ParBuilder& out) {
    ASSIGN_OR_RETURN(ParPtr target, ProcToPar(*p.procs[0]));
    std::vector<ir::MatchCase> cases;
    for (const ast::Case& c : p.extra->cases) {
      FreeMap pattern_free;
      ParPtr pattern;
      {
        PatternScope scope(this, &pattern_free);
        ASSIGN_OR_RETURN(pattern, ProcToPar(*c.pattern));
      }
      ASSIGN_OR_RETURN(ParPtr body, WithBindings(pattern_free.vars, *c.body));
      cases.push_back({std::move(pattern), std::move(body),
                       static_cast<uint32_t>(pattern_free.vars.size())});
    }
    out.Add(ir::Match::Make(std::move(target), std::move(cases)));
    return absl::OkStatus();
  }

  // Normalizes `body` with `vars` bound (in order) in the current scope.
  absl::StatusOr<ParPtr> WithBindings(const std::vector<Binding>& vars,
                                      const ast::Proc& body) {
    std::vector<Binding>& scope = Scope();
    size_t mark = scope.size();
    scope.insert(scope.end(), vars.begin(), vars.end());
    absl::StatusOr<ParPtr> result = ProcToPar(body);
    Scope().resize(mark);
    return result;
  }

  [[gnu::noinline]] absl::Status For(const ast::Proc& p, ir::ParBuilder& out) {
    const auto& receipts = p.extra->receipts;
    if (receipts.size() > 1) return Proc(*desugar_.Sequential(p), out);
    bool complex = false;
    for (const ast::Bind& b : receipts[0]) {
      complex = complex || b.source != ast::SourceKind::kSimple;
    }
    if (complex) return Proc(*desugar_.ComplexSources(p), out);
    std::vector<const ast::Bind*> binds;
    for (const ast::Bind& b : receipts[0]) binds.push_back(&b);
    return Receive(binds, *p.body, out);
  }

  [[gnu::noinline]] absl::Status Receive(
      const std::vector<const ast::Bind*>& binds, const ast::Proc& body,
      ir::ParBuilder& out) {
    bool top_level_receive = chain_.size() == 1;
    std::vector<ir::ReceiveBind> ir_binds;
    std::vector<FreeMap> bind_free(binds.size());
    for (size_t i = 0; i < binds.size(); ++i) {
      const ast::Bind& b = *binds[i];
      ir::ReceiveBind rb;
      {
        PatternScope scope(this, &bind_free[i]);
        for (const ast::Name* n : b.lhs.names) {
          ASSIGN_OR_RETURN(ParPtr pat, NameToPar(*n));
          rb.patterns.push_back(std::move(pat));
        }
        ASSIGN_OR_RETURN(rb.remainder, NameRemainder(b.lhs.remainder));
      }
      if (top_level_receive) {
        for (const auto& [use, cpos] : bind_free[i].connectives) {
          if (use != ConnectiveUse::kAnd) {
            return Error(cpos, use == ConnectiveUse::kOr
                                   ? "`\\/` is not allowed in receive patterns "
                                     "(only `/\\` is)"
                                   : "`~` is not allowed in receive patterns "
                                     "(only `/\\` is)");
          }
        }
      }
      rb.free_count = static_cast<uint32_t>(bind_free[i].vars.size());
      ir_binds.push_back(std::move(rb));
    }
    for (size_t i = 0; i < binds.size(); ++i) {
      ASSIGN_OR_RETURN(ir_binds[i].source, NameToPar(*binds[i]->chan));
    }
    for (size_t i = 0; i < ir_binds.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (ir_binds[i].source->hash == ir_binds[j].source->hash) {
          return Error(binds[i]->pos,
                       "a join receives twice on the same channel");
        }
      }
    }
    std::vector<size_t> order = ir::SortBinds(ir_binds);
    std::vector<Binding> bound;
    for (size_t i : order) {
      for (const Binding& v : bind_free[i].vars) {
        for (const Binding& seen : bound) {
          if (seen.name == v.name) {
            bool v_later = std::make_pair(v.pos.line, v.pos.col) >
                           std::make_pair(seen.pos.line, seen.pos.col);
            ast::Pos second = v_later ? v.pos : seen.pos;
            ast::Pos first = v_later ? seen.pos : v.pos;
            return Error(second, absl::StrCat("variable `", v.name,
                                              "` is bound twice in one join "
                                              "(first at ",
                                              PosText(first), ")"));
          }
        }
        bound.push_back(v);
      }
    }
    ASSIGN_OR_RETURN(ParPtr body_par, WithBindings(bound, body));
    ast::BindKind kind = binds[0]->kind;
    out.Add(ir::Receive::Make(std::move(ir_binds), std::move(body_par),
                              kind == ast::BindKind::kRepeated,
                              kind == ast::BindKind::kPeek,
                              static_cast<uint32_t>(bound.size())));
    return absl::OkStatus();
  }

  const NormalizerEnv& env_;
  std::vector<std::vector<Binding>> chain_;  // back() is the current scope
  FreeMap root_free_;
  FreeMap* free_;
  // Sugar rewritten as synthetic syntax (it owns those nodes).
  internal::Desugarer desugar_;
  uint32_t depth_ = 0;
};

}  // namespace

absl::StatusOr<ir::ParPtr> Normalize(const ast::Proc& root,
                                     const NormalizerEnv& env) {
  Normalizer n(env);
  return n.Run(root);
}

absl::StatusOr<ir::ParPtr> Compile(std::string_view source,
                                   const NormalizerEnv& env) {
  ASSIGN_OR_RETURN(ParsedProgram program, Parse(source));
  return Normalize(*program.root, env);
}

}  // namespace rnode::rholang
