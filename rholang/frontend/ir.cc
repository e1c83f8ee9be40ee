// IR node factories: canonical ordering and the derived data (hash, height,
// locally_free, connective_used) computed once per node.
#include "rholang/frontend/ir.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <cstdlib>
#include "rholang/frontend/ir_encoding.h"
#include "util/check.h"

namespace rnode::rholang::ir {

void IndexSet::Add(uint32_t index) {
  size_t word = index / 64;
  if (words_.size() <= word) words_.resize(word + 1, 0);
  words_[word] |= uint64_t{1} << (index % 64);
}

void IndexSet::UnionWith(const IndexSet& other) {
  if (words_.size() < other.words_.size()) {
    words_.resize(other.words_.size(), 0);
  }
  for (size_t i = 0; i < other.words_.size(); ++i) words_[i] |= other.words_[i];
}

bool IndexSet::Contains(uint32_t index) const {
  size_t word = index / 64;
  return word < words_.size() && (words_[word] >> (index % 64)) & 1;
}

IndexSet IndexSet::ShiftedDown(uint32_t n) const {
  IndexSet out;
  for (uint32_t i : ToVector()) {
    if (i >= n) out.Add(i - n);
  }
  return out;
}

std::vector<uint32_t> IndexSet::ToVector() const {
  std::vector<uint32_t> out;
  for (size_t w = 0; w < words_.size(); ++w) {
    uint64_t bits = words_[w];
    while (bits != 0) {
      int b = __builtin_ctzll(bits);
      out.push_back(static_cast<uint32_t>(w * 64 + static_cast<size_t>(b)));
      bits &= bits - 1;
    }
  }
  return out;
}

namespace {

// Adds a child's expanded size to `n.size`, saturating at UINT64_MAX.
void AddSize(NodeInfo& n, uint64_t child_size) {
  n.size = child_size > UINT64_MAX - n.size ? UINT64_MAX : n.size + child_size;
}

void Absorb(NodeInfo& n, const ParPtr& p) {
  n.locally_free.UnionWith(p->locally_free);
  n.connective_used = n.connective_used || p->connective_used;
  n.height = std::max(n.height, p->height + 1);
  AddSize(n, p->size);
}

void AbsorbShape(NodeInfo& n, const ParPtr& p) {
  n.height = std::max(n.height, p->height + 1);
  AddSize(n, p->size);
}

int GroundRank(ExprKind k) {
  switch (k) {
    case ExprKind::kBool:
      return 0;
    case ExprKind::kInt:
      return 1;
    case ExprKind::kString:
      return 2;
    case ExprKind::kUri:
      return 3;
    case ExprKind::kByteArray:
      return 4;
    default:
      return 5;
  }
}

int CompareHashes(const Hash32& a, const Hash32& b) {
  return std::memcmp(a.data(), b.data(), a.size());
}

int CompareExprs(const Expr& a, const Expr& b) {
  int ra = GroundRank(a.kind), rb = GroundRank(b.kind);
  if (ra != rb) return ra < rb ? -1 : 1;
  switch (ra) {
    case 0:
      return static_cast<int>(a.bool_value) - static_cast<int>(b.bool_value);
    case 1:
      return a.int_value < b.int_value ? -1 : a.int_value > b.int_value ? 1 : 0;
    case 2:
    case 3:
    case 4: {
      int c = a.text.compare(b.text);
      return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    default:
      return CompareHashes(a.hash, b.hash);
  }
}

template <typename T>
void SortByHash(std::vector<std::shared_ptr<const T>>& v) {
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return CompareHashes(a->hash, b->hash) < 0;
  });
}

template <typename T>
void AbsorbComponents(Par& par,
                      const std::vector<std::shared_ptr<const T>>& v) {
  for (const auto& c : v) {
    par.locally_free.UnionWith(c->locally_free);
    par.connective_used = par.connective_used || c->connective_used;
    par.height = std::max(par.height, c->height + 1);
    AddSize(par, c->size);
  }
}

void NoteRemainder(NodeInfo& n, const std::optional<Var>& remainder) {
  if (remainder) n.connective_used = true;
}

ExprPtr Finish(std::shared_ptr<Expr> e) {
  AddSize(*e, e->text.size());
  e->hash = internal::HashNode(*e);
  return e;
}

// A pattern's contribution to the locally_free of the node that holds it:
// the indices of the free-here VarRefs anywhere inside it. Such an index
// counts from the pattern boundary (the normalizer looks it up in the scope
// outside every pattern), so binders inside the pattern do not lower it,
// whereas the cached locally_free of the pattern's inner nodes does (a New,
// Receive or match case lowers everything in its body). Every Bound var of
// a pattern is bound inside the pattern, so nothing else escapes. Iterative:
// pattern depth is not bounded here.
IndexSet PatternLocallyFree(const Par& pattern) {
  IndexSet out;
  std::vector<const Par*> todo{&pattern};
  auto push_all = [&todo](const std::vector<ParPtr>& ps) {
    for (const ParPtr& p : ps) todo.push_back(p.get());
  };
  while (!todo.empty()) {
    const Par& p = *todo.back();
    todo.pop_back();
    if (p.height <= 1) continue;  // Nil
    for (const SendPtr& s : p.sends) {
      todo.push_back(s->chan.get());
      push_all(s->data);
    }
    for (const ReceivePtr& r : p.receives) {
      for (const ReceiveBind& b : r->binds) {
        push_all(b.patterns);
        todo.push_back(b.source.get());
      }
      todo.push_back(r->body.get());
    }
    for (const NewPtr& n : p.news) todo.push_back(n->body.get());
    for (const ExprPtr& e : p.exprs) {
      if (e->target) todo.push_back(e->target.get());
      push_all(e->operands);
    }
    for (const MatchPtr& m : p.matches) {
      todo.push_back(m->target.get());
      for (const MatchCase& c : m->cases) {
        todo.push_back(c.pattern.get());
        todo.push_back(c.body.get());
      }
    }
    for (const BundlePtr& b : p.bundles) todo.push_back(b->body.get());
    for (const ConnectivePtr& c : p.connectives) {
      if (c->kind == ConnectiveKind::kVarRef) {
        if (c->var_ref_free) out.Add(c->var_ref_index);
        continue;
      }
      push_all(c->ps);
    }
    for (const IfPtr& i : p.conditionals) {
      todo.push_back(i->condition.get());
      todo.push_back(i->if_true.get());
      todo.push_back(i->if_false.get());
    }
  }
  return out;
}

// A Par of exactly one component takes that component's hash: component
// hashes are domain-separated by kind and a Par of several (or no)
// components hashes under its own tag, so no two different Pars share a
// hash, and the common one-component Par costs no extra Blake2b call.
std::optional<Hash32> SoleComponentHash(const Par& p) {
  if (p.ComponentCount() != 1) return std::nullopt;
  if (!p.sends.empty()) return p.sends[0]->hash;
  if (!p.receives.empty()) return p.receives[0]->hash;
  if (!p.news.empty()) return p.news[0]->hash;
  if (!p.exprs.empty()) return p.exprs[0]->hash;
  if (!p.matches.empty()) return p.matches[0]->hash;
  if (!p.unforgeables.empty()) return p.unforgeables[0]->hash;
  if (!p.bundles.empty()) return p.bundles[0]->hash;
  if (!p.connectives.empty()) return p.connectives[0]->hash;
  return p.conditionals[0]->hash;
}

}  // namespace

bool IsGround(ExprKind k) { return GroundRank(k) < 5; }
bool IsUnaryOp(ExprKind k) {
  return k == ExprKind::kNot || k == ExprKind::kNeg;
}
bool IsBinaryOp(ExprKind k) {
  return (static_cast<int>(k) >= static_cast<int>(ExprKind::kMul) &&
          static_cast<int>(k) <= static_cast<int>(ExprKind::kMinusMinus)) ||
         k == ExprKind::kShortAnd || k == ExprKind::kShortOr;
}

int ComparePars(const Par& a, const Par& b) {
  const Expr* ea = a.SingleExpr();
  const Expr* eb = b.SingleExpr();
  bool ga = ea != nullptr && IsGround(ea->kind);
  bool gb = eb != nullptr && IsGround(eb->kind);
  if (ga && gb) return CompareExprs(*ea, *eb);
  if (ga != gb) return ga ? -1 : 1;
  return CompareHashes(a.hash, b.hash);
}

SendPtr Send::Make(ParPtr chan, std::vector<ParPtr> data, bool persistent) {
  auto s = std::make_shared<Send>();
  s->chan = std::move(chan);
  s->data = std::move(data);
  s->persistent = persistent;
  Absorb(*s, s->chan);
  for (const ParPtr& d : s->data) Absorb(*s, d);
  s->hash = internal::HashNode(*s);
  return s;
}

std::vector<size_t> SortBinds(std::vector<ReceiveBind>& binds) {
  std::vector<Hash32> hashes;
  hashes.reserve(binds.size());
  for (const ReceiveBind& b : binds) hashes.push_back(internal::HashBind(b));
  std::vector<size_t> order(binds.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return CompareHashes(hashes[x], hashes[y]) < 0;
  });
  std::vector<ReceiveBind> sorted;
  sorted.reserve(binds.size());
  for (size_t i : order) sorted.push_back(std::move(binds[i]));
  binds = std::move(sorted);
  return order;
}

ReceivePtr Receive::Make(std::vector<ReceiveBind> binds, ParPtr body,
                         bool persistent, bool peek, uint32_t bind_count) {
  auto r = std::make_shared<Receive>();
  r->binds = std::move(binds);
  r->body = std::move(body);
  r->persistent = persistent;
  r->peek = peek;
  r->bind_count = bind_count;
  for (const ReceiveBind& b : r->binds) {
    Absorb(*r, b.source);
    for (const ParPtr& p : b.patterns) {
      r->locally_free.UnionWith(PatternLocallyFree(*p));
      AbsorbShape(*r, p);
    }
  }
  r->locally_free.UnionWith(r->body->locally_free.ShiftedDown(bind_count));
  r->connective_used = r->connective_used || r->body->connective_used;
  AbsorbShape(*r, r->body);
  r->hash = internal::HashNode(*r);
  return r;
}

NewPtr New::Make(uint32_t bind_count, ParPtr body,
                 std::vector<std::string> uris,
                 std::vector<std::pair<std::string, ParPtr>> injections) {
  auto n = std::make_shared<New>();
  n->bind_count = bind_count;
  n->body = std::move(body);
  n->uris = std::move(uris);
  n->injections = std::move(injections);
  std::sort(n->injections.begin(), n->injections.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  n->locally_free = n->body->locally_free.ShiftedDown(bind_count);
  n->connective_used = n->body->connective_used;
  AbsorbShape(*n, n->body);
  for (const auto& [key, value] : n->injections) AbsorbShape(*n, value);
  for (const std::string& uri : n->uris) AddSize(*n, uri.size());
  n->hash = internal::HashNode(*n);
  return n;
}

namespace {

ExprPtr MakeBool(bool v) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kBool;
  e->bool_value = v;
  return Finish(std::move(e));
}

ExprPtr MakeInt(int64_t v) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kInt;
  e->int_value = v;
  return Finish(std::move(e));
}

// Small integers (counters, indices, flags) dominate Int literals; like
// variables they are built once and shared.
constexpr int64_t kCachedIntMin = -16;
constexpr int64_t kCachedIntMax = 255;

}  // namespace

ExprPtr Expr::Bool(bool v) {
  static const ExprPtr* const kValues =
      new ExprPtr[2]{MakeBool(false), MakeBool(true)};
  return kValues[v ? 1 : 0];
}

ExprPtr Expr::Int(int64_t v) {
  static const std::vector<ExprPtr>* const kSmall = [] {
    auto* ints = new std::vector<ExprPtr>;
    for (int64_t i = kCachedIntMin; i <= kCachedIntMax; ++i) {
      ints->push_back(MakeInt(i));
    }
    return ints;
  }();
  if (v >= kCachedIntMin && v <= kCachedIntMax) {
    return (*kSmall)[static_cast<size_t>(v - kCachedIntMin)];
  }
  return MakeInt(v);
}

ExprPtr Expr::String(std::string v) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kString;
  e->text = std::move(v);
  return Finish(std::move(e));
}

ExprPtr Expr::Uri(std::string v) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kUri;
  e->text = std::move(v);
  return Finish(std::move(e));
}

ExprPtr Expr::ByteArray(ByteView v) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kByteArray;
  e->text.assign(reinterpret_cast<const char*>(v.data()), v.size());
  return Finish(std::move(e));
}

namespace {

ExprPtr MakeVariable(Var v) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kVar;
  e->var = v;
  if (v.kind == VarKind::kBound) {
    e->locally_free.Add(v.index);
  } else {
    e->connective_used = true;
  }
  return Finish(std::move(e));
}

// Variables with small indices are by far the most common leaves; they are
// built once and shared (nodes are immutable), saving an allocation and a
// Blake2b call per use. Covers the indices real programs use almost always.
constexpr uint32_t kCachedVarIndices = 64;

struct VarCache {
  std::vector<ExprPtr> exprs;  // bound 0..63, free 0..63, wildcard
  std::vector<ParPtr> pars;
  VarCache() {
    for (VarKind kind : {VarKind::kBound, VarKind::kFree}) {
      for (uint32_t i = 0; i < kCachedVarIndices; ++i) {
        exprs.push_back(MakeVariable({kind, i}));
      }
    }
    exprs.push_back(MakeVariable({VarKind::kWildcard, 0}));
    for (const ExprPtr& e : exprs) pars.push_back(ParBuilder().Add(e).Build());
  }
  // Position of `v` in the cache, or -1.
  static int Slot(Var v) {
    if (v.kind == VarKind::kWildcard) return 2 * kCachedVarIndices;
    if (v.index >= kCachedVarIndices) return -1;
    return static_cast<int>((v.kind == VarKind::kFree ? kCachedVarIndices : 0) +
                            v.index);
  }
};

const VarCache& Vars() {
  static const VarCache* cache = new VarCache();
  return *cache;
}

}  // namespace

ExprPtr Expr::Variable(Var v) {
  if (v.kind == VarKind::kWildcard) v.index = 0;
  int slot = VarCache::Slot(v);
  if (slot >= 0) return Vars().exprs[static_cast<size_t>(slot)];
  return MakeVariable(v);
}

ParPtr VarPar(Var v) {
  if (v.kind == VarKind::kWildcard) v.index = 0;
  int slot = VarCache::Slot(v);
  if (slot >= 0) return Vars().pars[static_cast<size_t>(slot)];
  return ParOf(MakeVariable(v));
}

ExprPtr Expr::Unary(ExprKind kind, ParPtr p) {
  CHECK(IsUnaryOp(kind), "Expr::Unary takes a unary operator");
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  Absorb(*e, p);
  e->operands.push_back(std::move(p));
  return Finish(std::move(e));
}

ExprPtr Expr::Binary(ExprKind kind, ParPtr a, ParPtr b) {
  CHECK(IsBinaryOp(kind), "Expr::Binary takes a binary operator");
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  Absorb(*e, a);
  if (kind == ExprKind::kMatches) {
    e->locally_free.UnionWith(PatternLocallyFree(*b));
    AbsorbShape(*e, b);
  } else {
    Absorb(*e, b);
  }
  e->operands = {std::move(a), std::move(b)};
  return Finish(std::move(e));
}

ExprPtr Expr::List(std::vector<ParPtr> ps, std::optional<Var> remainder) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kList;
  for (const ParPtr& p : ps) Absorb(*e, p);
  e->operands = std::move(ps);
  e->remainder = remainder;
  NoteRemainder(*e, remainder);
  return Finish(std::move(e));
}

ExprPtr Expr::Tuple(std::vector<ParPtr> ps) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kTuple;
  for (const ParPtr& p : ps) Absorb(*e, p);
  e->operands = std::move(ps);
  return Finish(std::move(e));
}

ExprPtr Expr::Set(std::vector<ParPtr> ps, std::optional<Var> remainder) {
  auto less = [](const ParPtr& a, const ParPtr& b) {
    return ComparePars(*a, *b) < 0;
  };
  // Set operations pass elements already in order: O(n) instead of a sort.
  if (!std::is_sorted(ps.begin(), ps.end(), less)) {
    std::sort(ps.begin(), ps.end(), less);
  }
  ps.erase(std::unique(ps.begin(), ps.end(),
                       [](const ParPtr& a, const ParPtr& b) {
                         return a->hash == b->hash;
                       }),
           ps.end());
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kSet;
  for (const ParPtr& p : ps) Absorb(*e, p);
  e->operands = std::move(ps);
  e->remainder = remainder;
  NoteRemainder(*e, remainder);
  return Finish(std::move(e));
}

ExprPtr Expr::Map(std::vector<std::pair<ParPtr, ParPtr>> kvs,
                  std::optional<Var> remainder) {
  std::stable_sort(kvs.begin(), kvs.end(), [](const auto& a, const auto& b) {
    return ComparePars(*a.first, *b.first) < 0;
  });
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kMap;
  for (size_t i = 0; i < kvs.size(); ++i) {
    if (i + 1 < kvs.size() && kvs[i].first->hash == kvs[i + 1].first->hash) {
      continue;  // a later duplicate key wins
    }
    Absorb(*e, kvs[i].first);
    Absorb(*e, kvs[i].second);
    e->operands.push_back(std::move(kvs[i].first));
    e->operands.push_back(std::move(kvs[i].second));
  }
  e->remainder = remainder;
  NoteRemainder(*e, remainder);
  return Finish(std::move(e));
}

ExprPtr Expr::Method(std::string name, ParPtr target,
                     std::vector<ParPtr> args) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kMethod;
  e->text = std::move(name);
  Absorb(*e, target);
  for (const ParPtr& p : args) Absorb(*e, p);
  e->target = std::move(target);
  e->operands = std::move(args);
  return Finish(std::move(e));
}

MatchPtr Match::Make(ParPtr target, std::vector<MatchCase> cases) {
  auto m = std::make_shared<Match>();
  m->target = std::move(target);
  m->cases = std::move(cases);
  Absorb(*m, m->target);
  for (const MatchCase& c : m->cases) {
    m->locally_free.UnionWith(PatternLocallyFree(*c.pattern));
    AbsorbShape(*m, c.pattern);
    m->locally_free.UnionWith(c.body->locally_free.ShiftedDown(c.free_count));
    m->connective_used = m->connective_used || c.body->connective_used;
    AbsorbShape(*m, c.body);
  }
  m->hash = internal::HashNode(*m);
  return m;
}

UnforgeablePtr Unforgeable::Make(UnforgeableKind kind, ByteView id) {
  auto u = std::make_shared<Unforgeable>();
  u->kind = kind;
  u->id.assign(id.begin(), id.end());
  AddSize(*u, u->id.size());
  u->hash = internal::HashNode(*u);
  return u;
}

BundlePtr Bundle::Make(ParPtr body, bool write_flag, bool read_flag) {
  if (body->ComponentCount() == 1 && body->bundles.size() == 1) {
    BundlePtr inner = body->bundles[0];
    return Make(inner->body, write_flag && inner->write_flag,
                read_flag && inner->read_flag);
  }
  auto b = std::make_shared<Bundle>();
  b->body = std::move(body);
  b->write_flag = write_flag;
  b->read_flag = read_flag;
  Absorb(*b, b->body);
  b->hash = internal::HashNode(*b);
  return b;
}

ConnectivePtr Connective::Make(ConnectiveKind kind, std::vector<ParPtr> ps) {
  CHECK(kind != ConnectiveKind::kVarRef,
        "Connective::Make of a var ref: use Connective::VarRef");
  auto c = std::make_shared<Connective>();
  c->kind = kind;
  for (const ParPtr& p : ps) {
    c->locally_free.UnionWith(p->locally_free);
    AbsorbShape(*c, p);
  }
  c->ps = std::move(ps);
  c->connective_used = true;
  c->hash = internal::HashNode(*c);
  return c;
}

ConnectivePtr Connective::VarRef(uint32_t index, uint32_t depth,
                                 bool free_here) {
  auto c = std::make_shared<Connective>();
  c->kind = ConnectiveKind::kVarRef;
  c->var_ref_index = index;
  c->var_ref_depth = depth;
  c->var_ref_free = free_here;
  if (free_here) c->locally_free.Add(index);
  c->hash = internal::HashNode(*c);
  return c;
}

IfPtr If::Make(ParPtr condition, ParPtr if_true, ParPtr if_false) {
  auto i = std::make_shared<If>();
  i->condition = std::move(condition);
  i->if_true = std::move(if_true);
  i->if_false = std::move(if_false);
  Absorb(*i, i->condition);
  Absorb(*i, i->if_true);
  Absorb(*i, i->if_false);
  i->hash = internal::HashNode(*i);
  return i;
}

bool Par::IsNil() const { return ComponentCount() == 0; }

size_t Par::ComponentCount() const {
  return sends.size() + receives.size() + news.size() + exprs.size() +
         matches.size() + unforgeables.size() + bundles.size() +
         connectives.size() + conditionals.size();
}

const Expr* Par::SingleExpr() const {
  if (exprs.size() != 1 || ComponentCount() != 1) return nullptr;
  return exprs[0].get();
}

ParBuilder& ParBuilder::Add(SendPtr s) {
  par_.sends.push_back(std::move(s));
  return *this;
}
ParBuilder& ParBuilder::Add(ReceivePtr r) {
  par_.receives.push_back(std::move(r));
  return *this;
}
ParBuilder& ParBuilder::Add(NewPtr n) {
  par_.news.push_back(std::move(n));
  return *this;
}
ParBuilder& ParBuilder::Add(ExprPtr e) {
  par_.exprs.push_back(std::move(e));
  return *this;
}
ParBuilder& ParBuilder::Add(MatchPtr m) {
  par_.matches.push_back(std::move(m));
  return *this;
}
ParBuilder& ParBuilder::Add(UnforgeablePtr u) {
  par_.unforgeables.push_back(std::move(u));
  return *this;
}
ParBuilder& ParBuilder::Add(BundlePtr b) {
  par_.bundles.push_back(std::move(b));
  return *this;
}
ParBuilder& ParBuilder::Add(ConnectivePtr c) {
  par_.connectives.push_back(std::move(c));
  return *this;
}
ParBuilder& ParBuilder::Add(IfPtr i) {
  par_.conditionals.push_back(std::move(i));
  return *this;
}

ParBuilder& ParBuilder::AddAll(const Par& p) {
  auto append = [](auto& dst, const auto& src) {
    dst.insert(dst.end(), src.begin(), src.end());
  };
  append(par_.sends, p.sends);
  append(par_.receives, p.receives);
  append(par_.news, p.news);
  append(par_.exprs, p.exprs);
  append(par_.matches, p.matches);
  append(par_.unforgeables, p.unforgeables);
  append(par_.bundles, p.bundles);
  append(par_.connectives, p.connectives);
  append(par_.conditionals, p.conditionals);
  return *this;
}

ParPtr ParBuilder::Build() {
  auto par = std::make_shared<Par>(std::move(par_));
  par_ = Par();
  SortByHash(par->sends);
  SortByHash(par->receives);
  SortByHash(par->news);
  std::sort(par->exprs.begin(), par->exprs.end(),
            [](const ExprPtr& a, const ExprPtr& b) {
              return CompareExprs(*a, *b) < 0;
            });
  SortByHash(par->matches);
  SortByHash(par->unforgeables);
  SortByHash(par->bundles);
  SortByHash(par->connectives);
  SortByHash(par->conditionals);
  par->locally_free = IndexSet();
  par->connective_used = false;
  par->height = 1;
  par->size = 1;
  AbsorbComponents(*par, par->sends);
  AbsorbComponents(*par, par->receives);
  AbsorbComponents(*par, par->news);
  AbsorbComponents(*par, par->exprs);
  AbsorbComponents(*par, par->matches);
  AbsorbComponents(*par, par->unforgeables);
  AbsorbComponents(*par, par->bundles);
  AbsorbComponents(*par, par->connectives);
  AbsorbComponents(*par, par->conditionals);
  // Not value_or: its argument would be evaluated (a Blake2b) even when the
  // Par has a single component whose hash it shares.
  std::optional<Hash32> sole = SoleComponentHash(*par);
  par->hash = sole ? *sole : internal::HashNode(*par);
  return par;
}

const ParPtr& Nil() {
  static const ParPtr* nil = new ParPtr(ParBuilder().Build());
  return *nil;
}

ParPtr ParOf(ExprPtr e) { return ParBuilder().Add(std::move(e)).Build(); }

}  // namespace rnode::rholang::ir
