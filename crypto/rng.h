// A deterministic splittable random generator for unforgeable names.
//
// Every value is a Blake2b-256 of a domain tag, the generator's 32-byte state
// and a counter or index, so the names a deploy creates depend only on its
// seed (the deploy's signature) and on the path of splits and draws that led
// to them: never on threads, time or memory addresses. Format and rationale:
// docs/formats/rng.md.
//
// Thread safety: a SplittableRng is a value; Split() and Merge() are const
// and pure, Next() mutates. Give each task its own split.
#ifndef RNODE_CRYPTO_RNG_H_
#define RNODE_CRYPTO_RNG_H_

#include <cstdint>
#include <span>

#include "util/bytes.h"

namespace rnode::crypto {

class SplittableRng {
 public:
  // A generator seeded from arbitrary bytes (e.g. a deploy signature).
  static SplittableRng FromSeed(ByteView seed);

  // The `index`-th child: independent of the parent's draws and of every
  // other index. Does not change this generator.
  SplittableRng Split(uint64_t index) const;

  // The next 32 bytes; each call advances the counter.
  Hash32 Next();

  // A generator determined by `parts` in the given order (e.g. the
  // continuation's and the data's generators at a COMM event).
  static SplittableRng Merge(std::span<const SplittableRng> parts);

  const Hash32& state() const { return state_; }
  uint64_t counter() const { return counter_; }

  friend bool operator==(const SplittableRng&, const SplittableRng&) = default;

 private:
  SplittableRng(const Hash32& state, uint64_t counter)
      : state_(state), counter_(counter) {}

  Hash32 state_;
  uint64_t counter_;
};

}  // namespace rnode::crypto

#endif  // RNODE_CRYPTO_RNG_H_
