// Records stored in the space (data, waiting continuations, joins) and the
// COMM result handed to the interpreter.
#ifndef RNODE_RSPACE_TYPES_H_
#define RNODE_RSPACE_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"

#include "rspace/matcher.h"
#include "rspace/term.h"
#include "util/bytes.h"

namespace rnode::rspace {

// Largest number of binds in one consume. Rholang joins in real contracts
// have a handful of binds; 32 bounds the per-operation lock set and the
// matcher work one deploy can ask for in a single step (and stays under
// ThreadSanitizer's limit of 64 mutexes held by one thread).
inline constexpr size_t kMaxJoinArity = 32;

// Builds a stored term from its canonical bytes (when a channel state is
// loaded from history). The interpreter supplies one that attaches its
// decoded form; the default is Term::Make.
using TermFactory = std::function<absl::StatusOr<TermPtr>(Bytes)>;

// The channel hashes of a consume, sorted ascending (duplicates kept). It is
// the key under which continuations wait and the unit of a join.
using JoinGroup = std::vector<Hash32>;

JoinGroup MakeJoinGroup(const std::vector<TermPtr>& channels);

// A stored datum. `source` is the hash of the Produce event that stored it.
struct Datum {
  TermPtr value;
  bool persist = false;
  Hash32 source{};
};

// A stored consume. Channels and patterns keep the consume's bind order;
// `group` is derived from `channels`.
struct WaitingContinuation {
  std::vector<TermPtr> channels;
  std::vector<TermPtr> patterns;
  TermPtr continuation;
  bool persist = false;
  bool peek = false;
  Hash32
      source{};  // Hash of the Consume event (or the install) that stored it.
  JoinGroup group;
};

// Everything stored under one channel hash (one trie leaf): its data in
// insertion order, the continuations whose group starts with this channel in
// insertion order, and the groups with a waiting continuation that include
// this channel, in insertion order without duplicates.
struct ChannelState {
  std::vector<Datum> data;
  std::vector<WaitingContinuation> continuations;
  std::vector<JoinGroup> joins;

  bool empty() const {
    return data.empty() && continuations.empty() && joins.empty();
  }
};

// One bind of a COMM, in the consume's bind order.
struct BindResult {
  TermPtr channel;
  TermPtr pattern;
  MatchResult matched;  // The matcher's output for (pattern, datum).
  TermPtr datum;        // The datum as stored (or as produced).
  bool datum_persist = false;
  bool removed = false;  // The datum left the space with this COMM.
  Hash32 produce{};      // Hash of the datum's Produce event.
};

// What the interpreter needs to run a COMM.
struct Comm {
  TermPtr continuation;
  bool continuation_persist = false;
  bool peek = false;
  bool installed = false;  // The continuation is a system process.
  std::vector<BindResult> binds;
  Hash32 consume{};    // Hash of the continuation's Consume event.
  Hash32 comm_hash{};  // Hash of the COMM event.
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_TYPES_H_
