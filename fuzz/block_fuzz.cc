// libFuzzer target over a block as it arrives from a peer: bytes are decoded
// as the network decodes them (block::DecodeBlock), then put through the
// checks that need neither the DAG's contents nor a state. Asserted:
//  - a decoded block re-encodes (EncodeBlock) to bytes that decode to an
//    equal block and encode to the same bytes again (the canonical encoding
//    is a fixed point), with the same hash and seal verdict;
//  - its DAG metadata record (dag::MetaOf) survives EncodeBlockMeta /
//    DecodeBlockMeta;
//  - the validator, run against an empty DAG, never accepts the block and
//    never reports an internal error: it stops at the seal, form or shard
//    check, at "no parents", or with the block's missing dependencies (each
//    one a hash the block names, ascending); a seal failure is reported
//    exactly when CheckSeal finds one;
//  - re-signed with a fixed key (SignBlock), the block passes CheckSeal, the
//    round trip above, and the validator gets past the seal.
// Any broken property traps.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <utility>
#include <variant>

#include "casper/block/block.h"
#include "casper/block/block_codec.h"
#include "casper/dag/dag_store.h"
#include "casper/validation/validator.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"

namespace {

using rnode::Bytes;
using rnode::ByteView;
using rnode::Hash32;
using rnode::casper::block::Block;
using rnode::casper::block::SealError;
using rnode::casper::dag::DagStore;
using rnode::casper::validation::InvalidReason;
using rnode::casper::validation::Verdict;

// Larger inputs only add allocation time: a block's structure fits well
// below this.
constexpr size_t kMaxInputBytes = size_t{1} << 20;
// Columns of the DAG's in-memory store (dag::DagColumns).
constexpr size_t kDagColumns = 4;
// The validator's local time: fixed, so a run does not depend on the clock.
constexpr int64_t kNowMs = 1'700'000'000'000;
// The re-signing key: any scalar in [1, n) of secp256k1.
constexpr uint8_t kSigningKeyByte = 0x11;

// A DAG with no block. The validator only reads it, so one serves every run.
DagStore& EmptyDag() {
  static auto* store = new rnode::rspace::InMemoryStore(kDagColumns);
  static DagStore* dag = [] {
    auto d = DagStore::Open(store, rnode::casper::dag::DagColumns{});
    if (!d.ok()) std::abort();
    return d->release();
  }();
  return *dag;
}

// Runs the validator on `b` against the empty DAG. Execution, the bonds
// cache and the pool are null: a block whose dependencies are not stored
// must never reach them, so a regression that does crashes here.
Verdict ValidateWithoutDag(const Block& b) {
  rnode::casper::validation::BlockValidator validator(
      &EmptyDag(), /*executor=*/nullptr, /*validators=*/nullptr,
      /*pool=*/nullptr, rnode::casper::validation::ValidatorOptions{});
  return validator.Validate(b, kNowMs);
}

// The hashes a block needs stored before it can be judged.
std::set<Hash32> Dependencies(const Block& b) {
  std::set<Hash32> out(b.header.parents.begin(), b.header.parents.end());
  for (const auto& j : b.justifications) out.insert(j.latest_block);
  for (const auto& s : b.body.system_deploys) {
    if (const auto* slash =
            std::get_if<rnode::casper::block::SlashDeploy>(&s.deploy)) {
      out.insert(slash->invalid_block);
    }
  }
  return out;
}

void CheckVerdict(const Block& b, SealError seal, const Verdict& v) {
  switch (v.kind) {
    case Verdict::Kind::kValid:
    case Verdict::Kind::kInternal:
    case Verdict::Kind::kStale:  // the fuzzed DAG has no floor
      __builtin_trap();
    case Verdict::Kind::kMissingDependency: {
      // The seal and the form are checked before the dependencies.
      if (seal != SealError::kNone || v.missing.empty()) __builtin_trap();
      if (std::adjacent_find(v.missing.begin(), v.missing.end(),
                             std::greater_equal<Hash32>()) != v.missing.end()) {
        __builtin_trap();
      }
      const std::set<Hash32> named = Dependencies(b);
      for (const Hash32& h : v.missing) {
        if (!named.contains(h)) __builtin_trap();
      }
      return;
    }
    case Verdict::Kind::kInvalid: {
      const InvalidReason r = v.reason;
      const bool seal_reason = r == InvalidReason::kInvalidBlockHash ||
                               r == InvalidReason::kInvalidSignature;
      const bool early_reason = r == InvalidReason::kInvalidFormat ||
                                r == InvalidReason::kInvalidShardId ||
                                r == InvalidReason::kInvalidParents;
      // Every later check needs a stored parent.
      if (!seal_reason && !early_reason) __builtin_trap();
      if (seal_reason != (seal != SealError::kNone)) __builtin_trap();
      if ((r == InvalidReason::kInvalidBlockHash) !=
          (seal == SealError::kHashMismatch)) {
        __builtin_trap();
      }
      // With stored parents it would be judged further, never "no parents".
      if (r == InvalidReason::kInvalidParents && !b.header.parents.empty()) {
        __builtin_trap();
      }
      return;
    }
  }
}

// Encode, decode, encode: equal blocks, equal bytes, equal hash and seal.
void CheckRoundTrip(const Block& b, SealError seal) {
  const Bytes encoded = rnode::casper::block::EncodeBlock(b);
  auto again = rnode::casper::block::DecodeBlock(encoded);
  if (!again.ok() || !(*again == b)) __builtin_trap();
  if (rnode::casper::block::EncodeBlock(*again) != encoded) __builtin_trap();
  if (rnode::casper::block::ComputeBlockHash(*again) !=
      rnode::casper::block::ComputeBlockHash(b)) {
    __builtin_trap();
  }
  if (rnode::casper::block::CheckSeal(*again) != seal) __builtin_trap();
  const rnode::casper::dag::BlockMeta meta =
      rnode::casper::dag::MetaOf(b, /*invalid=*/false);
  auto meta_again = rnode::casper::dag::DecodeBlockMeta(
      rnode::casper::dag::EncodeBlockMeta(meta));
  if (!meta_again.ok() || !(*meta_again == meta)) __builtin_trap();
}

void CheckBlock(const Block& b) {
  const SealError seal = rnode::casper::block::CheckSeal(b);
  CheckRoundTrip(b, seal);
  CheckVerdict(b, seal, ValidateWithoutDag(b));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInputBytes) return 0;
  auto decoded = rnode::casper::block::DecodeBlock(ByteView(data, size));
  if (!decoded.ok()) return 0;
  CheckBlock(*decoded);

  Block resigned = *std::move(decoded);
  rnode::crypto::Secp256k1PrivateKey key;
  key.fill(kSigningKeyByte);
  if (!rnode::casper::block::SignBlock(resigned, key).ok()) __builtin_trap();
  if (rnode::casper::block::CheckSeal(resigned) != SealError::kNone) {
    __builtin_trap();
  }
  CheckBlock(resigned);
  return 0;
}
