// The canonical Rholang IR: immutable, structurally hashed terms produced by
// the normalizer and shared by the interpreter and RSpace. Format and order:
// docs/formats/rholang_ir.md.
//
// Every node is built by its Make* factory (never by hand), which computes the
// derived data once: the node hash (Blake2b-256 over the node's shallow
// encoding, children by hash; a one-component Par shares its component's
// hash), the height, `locally_free` (free de Bruijn
// indices) and `connective_used` (the term is a pattern: it holds free
// variables, wildcards or connectives). Nodes are held by
// std::shared_ptr<const T>, never change after construction and may be
// shared freely between threads. Two terms are equal iff their hashes are
// equal.
#ifndef RNODE_RHOLANG_IR_H_
#define RNODE_RHOLANG_IR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/bytes.h"

namespace rnode::rholang::ir {

// A set of de Bruijn indices (small, dense bitset).
class IndexSet {
 public:
  void Add(uint32_t index);
  void UnionWith(const IndexSet& other);
  bool Contains(uint32_t index) const;
  bool empty() const { return words_.empty(); }
  // The indices >= n, each lowered by n: what stays free outside a binder
  // of n variables.
  IndexSet ShiftedDown(uint32_t n) const;
  std::vector<uint32_t> ToVector() const;
  bool operator==(const IndexSet& o) const { return words_ == o.words_; }

 private:
  std::vector<uint64_t> words_;  // no trailing zero words
};

class Par;
struct Send;
struct Receive;
struct New;
struct Expr;
struct Match;
struct Unforgeable;
struct Bundle;
struct Connective;
struct If;
using ParPtr = std::shared_ptr<const Par>;
using SendPtr = std::shared_ptr<const Send>;
using ReceivePtr = std::shared_ptr<const Receive>;
using NewPtr = std::shared_ptr<const New>;
using ExprPtr = std::shared_ptr<const Expr>;
using MatchPtr = std::shared_ptr<const Match>;
using UnforgeablePtr = std::shared_ptr<const Unforgeable>;
using BundlePtr = std::shared_ptr<const Bundle>;
using ConnectivePtr = std::shared_ptr<const Connective>;
using IfPtr = std::shared_ptr<const If>;

// Fields every node carries, filled by its factory.
struct NodeInfo {
  Hash32 hash{};
  uint32_t height = 1;
  // Weight of the fully expanded tree rooted here (shared subterms counted
  // once per occurrence): 1 per node plus the bytes of its text (String,
  // Uri, ByteArray, method name), unforgeable id and `new` URIs, plus the
  // children's `size`, saturating at UINT64_MAX. Nil is 1; `[1]`
  // (Par(Expr list(Par(Expr int)))) is 4; `"abc"` is 5. Bounds the work of
  // any walk over the expansion (encoders, printers). Derived data: not
  // hashed, not encoded.
  uint64_t size = 1;
  IndexSet locally_free;
  bool connective_used = false;
};

enum class VarKind : uint8_t { kBound = 0, kFree = 1, kWildcard = 2 };

struct Var {
  VarKind kind = VarKind::kWildcard;
  uint32_t index = 0;  // de Bruijn index (bound) or capture level (free)
  bool operator==(const Var& o) const {
    return kind == o.kind && index == o.index;
  }
};

struct Send : NodeInfo {
  ParPtr chan;
  std::vector<ParPtr> data;
  bool persistent = false;
  static SendPtr Make(ParPtr chan, std::vector<ParPtr> data, bool persistent);
};

struct ReceiveBind {
  std::vector<ParPtr> patterns;
  ParPtr source;
  std::optional<Var> remainder;  // kFree or kWildcard
  uint32_t free_count = 0;       // captures of this bind's patterns
};

struct Receive : NodeInfo {
  std::vector<ReceiveBind> binds;  // in canonical order
  ParPtr body;
  bool persistent = false;
  bool peek = false;
  uint32_t bind_count = 0;  // variables the body sees bound
  // `binds` must already be in canonical order (see SortBinds): the body's
  // numbering depends on it.
  static ReceivePtr Make(std::vector<ReceiveBind> binds, ParPtr body,
                         bool persistent, bool peek, uint32_t bind_count);
};

// Sorts receive binds into canonical order (by bind hash), returning the
// permutation applied (result[i] = original position of the i-th bind).
std::vector<size_t> SortBinds(std::vector<ReceiveBind>& binds);

struct New : NodeInfo {
  uint32_t bind_count = 0;  // plain names first, then URI names
  ParPtr body;
  std::vector<std::string> uris;  // sorted; bound after the plain names
  // Deploy-environment values for URIs (sorted by key), copied from the
  // normalizer environment.
  std::vector<std::pair<std::string, ParPtr>> injections;
  static NewPtr Make(uint32_t bind_count, ParPtr body,
                     std::vector<std::string> uris,
                     std::vector<std::pair<std::string, ParPtr>> injections);
};

enum class ExprKind : uint8_t {
  kBool = 0,
  kInt = 1,
  kString = 2,
  kUri = 3,
  kByteArray = 4,
  kVar = 5,
  kNot = 6,
  kNeg = 7,
  kMul = 8,
  kDiv = 9,
  kMod = 10,
  kAdd = 11,
  kSub = 12,
  kLt = 13,
  kLte = 14,
  kGt = 15,
  kGte = 16,
  kEq = 17,
  kNeq = 18,
  kAnd = 19,
  kOr = 20,
  kMatches = 21,         // operands = {target, pattern}
  kPercentPercent = 22,  // string interpolation `%%`
  kPlusPlus = 23,
  kMinusMinus = 24,
  kList = 25,
  kTuple = 26,
  kSet = 27,
  kMap = 28,       // operands = k0, v0, k1, v1, ... sorted by key
  kMethod = 29,    // text = method name, target, operands = arguments
  kShortAnd = 30,  // `&&`: the right operand is evaluated only if needed
  kShortOr = 31,   // `||`
};
inline constexpr int kExprKindCount = 32;

bool IsGround(ExprKind k);    // Bool, Int, String, Uri, ByteArray
bool IsUnaryOp(ExprKind k);   // Not, Neg
bool IsBinaryOp(ExprKind k);  // Mul .. MinusMinus (incl. Matches), ShortAnd/Or

struct Expr : NodeInfo {
  ExprKind kind = ExprKind::kBool;
  bool bool_value = false;
  int64_t int_value = 0;
  std::string text;  // String / Uri value, method name, ByteArray bytes
  Var var;           // kVar
  ParPtr target;     // kMethod
  std::vector<ParPtr> operands;
  std::optional<Var> remainder;  // kList, kSet, kMap patterns

  static ExprPtr Bool(bool v);
  static ExprPtr Int(int64_t v);
  static ExprPtr String(std::string v);
  static ExprPtr Uri(std::string v);
  static ExprPtr ByteArray(ByteView v);
  static ExprPtr Variable(Var v);
  // kind must satisfy IsUnaryOp / IsBinaryOp (aborts otherwise: a
  // programming error, never input-dependent).
  static ExprPtr Unary(ExprKind kind, ParPtr p);
  static ExprPtr Binary(ExprKind kind, ParPtr a, ParPtr b);
  static ExprPtr List(std::vector<ParPtr> ps, std::optional<Var> remainder);
  static ExprPtr Tuple(std::vector<ParPtr> ps);
  // Sorts into canonical order and drops duplicates.
  static ExprPtr Set(std::vector<ParPtr> ps, std::optional<Var> remainder);
  // Sorts by key in canonical order; a later duplicate key wins.
  static ExprPtr Map(std::vector<std::pair<ParPtr, ParPtr>> kvs,
                     std::optional<Var> remainder);
  static ExprPtr Method(std::string name, ParPtr target,
                        std::vector<ParPtr> args);
};

struct MatchCase {
  ParPtr pattern;
  ParPtr body;
  uint32_t free_count = 0;
};

struct Match : NodeInfo {
  ParPtr target;
  std::vector<MatchCase> cases;  // source order: the first match wins
  static MatchPtr Make(ParPtr target, std::vector<MatchCase> cases);
};

enum class UnforgeableKind : uint8_t {
  kPrivate = 0,       // GPrivate id
  kDeployId = 1,      // GDeployId signature
  kDeployerId = 2,    // GDeployerId public key
  kSysAuthToken = 3,  // GSysAuthToken (no bytes)
};

struct Unforgeable : NodeInfo {
  UnforgeableKind kind = UnforgeableKind::kPrivate;
  Bytes id;
  static UnforgeablePtr Make(UnforgeableKind kind, ByteView id);
};

struct Bundle : NodeInfo {
  ParPtr body;
  bool write_flag = false;
  bool read_flag = false;
  // A bundle whose body is exactly one bundle merges with it (flags ANDed).
  static BundlePtr Make(ParPtr body, bool write_flag, bool read_flag);
};

enum class ConnectiveKind : uint8_t {
  kAnd = 0,
  kOr = 1,
  kNot = 2,
  kVarRef = 3,
  kBool = 4,
  kInt = 5,
  kString = 6,
  kUri = 7,
  kByteArray = 8,
};

struct Connective : NodeInfo {
  ConnectiveKind kind = ConnectiveKind::kBool;
  std::vector<ParPtr> ps;  // kAnd, kOr (two or more), kNot (one)
  uint32_t var_ref_index = 0;
  uint32_t var_ref_depth = 0;  // pattern levels up to the binder
  bool var_ref_free = false;   // the binder lies outside every pattern
  static ConnectivePtr Make(ConnectiveKind kind, std::vector<ParPtr> ps);
  // `=x` / `=*x`. `free_here` says whether the reference points outside
  // every enclosing pattern, so that it counts in locally_free.
  static ConnectivePtr VarRef(uint32_t index, uint32_t depth, bool free_here);
};

struct If : NodeInfo {
  ParPtr condition;
  ParPtr if_true;
  ParPtr if_false;
  static IfPtr Make(ParPtr condition, ParPtr if_true, ParPtr if_false);
};

// A parallel composition; Nil is the empty Par. Components are grouped by
// kind and each group is kept in canonical order (docs/formats/rholang_ir.md).
class Par : public NodeInfo {
 public:
  std::vector<SendPtr> sends;
  std::vector<ReceivePtr> receives;
  std::vector<NewPtr> news;
  std::vector<ExprPtr> exprs;
  std::vector<MatchPtr> matches;
  std::vector<UnforgeablePtr> unforgeables;
  std::vector<BundlePtr> bundles;
  std::vector<ConnectivePtr> connectives;
  std::vector<IfPtr> conditionals;

  bool IsNil() const;
  size_t ComponentCount() const;
  // The single expression if the Par is exactly one expr, else nullptr.
  const Expr* SingleExpr() const;
};

// Accumulates components in any order; Build() sorts them canonically and
// computes the derived data. Not thread-safe; the built Par is immutable.
class ParBuilder {
 public:
  ParBuilder& Add(SendPtr s);
  ParBuilder& Add(ReceivePtr r);
  ParBuilder& Add(NewPtr n);
  ParBuilder& Add(ExprPtr e);
  ParBuilder& Add(MatchPtr m);
  ParBuilder& Add(UnforgeablePtr u);
  ParBuilder& Add(BundlePtr b);
  ParBuilder& Add(ConnectivePtr c);
  ParBuilder& Add(IfPtr i);
  // Adds every component of `p` (parallel composition).
  ParBuilder& AddAll(const Par& p);
  ParPtr Build();

 private:
  Par par_;
};

// The shared empty Par.
const ParPtr& Nil();
ParPtr ParOf(ExprPtr e);
// ParOf(Expr::Variable(v)), shared for common variables.
ParPtr VarPar(Var v);

// Structural equality (by hash).
inline bool Equal(const Par& a, const Par& b) { return a.hash == b.hash; }
inline bool Equal(const ParPtr& a, const ParPtr& b) {
  return a->hash == b->hash;
}

// The canonical total order on Pars used for sets and map keys: a Par that
// is one ground value (Bool < Int < String < Uri < ByteArray) sorts first
// by natural value; everything else after, by hash. Returns <0, 0, >0.
int ComparePars(const Par& a, const Par& b);

}  // namespace rnode::rholang::ir

#endif  // RNODE_RHOLANG_IR_H_
