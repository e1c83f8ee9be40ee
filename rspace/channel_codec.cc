// Channel state blob encoding.
#include "rspace/channel_codec.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>
#include <utility>

#include "util/byte_reader.h"
#include "util/status_macros.h"

namespace rnode::rspace {
namespace {

// Version 2 stores each datum's value hash (version 1 did not).
constexpr uint8_t kVersion = 2;

// Appends into a buffer sized up front (one allocation per blob).
class Writer {
 public:
  explicit Writer(size_t size) : out_(size), p_(out_.data()) {}
  void U8(uint8_t v) { *p_++ = v; }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) *p_++ = static_cast<uint8_t>(v >> (8 * i));
  }
  void Raw(const uint8_t* data, size_t n) {
    if (n != 0) std::memcpy(p_, data, n);
    p_ += n;
  }
  void Blob(const Bytes& b) {
    U32(static_cast<uint32_t>(b.size()));
    Raw(b.data(), b.size());
  }
  void Hash(const Hash32& h) { Raw(h.data(), h.size()); }
  Bytes Finish() && { return std::move(out_); }

 private:
  Bytes out_;
  uint8_t* p_;
};

// Items are reached through Deref so that one encoder serves a state and a
// list of pointers into states.
const Datum& Deref(const Datum& d) { return d; }
const Datum& Deref(const Datum* d) { return *d; }
const WaitingContinuation& Deref(const WaitingContinuation& k) { return k; }
const WaitingContinuation& Deref(const WaitingContinuation* k) { return *k; }
const JoinGroup& Deref(const JoinGroup& j) { return j; }
const JoinGroup& Deref(const JoinGroup* j) { return *j; }

template <typename DataRange, typename ContRange, typename JoinRange>
Bytes Encode(const DataRange& data, const ContRange& conts,
             const JoinRange& joins) {
  size_t size = 1 + 4 + 4 + 4;
  for (const auto& x : data)
    size += 1 + 32 + 32 + 4 + Deref(x).value->bytes().size();
  for (const auto& x : conts) {
    const WaitingContinuation& k = Deref(x);
    size += 1 + 32 + 4 + 4 + k.continuation->bytes().size();
    for (size_t i = 0; i < k.channels.size(); ++i) {
      size += 8 + k.channels[i]->bytes().size() + k.patterns[i]->bytes().size();
    }
  }
  for (const auto& x : joins) size += 4 + 32 * Deref(x).size();
  Writer w(size);
  w.U8(kVersion);
  w.U32(static_cast<uint32_t>(std::size(data)));
  for (const auto& x : data) {
    const Datum& d = Deref(x);
    w.U8(d.persist ? 1 : 0);
    w.Hash(d.source);
    w.Hash(d.value->hash());
    w.Blob(d.value->bytes());
  }
  w.U32(static_cast<uint32_t>(std::size(conts)));
  for (const auto& x : conts) {
    const WaitingContinuation& k = Deref(x);
    w.U8(static_cast<uint8_t>((k.persist ? 1 : 0) | (k.peek ? 2 : 0)));
    w.Hash(k.source);
    w.U32(static_cast<uint32_t>(k.channels.size()));
    for (size_t i = 0; i < k.channels.size(); ++i) {
      w.Blob(k.channels[i]->bytes());
      w.Blob(k.patterns[i]->bytes());
    }
    w.Blob(k.continuation->bytes());
  }
  w.U32(static_cast<uint32_t>(std::size(joins)));
  for (const auto& x : joins) {
    const JoinGroup& j = Deref(x);
    w.U32(static_cast<uint32_t>(j.size()));
    for (const auto& h : j) w.Hash(h);
  }
  return std::move(w).Finish();
}

absl::Status Corrupt(const char* what) {
  return absl::DataLossError(std::string("channel state blob: ") + what);
}

}  // namespace

Bytes EncodeChannelState(const ChannelState& state) {
  return Encode(state.data, state.continuations, state.joins);
}

Bytes EncodeChannelState(std::span<const Datum* const> data,
                         std::span<const WaitingContinuation* const> conts,
                         std::span<const JoinGroup* const> joins) {
  return Encode(data, conts, joins);
}

absl::StatusOr<ChannelState> DecodeChannelState(ByteView bytes,
                                                const TermFactory& make_term,
                                                ValueHashes value_hashes) {
  ByteReader r(bytes);
  ChannelState st;
  uint8_t version;
  if (!r.U8(version) || version != kVersion) return Corrupt("bad version");
  uint32_t n;
  if (!r.Count(n, 1 + 32 + 32 + 4)) return Corrupt("bad data count");
  st.data.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    Datum d;
    uint8_t persist;
    Hash32 value_hash;
    Bytes value;
    if (!r.U8(persist) || persist > 1 || !r.Fixed(d.source) ||
        !r.Fixed(value_hash) || !r.Blob(value)) {
      return Corrupt("bad datum");
    }
    d.persist = persist == 1;
    if (!st.data.empty() && d.source < st.data.back().source) {
      return Corrupt("data out of order");
    }
    if (value_hashes == ValueHashes::kTrust) {
      d.value = Term::MakeWithHash(std::move(value), value_hash);
    } else {
      ASSIGN_OR_RETURN(d.value, make_term(std::move(value)));
      if (d.value->hash() != value_hash) {
        return Corrupt("datum value does not match its hash");
      }
    }
    st.data.push_back(std::move(d));
  }
  if (!r.Count(n, 1 + 32 + 4 + 4)) return Corrupt("bad continuation count");
  st.continuations.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    WaitingContinuation k;
    uint8_t flags;
    uint32_t binds;
    if (!r.U8(flags) || flags > 3 || !r.Fixed(k.source) || !r.Count(binds, 8) ||
        binds == 0 || binds > kMaxJoinArity) {
      return Corrupt("bad continuation");
    }
    if (!st.continuations.empty() &&
        k.source < st.continuations.back().source) {
      return Corrupt("continuations out of order");
    }
    k.persist = (flags & 1) != 0;
    k.peek = (flags & 2) != 0;
    for (uint32_t b = 0; b < binds; ++b) {
      Bytes channel, pattern;
      if (!r.Blob(channel) || !r.Blob(pattern)) return Corrupt("bad bind");
      ASSIGN_OR_RETURN(TermPtr c, make_term(std::move(channel)));
      ASSIGN_OR_RETURN(TermPtr p, make_term(std::move(pattern)));
      k.channels.push_back(std::move(c));
      k.patterns.push_back(std::move(p));
    }
    Bytes body;
    if (!r.Blob(body)) return Corrupt("bad continuation body");
    ASSIGN_OR_RETURN(k.continuation, make_term(std::move(body)));
    k.group = MakeJoinGroup(k.channels);
    st.continuations.push_back(std::move(k));
  }
  if (!r.Count(n, 4)) return Corrupt("bad join count");
  st.joins.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t m;
    if (!r.Count(m, 32) || m == 0 || m > kMaxJoinArity)
      return Corrupt("bad join");
    JoinGroup g(m);
    for (uint32_t j = 0; j < m; ++j) {
      if (!r.Fixed(g[j])) return Corrupt("bad join");
    }
    if (!std::is_sorted(g.begin(), g.end())) return Corrupt("unsorted join");
    if (!st.joins.empty() && !(st.joins.back() < g)) {
      return Corrupt("joins out of order");
    }
    st.joins.push_back(std::move(g));
  }
  if (!r.done()) return Corrupt("trailing bytes");
  return st;
}

}  // namespace rnode::rspace
