// libFuzzer target over a peer's validator statement
// (node/p2p/identity/validator_statement.h), as a node reads it from a
// handshake. Asserted: decoding never reads past its input; what decodes
// encodes back to the same bytes and fits kMaxValidatorStatementBytes; a
// decoded statement whose check passes against its own fields verifies
// (the fuzzer cannot forge a signature, so this holds only for seeds that
// were signed); and a statement changed in its signed part never passes.
// Any broken property traps.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "node/p2p/identity/validator_statement.h"
#include "util/bytes.h"

namespace {

void Require(bool holds) {
  if (!holds) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using rnode::node::p2p::CheckValidatorStatement;
  using rnode::node::p2p::DecodeValidatorStatement;
  using rnode::node::p2p::EncodeValidatorStatement;
  using rnode::node::p2p::kMaxValidatorStatementBytes;
  const rnode::ByteView input(data, size);
  absl::StatusOr<rnode::node::p2p::ValidatorStatement> s =
      DecodeValidatorStatement(input);
  if (!s.ok()) return 0;
  const rnode::Bytes again = EncodeValidatorStatement(*s);
  Require(again.size() <= kMaxValidatorStatementBytes);
  Require(rnode::ByteView(again).size() == size &&
          std::equal(again.begin(), again.end(), data));
  const bool valid = CheckValidatorStatement(*s, s->node_id, s->network_id,
                                             s->shard_id, s->time_ms)
                         .ok();
  if (valid) {
    // A signed statement with one more millisecond is another statement.
    rnode::node::p2p::ValidatorStatement moved = *s;
    moved.time_ms ^= 1;
    Require(!CheckValidatorStatement(moved, moved.node_id, moved.network_id,
                                     moved.shard_id, moved.time_ms)
                 .ok());
  }
  return 0;
}
