// Canonical binary encoding of the IR, its decoder and the node hashes.
#include "rholang/frontend/ir_encoding.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "crypto/hash.h"
#include "rholang/frontend/limits.h"
#include "util/status_macros.h"

namespace rnode::rholang::ir {
namespace {

// Domain tags prefixed to each node's shallow encoding before hashing, so
// nodes of different kinds never share a hash preimage.
enum HashTag : uint8_t {
  kTagSend = 0x01,
  kTagReceive = 0x02,
  kTagNew = 0x03,
  kTagExpr = 0x04,
  kTagMatch = 0x05,
  kTagUnforgeable = 0x06,
  kTagBundle = 0x07,
  kTagConnective = 0x08,
  kTagIf = 0x09,
  kTagBind = 0x0A,
  kTagPar = 0x50,
};

class Writer {
 public:
  // Appends to `out`, which the caller owns and must outlive the writer.
  Writer(bool shallow, Bytes& out) : shallow_(shallow), out_(out) {}

  void U8(uint8_t b) { out_.push_back(b); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<uint8_t>(v));
  }
  void Zigzag(int64_t v) {
    Varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void Str(std::string_view s) {
    Varint(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void Raw(const Hash32& h) { out_.insert(out_.end(), h.begin(), h.end()); }
  void OptVar(const std::optional<Var>& v) {
    if (!v) {
      U8(0xFF);
      return;
    }
    WriteVar(*v);
  }
  void WriteVar(const Var& v) {
    U8(static_cast<uint8_t>(v.kind));
    if (v.kind != VarKind::kWildcard) Varint(v.index);
  }

  void Child(const ParPtr& p) {
    if (shallow_) {
      Raw(p->hash);
    } else {
      ParBody(*p);
    }
  }
  template <typename T>
  void Component(const std::shared_ptr<const T>& c) {
    if (shallow_) {
      Raw(c->hash);
    } else {
      Body(*c);
    }
  }
  template <typename T>
  void Group(const std::vector<std::shared_ptr<const T>>& v) {
    Varint(v.size());
    for (const auto& c : v) Component(c);
  }
  void Children(const std::vector<ParPtr>& v) {
    Varint(v.size());
    for (const ParPtr& p : v) Child(p);
  }

  void ParBody(const Par& p) {
    Group(p.sends);
    Group(p.receives);
    Group(p.news);
    Group(p.exprs);
    Group(p.matches);
    Group(p.unforgeables);
    Group(p.bundles);
    Group(p.connectives);
    Group(p.conditionals);
  }

  void Body(const Send& s) {
    U8(s.persistent ? 1 : 0);
    Child(s.chan);
    Children(s.data);
  }
  void BindBody(const ReceiveBind& b) {
    Children(b.patterns);
    Child(b.source);
    OptVar(b.remainder);
    Varint(b.free_count);
  }
  void Body(const Receive& r) {
    U8(static_cast<uint8_t>((r.persistent ? 1 : 0) | (r.peek ? 2 : 0)));
    Varint(r.bind_count);
    Varint(r.binds.size());
    for (const ReceiveBind& b : r.binds) BindBody(b);
    Child(r.body);
  }
  void Body(const New& n) {
    Varint(n.bind_count);
    Varint(n.uris.size());
    for (const std::string& u : n.uris) Str(u);
    Varint(n.injections.size());
    for (const auto& [key, value] : n.injections) {
      Str(key);
      Child(value);
    }
    Child(n.body);
  }
  void Body(const Expr& e) {
    U8(static_cast<uint8_t>(e.kind));
    switch (e.kind) {
      case ExprKind::kBool:
        U8(e.bool_value ? 1 : 0);
        break;
      case ExprKind::kInt:
        Zigzag(e.int_value);
        break;
      case ExprKind::kString:
      case ExprKind::kUri:
      case ExprKind::kByteArray:
        Str(e.text);
        break;
      case ExprKind::kVar:
        WriteVar(e.var);
        break;
      case ExprKind::kList:
      case ExprKind::kSet:
        Children(e.operands);
        OptVar(e.remainder);
        break;
      case ExprKind::kMap:
        Varint(e.operands.size() / 2);
        for (const ParPtr& p : e.operands) Child(p);
        OptVar(e.remainder);
        break;
      case ExprKind::kTuple:
        Children(e.operands);
        break;
      case ExprKind::kMethod:
        Str(e.text);
        Child(e.target);
        Children(e.operands);
        break;
      default:  // unary and binary operators
        for (const ParPtr& p : e.operands) Child(p);
        break;
    }
  }
  void Body(const Match& m) {
    Child(m.target);
    Varint(m.cases.size());
    for (const MatchCase& c : m.cases) {
      Child(c.pattern);
      Child(c.body);
      Varint(c.free_count);
    }
  }
  void Body(const Unforgeable& u) {
    U8(static_cast<uint8_t>(u.kind));
    Str(std::string_view(reinterpret_cast<const char*>(u.id.data()),
                         u.id.size()));
  }
  void Body(const Bundle& b) {
    U8(static_cast<uint8_t>((b.write_flag ? 1 : 0) | (b.read_flag ? 2 : 0)));
    Child(b.body);
  }
  void Body(const Connective& c) {
    U8(static_cast<uint8_t>(c.kind));
    switch (c.kind) {
      case ConnectiveKind::kAnd:
      case ConnectiveKind::kOr:
        Children(c.ps);
        break;
      case ConnectiveKind::kNot:
        Child(c.ps.at(0));
        break;
      case ConnectiveKind::kVarRef:
        Varint(c.var_ref_index);
        Varint(c.var_ref_depth);
        U8(c.var_ref_free ? 1 : 0);
        break;
      default:
        break;
    }
  }
  void Body(const If& i) {
    Child(i.condition);
    Child(i.if_true);
    Child(i.if_false);
  }

  Bytes& out() { return out_; }

 private:
  bool shallow_;
  Bytes& out_;
};

// Per-thread scratch buffer for shallow encodings: hashing never nests (child
// hashes are cached), so one buffer per thread serves every node and saves an
// allocation per hash.
Bytes& HashScratch() {
  thread_local Bytes scratch;
  scratch.clear();
  return scratch;
}

template <typename T>
Hash32 HashWithTag(uint8_t tag, const T& node) {
  Writer w(/*shallow=*/true, HashScratch());
  w.U8(tag);
  w.Body(node);
  return crypto::Blake2b256(w.out());
}

// Decoder: reads the full encoding back through the factories.
class Reader {
 public:
  explicit Reader(ByteView in) : in_(in) {}

  bool AtEnd() const { return pos_ == in_.size(); }

  absl::Status Fail(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("IR decode: ", std::string(what), " at byte ", pos_));
  }

  absl::StatusOr<uint8_t> U8() {
    if (pos_ >= in_.size()) return Fail("truncated");
    return in_[pos_++];
  }
  absl::StatusOr<uint64_t> Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      ASSIGN_OR_RETURN(uint8_t b, U8());
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        if (b == 0 && shift > 0) return Fail("non-minimal varint");
        return v;
      }
    }
    return Fail("varint too long");
  }
  absl::StatusOr<uint32_t> U32() {
    ASSIGN_OR_RETURN(uint64_t v, Varint());
    if (v > UINT32_MAX) return Fail("value out of range");
    return static_cast<uint32_t>(v);
  }
  // A count of items each taking at least one byte.
  absl::StatusOr<size_t> Count() {
    ASSIGN_OR_RETURN(uint64_t n, Varint());
    if (n > in_.size() - pos_) return Fail("count larger than the input");
    return static_cast<size_t>(n);
  }
  absl::StatusOr<std::string> Str() {
    ASSIGN_OR_RETURN(size_t n, Count());
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  absl::StatusOr<Var> ReadVar(uint8_t kind) {
    if (kind > 2) return Fail("bad variable kind");
    Var v;
    v.kind = static_cast<VarKind>(kind);
    if (v.kind != VarKind::kWildcard) {
      ASSIGN_OR_RETURN(v.index, U32());
    }
    return v;
  }
  absl::StatusOr<std::optional<Var>> OptVar() {
    ASSIGN_OR_RETURN(uint8_t k, U8());
    if (k == 0xFF) return std::optional<Var>();
    ASSIGN_OR_RETURN(Var v, ReadVar(k));
    return std::optional<Var>(v);
  }
  absl::StatusOr<bool> Flag() {
    ASSIGN_OR_RETURN(uint8_t b, U8());
    if (b > 1) return Fail("bad boolean");
    return b == 1;
  }

  absl::StatusOr<std::vector<ParPtr>> Children(uint32_t depth) {
    ASSIGN_OR_RETURN(size_t n, Count());
    std::vector<ParPtr> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(ParPtr p, ReadPar(depth));
      out.push_back(std::move(p));
    }
    return out;
  }

  // Each group and expression kind is read by its own non-inlined helper so
  // that the frames on the recursion path (ReadPar -> group -> ReadExpr ->
  // Children -> ReadPar) stay small, even in sanitizer builds: the decoder
  // must reach kMaxIrDepth without exhausting the stack.
  absl::StatusOr<ParPtr> ReadPar(uint32_t depth) {
    if (depth > kMaxIrDepth) {
      return absl::ResourceExhaustedError(
          absl::StrCat("IR decode: term deeper than ", kMaxIrDepth));
    }
    ParBuilder b;
    uint32_t d = depth + 1;
    RETURN_IF_ERROR(ReadSends(b, d));
    RETURN_IF_ERROR(ReadReceives(b, d));
    RETURN_IF_ERROR(ReadNews(b, d));
    RETURN_IF_ERROR(ReadExprs(b, d));
    RETURN_IF_ERROR(ReadMatches(b, d));
    RETURN_IF_ERROR(ReadUnforgeables(b));
    RETURN_IF_ERROR(ReadBundles(b, d));
    RETURN_IF_ERROR(ReadConnectives(b, d));
    RETURN_IF_ERROR(ReadIfs(b, d));
    return b.Build();
  }

  [[gnu::noinline]] absl::Status ReadSends(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(bool persistent, Flag());
      ASSIGN_OR_RETURN(ParPtr chan, ReadPar(d));
      ASSIGN_OR_RETURN(std::vector<ParPtr> data, Children(d));
      b.Add(Send::Make(std::move(chan), std::move(data), persistent));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadReceives(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(uint8_t flags, U8());
      if (flags > 3) return Fail("bad receive flags");
      ASSIGN_OR_RETURN(uint32_t bind_count, U32());
      ASSIGN_OR_RETURN(size_t n_binds, Count());
      std::vector<ReceiveBind> binds;
      for (size_t j = 0; j < n_binds; ++j) {
        ReceiveBind rb;
        ASSIGN_OR_RETURN(rb.patterns, Children(d));
        ASSIGN_OR_RETURN(rb.source, ReadPar(d));
        ASSIGN_OR_RETURN(rb.remainder, OptVar());
        ASSIGN_OR_RETURN(rb.free_count, U32());
        binds.push_back(std::move(rb));
      }
      ASSIGN_OR_RETURN(ParPtr body, ReadPar(d));
      b.Add(Receive::Make(std::move(binds), std::move(body), flags & 1,
                          (flags & 2) != 0, bind_count));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadNews(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(uint32_t bind_count, U32());
      ASSIGN_OR_RETURN(size_t n_uris, Count());
      std::vector<std::string> uris;
      for (size_t j = 0; j < n_uris; ++j) {
        ASSIGN_OR_RETURN(std::string u, Str());
        uris.push_back(std::move(u));
      }
      ASSIGN_OR_RETURN(size_t n_inj, Count());
      std::vector<std::pair<std::string, ParPtr>> injections;
      for (size_t j = 0; j < n_inj; ++j) {
        ASSIGN_OR_RETURN(std::string key, Str());
        ASSIGN_OR_RETURN(ParPtr value, ReadPar(d));
        injections.emplace_back(std::move(key), std::move(value));
      }
      ASSIGN_OR_RETURN(ParPtr body, ReadPar(d));
      b.Add(New::Make(bind_count, std::move(body), std::move(uris),
                      std::move(injections)));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadExprs(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(ExprPtr e, ReadExpr(d));
      b.Add(std::move(e));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadMatches(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(ParPtr target, ReadPar(d));
      ASSIGN_OR_RETURN(size_t n_cases, Count());
      std::vector<MatchCase> cases;
      for (size_t j = 0; j < n_cases; ++j) {
        MatchCase c;
        ASSIGN_OR_RETURN(c.pattern, ReadPar(d));
        ASSIGN_OR_RETURN(c.body, ReadPar(d));
        ASSIGN_OR_RETURN(c.free_count, U32());
        cases.push_back(std::move(c));
      }
      b.Add(Match::Make(std::move(target), std::move(cases)));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadUnforgeables(ParBuilder& b) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(uint8_t kind, U8());
      if (kind > 3) return Fail("bad unforgeable kind");
      ASSIGN_OR_RETURN(std::string id, Str());
      b.Add(Unforgeable::Make(
          static_cast<UnforgeableKind>(kind),
          ByteView(reinterpret_cast<const uint8_t*>(id.data()), id.size())));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadBundles(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(uint8_t flags, U8());
      if (flags > 3) return Fail("bad bundle flags");
      ASSIGN_OR_RETURN(ParPtr body, ReadPar(d));
      b.Add(Bundle::Make(std::move(body), flags & 1, (flags & 2) != 0));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadConnectives(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(uint8_t kind, U8());
      if (kind > 8) return Fail("bad connective kind");
      auto k = static_cast<ConnectiveKind>(kind);
      if (k == ConnectiveKind::kVarRef) {
        ASSIGN_OR_RETURN(uint32_t index, U32());
        ASSIGN_OR_RETURN(uint32_t vdepth, U32());
        ASSIGN_OR_RETURN(bool free_here, Flag());
        b.Add(Connective::VarRef(index, vdepth, free_here));
      } else if (k == ConnectiveKind::kAnd || k == ConnectiveKind::kOr) {
        ASSIGN_OR_RETURN(std::vector<ParPtr> ps, Children(d));
        b.Add(Connective::Make(k, std::move(ps)));
      } else if (k == ConnectiveKind::kNot) {
        ASSIGN_OR_RETURN(ParPtr p, ReadPar(d));
        b.Add(Connective::Make(k, {std::move(p)}));
      } else {
        b.Add(Connective::Make(k, {}));
      }
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::Status ReadIfs(ParBuilder& b, uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(ParPtr c, ReadPar(d));
      ASSIGN_OR_RETURN(ParPtr t, ReadPar(d));
      ASSIGN_OR_RETURN(ParPtr f, ReadPar(d));
      b.Add(If::Make(std::move(c), std::move(t), std::move(f)));
    }
    return absl::OkStatus();
  }

  [[gnu::noinline]] absl::StatusOr<ExprPtr> ReadExpr(uint32_t d) {
    ASSIGN_OR_RETURN(uint8_t kind_byte, U8());
    if (kind_byte >= kExprKindCount) return Fail("bad expression kind");
    auto kind = static_cast<ExprKind>(kind_byte);
    switch (kind) {
      case ExprKind::kBool:
      case ExprKind::kInt:
      case ExprKind::kString:
      case ExprKind::kUri:
      case ExprKind::kByteArray:
      case ExprKind::kVar:
        return ReadLeafExpr(kind);
      case ExprKind::kList:
      case ExprKind::kSet:
      case ExprKind::kTuple:
        return ReadSequence(kind, d);
      case ExprKind::kMap:
        return ReadMap(d);
      case ExprKind::kMethod:
        return ReadMethod(d);
      default:
        return ReadOperator(kind, d);
    }
  }

  [[gnu::noinline]] absl::StatusOr<ExprPtr> ReadLeafExpr(ExprKind kind) {
    switch (kind) {
      case ExprKind::kBool: {
        ASSIGN_OR_RETURN(bool v, Flag());
        return Expr::Bool(v);
      }
      case ExprKind::kInt: {
        ASSIGN_OR_RETURN(uint64_t z, Varint());
        return Expr::Int(static_cast<int64_t>((z >> 1) ^ (~(z & 1) + 1)));
      }
      case ExprKind::kVar: {
        ASSIGN_OR_RETURN(uint8_t k, U8());
        ASSIGN_OR_RETURN(Var v, ReadVar(k));
        return Expr::Variable(v);
      }
      default: {
        ASSIGN_OR_RETURN(std::string s, Str());
        if (kind == ExprKind::kString) return Expr::String(std::move(s));
        if (kind == ExprKind::kUri) return Expr::Uri(std::move(s));
        return Expr::ByteArray(
            ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
      }
    }
  }

  [[gnu::noinline]] absl::StatusOr<ExprPtr> ReadSequence(ExprKind kind,
                                                         uint32_t d) {
    ASSIGN_OR_RETURN(std::vector<ParPtr> ps, Children(d));
    if (kind == ExprKind::kTuple) return Expr::Tuple(std::move(ps));
    ASSIGN_OR_RETURN(std::optional<Var> rem, OptVar());
    return kind == ExprKind::kList ? Expr::List(std::move(ps), rem)
                                   : Expr::Set(std::move(ps), rem);
  }

  [[gnu::noinline]] absl::StatusOr<ExprPtr> ReadMap(uint32_t d) {
    ASSIGN_OR_RETURN(size_t n, Count());
    std::vector<std::pair<ParPtr, ParPtr>> kvs;
    for (size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(ParPtr k, ReadPar(d));
      ASSIGN_OR_RETURN(ParPtr v, ReadPar(d));
      kvs.emplace_back(std::move(k), std::move(v));
    }
    ASSIGN_OR_RETURN(std::optional<Var> rem, OptVar());
    return Expr::Map(std::move(kvs), rem);
  }

  [[gnu::noinline]] absl::StatusOr<ExprPtr> ReadMethod(uint32_t d) {
    ASSIGN_OR_RETURN(std::string name, Str());
    ASSIGN_OR_RETURN(ParPtr target, ReadPar(d));
    ASSIGN_OR_RETURN(std::vector<ParPtr> args, Children(d));
    return Expr::Method(std::move(name), std::move(target), std::move(args));
  }

  [[gnu::noinline]] absl::StatusOr<ExprPtr> ReadOperator(ExprKind kind,
                                                         uint32_t d) {
    if (IsUnaryOp(kind)) {
      ASSIGN_OR_RETURN(ParPtr p, ReadPar(d));
      return Expr::Unary(kind, std::move(p));
    }
    ASSIGN_OR_RETURN(ParPtr a, ReadPar(d));
    ASSIGN_OR_RETURN(ParPtr b, ReadPar(d));
    return Expr::Binary(kind, std::move(a), std::move(b));
  }

 private:
  ByteView in_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<Bytes> EncodePar(const Par& par) {
  if (par.height > kMaxIrDepth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("IR term deeper than ", kMaxIrDepth));
  }
  Bytes out;
  Writer w(/*shallow=*/false, out);
  w.U8(kEncodingVersion);
  w.ParBody(par);
  return out;
}

absl::StatusOr<ParPtr> DecodePar(ByteView bytes) {
  Reader r(bytes);
  ASSIGN_OR_RETURN(uint8_t version, r.U8());
  if (version != kEncodingVersion) return r.Fail("unknown encoding version");
  ASSIGN_OR_RETURN(ParPtr par, r.ReadPar(0));
  if (!r.AtEnd()) return r.Fail("trailing bytes");
  ASSIGN_OR_RETURN(Bytes again, EncodePar(*par));
  if (again.size() != bytes.size() ||
      !std::equal(again.begin(), again.end(), bytes.begin())) {
    return absl::InvalidArgumentError("IR decode: encoding is not canonical");
  }
  return par;
}

namespace internal {

Hash32 HashNode(const Send& n) { return HashWithTag(kTagSend, n); }
Hash32 HashNode(const Receive& n) { return HashWithTag(kTagReceive, n); }
Hash32 HashNode(const New& n) { return HashWithTag(kTagNew, n); }
Hash32 HashNode(const Expr& n) { return HashWithTag(kTagExpr, n); }
Hash32 HashNode(const Match& n) { return HashWithTag(kTagMatch, n); }
Hash32 HashNode(const Unforgeable& n) {
  return HashWithTag(kTagUnforgeable, n);
}
Hash32 HashNode(const Bundle& n) { return HashWithTag(kTagBundle, n); }
Hash32 HashNode(const Connective& n) { return HashWithTag(kTagConnective, n); }
Hash32 HashNode(const If& n) { return HashWithTag(kTagIf, n); }
Hash32 HashNode(const Par& n) {
  Writer w(/*shallow=*/true, HashScratch());
  w.U8(kTagPar);
  w.ParBody(n);
  return crypto::Blake2b256(w.out());
}
Hash32 HashBind(const ReceiveBind& b) {
  Writer w(/*shallow=*/true, HashScratch());
  w.U8(kTagBind);
  w.BindBody(b);
  return crypto::Blake2b256(w.out());
}

}  // namespace internal
}  // namespace rnode::rholang::ir
