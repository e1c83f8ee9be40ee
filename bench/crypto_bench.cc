// Hashes and signature checks: the per-deploy and per-block crypto costs.
#include <benchmark/benchmark.h>

#include "crypto/hash.h"
#include "crypto/rev_address.h"
#include "crypto/rng.h"
#include "crypto/secp256k1.h"

namespace rnode::crypto {
namespace {

Secp256k1PrivateKey BenchKey() {
  Secp256k1PrivateKey key{};
  key[31] = 7;
  return key;
}

void BM_Blake2b256(benchmark::State& state) {
  Bytes data(state.range(0), 0xab);
  for (auto _ : state) benchmark::DoNotOptimize(Blake2b256(data));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Blake2b256)->Arg(32)->Arg(1024)->Arg(64 << 10);

void BM_Keccak256(benchmark::State& state) {
  Bytes data(state.range(0), 0xab);
  for (auto _ : state) benchmark::DoNotOptimize(Keccak256(data));
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Keccak256)->Arg(32)->Arg(1024);

void BM_Secp256k1SignDer(benchmark::State& state) {
  Hash32 digest = Blake2b256(AsBytes("deploy"));
  Secp256k1PrivateKey key = BenchKey();
  for (auto _ : state) benchmark::DoNotOptimize(Secp256k1SignDer(digest, key));
}
BENCHMARK(BM_Secp256k1SignDer);

void BM_Secp256k1VerifyDer(benchmark::State& state) {
  Hash32 digest = Blake2b256(AsBytes("deploy"));
  Secp256k1PrivateKey key = BenchKey();
  Bytes sig = *Secp256k1SignDer(digest, key);
  Secp256k1PublicKey pub = Secp256k1PublicKeyOf(key);
  for (auto _ : state) {
    benchmark::DoNotOptimize(Secp256k1VerifyDer(digest, sig, pub));
  }
}
BENCHMARK(BM_Secp256k1VerifyDer);

void BM_RevAddressFromPublicKey(benchmark::State& state) {
  Secp256k1PublicKey pub = Secp256k1PublicKeyOf(BenchKey());
  for (auto _ : state) benchmark::DoNotOptimize(RevAddressFromPublicKey(pub));
}
BENCHMARK(BM_RevAddressFromPublicKey);

void BM_RngNext(benchmark::State& state) {
  SplittableRng rng = SplittableRng::FromSeed(AsBytes("seed"));
  for (auto _ : state) benchmark::DoNotOptimize(rng.Next());
}
BENCHMARK(BM_RngNext);

}  // namespace
}  // namespace rnode::crypto
