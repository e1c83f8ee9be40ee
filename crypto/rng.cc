// Splittable generator: Blake2b-256 over (tag, state, big-endian integer).
#include "crypto/rng.h"

#include "crypto/hash.h"

namespace rnode::crypto {
namespace {

// Domain tags keep seeding, splitting, drawing and merging apart: no output
// of one operation can equal an output of another on the same state.
enum Tag : uint8_t { kSeed = 0x01, kSplit = 0x02, kNext = 0x03, kMerge = 0x04 };

void PutBigEndian64(uint64_t v, uint8_t out[8]) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

Hash32 Derive(Tag tag, const Hash32& state, uint64_t n) {
  uint8_t tag_byte = tag;
  uint8_t be[8];
  PutBigEndian64(n, be);
  return Blake2b256Hasher()
      .Update(ByteView(&tag_byte, 1))
      .Update(state)
      .Update(ByteView(be, 8))
      .Finish();
}

}  // namespace

SplittableRng SplittableRng::FromSeed(ByteView seed) {
  uint8_t tag_byte = kSeed;
  return SplittableRng(
      Blake2b256Hasher().Update(ByteView(&tag_byte, 1)).Update(seed).Finish(),
      0);
}

SplittableRng SplittableRng::Split(uint64_t index) const {
  // The counter is folded in so that splitting before and after a draw
  // gives different children.
  Hash32 mixed = Derive(kSplit, state_, counter_);
  return SplittableRng(Derive(kSplit, mixed, index), 0);
}

Hash32 SplittableRng::Next() { return Derive(kNext, state_, counter_++); }

SplittableRng SplittableRng::Merge(std::span<const SplittableRng> parts) {
  uint8_t tag_byte = kMerge;
  Blake2b256Hasher h;
  h.Update(ByteView(&tag_byte, 1));
  uint8_t be[8];
  PutBigEndian64(parts.size(), be);
  h.Update(ByteView(be, 8));
  for (const SplittableRng& p : parts) {
    PutBigEndian64(p.counter_, be);
    h.Update(p.state_).Update(ByteView(be, 8));
  }
  return SplittableRng(h.Finish(), 0);
}

}  // namespace rnode::crypto
