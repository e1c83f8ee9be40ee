// Rholang abstract syntax tree with source positions, produced by the parser
// and consumed by the normalizer and the tests.
#ifndef RNODE_RHOLANG_AST_H_
#define RNODE_RHOLANG_AST_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace rnode::rholang::ast {

// A 1-based line and column (columns count bytes) into the source.
struct Pos {
  uint32_t line = 0;
  uint32_t col = 0;
};

enum class ProcKind : uint8_t {
  kNil,
  kBool,
  kInt,
  kString,
  kUri,
  kVar,         // text = name
  kWildcard,    // `_` as a process
  kSimpleType,  // simple_type
  kVarRef,      // `=x` (var_ref_name false) or `=*x` (true); text = name
  kPar,         // procs = components (flattened, two or more)
  kSend,        // name = channel, procs = arguments
  kSendSync,    // `x!?(args)`; body = continuation or nullptr
  kFor,         // extra->receipts, body
  kContract,    // name, extra->formals, body
  kNew,         // extra->decls, body
  kMatch,       // procs[0] = target, extra->cases
  kIf,          // procs[0] = condition, body, else_body (nullable)
  kLet,         // extra->lets, let_concurrent, body
  kBundle,      // bundle, body
  kEval,        // `*name`
  kMethod,      // procs[0] = target, procs[1..] = args, text = method
  kBinary,      // binary, procs = {lhs, rhs}
  kUnary,       // unary, procs = {operand}
  kMatches,     // procs = {target, pattern}
  kList,        // procs = elements, remainder (nullable)
  kTuple,       // procs = elements (one or more)
  kSet,         // procs = elements, remainder (nullable)
  kMap,         // procs = k0, v0, k1, v1, ...; remainder (nullable)
};

enum class BinaryOp : uint8_t {
  kOr,
  kAnd,
  kEq,
  kNeq,
  kLt,
  kLte,
  kGt,
  kGte,
  kAdd,
  kSub,
  kConcat,  // ++
  kDiff,    // --
  kMul,
  kDiv,
  kMod,
  kInterpolate,  // %%
  kConj,         // /\ (patterns only)
  kDisj,         // \/ (patterns only)
  kShortOr,      // || (evaluates its right side only when the left is false)
  kShortAnd,     // && (evaluates its right side only when the left is true)
};

enum class UnaryOp : uint8_t { kNot, kNeg, kConnNot };

enum class SimpleType : uint8_t { kBool, kInt, kString, kUri, kByteArray };

enum class BundleKind : uint8_t {
  kReadWrite,  // bundle
  kWrite,      // bundle+
  kRead,       // bundle-
  kNone,       // bundle0
};

enum class SendKind : uint8_t { kSingle, kPersistent };
enum class BindKind : uint8_t { kLinear, kRepeated, kPeek };
enum class SourceKind : uint8_t {
  kSimple,       // x
  kReceiveSend,  // x?!
  kSendReceive,  // x!?(args)
};
enum class NameKind : uint8_t { kVar, kWildcard, kQuote };

struct Proc;

struct Name {
  NameKind kind = NameKind::kVar;
  Pos pos;
  std::string var;              // kVar
  const Proc* quote = nullptr;  // kQuote
};

// A list of name patterns with an optional `...@rest` remainder (a kVar or
// kWildcard name).
struct NamePattern {
  std::vector<const Name*> names;
  const Name* remainder = nullptr;
};

struct Bind {
  BindKind kind = BindKind::kLinear;
  Pos pos;
  NamePattern lhs;
  SourceKind source = SourceKind::kSimple;
  const Name* chan = nullptr;
  std::vector<const Proc*> args;  // kSendReceive
};

struct NewDecl {
  std::string var;
  bool has_uri = false;
  std::string uri;
  Pos pos;
};

struct Case {
  const Proc* pattern = nullptr;
  const Proc* body = nullptr;
};

struct LetDecl {
  Pos pos;
  NamePattern lhs;
  std::vector<const Proc*> rhs;
};

// The parts of a process only a few kinds use, kept out of line.
struct ProcExtra {
  std::vector<std::vector<Bind>> receipts;  // kFor: `;`-separated groups
  NamePattern formals;                      // kContract
  std::vector<NewDecl> decls;               // kNew
  std::vector<Case> cases;                  // kMatch
  std::vector<LetDecl> lets;                // kLet
};

struct Proc {
  ProcKind kind = ProcKind::kNil;
  Pos pos;
  // Longest chain of nested nodes below and including this one; the parser
  // keeps it under kMaxNestingDepth so every later walk is bounded.
  uint32_t height = 1;
  bool bool_value = false;
  bool var_ref_name = false;    // kVarRef: `=*x`
  bool let_concurrent = false;  // kLet: `&` between declarations
  BinaryOp binary = BinaryOp::kOr;
  UnaryOp unary = UnaryOp::kNot;
  SimpleType simple_type = SimpleType::kBool;
  BundleKind bundle = BundleKind::kReadWrite;
  SendKind send = SendKind::kSingle;
  int64_t int_value = 0;
  std::string text;
  const Name* name = nullptr;
  std::vector<const Proc*> procs;
  const Proc* body = nullptr;
  const Proc* else_body = nullptr;
  const Proc* remainder = nullptr;  // kVar or kWildcard
  const ProcExtra* extra = nullptr;
};

// Owns every node of one parsed program; nodes never move (deque storage),
// so the raw pointers between them stay valid for the arena's lifetime.
// Not thread-safe while being built; read-only use may be shared.
class Arena {
 public:
  Proc* NewProc() { return &procs_.emplace_back(); }
  Name* NewName() { return &names_.emplace_back(); }
  ProcExtra* NewExtra() { return &extras_.emplace_back(); }
  size_t node_count() const { return procs_.size() + names_.size(); }

 private:
  std::deque<Proc> procs_;
  std::deque<Name> names_;
  std::deque<ProcExtra> extras_;
};

}  // namespace rnode::rholang::ast

#endif  // RNODE_RHOLANG_AST_H_
