// The canonical encoding of a channel's stored state (the trie leaf blob):
// the public, typed way for readers outside rspace (proof of stake's
// validators, the merger) to decode a leaf read from History and to encode
// a state they computed. Pure functions; thread-safe.
#ifndef RNODE_RSPACE_CHANNEL_CODEC_H_
#define RNODE_RSPACE_CHANNEL_CODEC_H_

#include <span>

#include "absl/status/statusor.h"
#include "rspace/types.h"
#include "util/bytes.h"

namespace rnode::rspace {

// docs/formats/rspace.md "Channel state blob".
Bytes EncodeChannelState(const ChannelState& state);

// The same encoding of a state given as lists of items (in blob order),
// e.g. pointers into other states.
Bytes EncodeChannelState(std::span<const Datum* const> data,
                         std::span<const WaitingContinuation* const> conts,
                         std::span<const JoinGroup* const> joins);

// How DecodeChannelState builds datum values from the stored value hashes.
enum class ValueHashes {
  // Through `make_term`; DataLoss if the term's hash is not the stored one.
  kVerify,
  // Term::MakeWithHash with the stored hash: no hashing and no call of
  // `make_term` (so no decoded form is attached to datum values). For
  // readers that only compare and re-encode data (the merger).
  kTrust,
};

// DataLoss on malformed bytes; `make_term` builds each stored term (it may
// attach the interpreter's decoded form) and its error is returned as is.
absl::StatusOr<ChannelState> DecodeChannelState(
    ByteView bytes, const TermFactory& make_term,
    ValueHashes value_hashes = ValueHashes::kVerify);

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_CHANNEL_CODEC_H_
