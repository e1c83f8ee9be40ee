// The seed of every randomized test: RNODE_TEST_SEED or a fixed default,
// printed before the test body runs so a crash or timeout can be replayed.
#ifndef RNODE_TESTS_TEST_SEED_H_
#define RNODE_TESTS_TEST_SEED_H_

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include "gtest/gtest.h"

namespace rnode::testing {

// The environment variable that overrides every randomized test's seed.
inline constexpr char kTestSeedEnv[] = "RNODE_TEST_SEED";

// Returns the seed `test_name` should use: the value of RNODE_TEST_SEED when
// set, else `fixed_default`, so that an unset variable always gives the same
// inputs. RNODE_TEST_SEED is a decimal uint64, or "random" for a fresh seed
// from std::random_device (opt-in; CI leaves the variable unset). Any other
// value aborts the process with a message: a typo must not silently run
// seed 0 or the default.
//
// Always prints "<test_name> seed: N (RNODE_TEST_SEED=N to replay)" to stdout
// and flushes it, so the seed is in the log even if the test then crashes,
// hangs or times out. Setting RNODE_TEST_SEED=N reruns exactly those inputs.
inline uint64_t TestSeed(std::string_view test_name, uint64_t fixed_default) {
  uint64_t seed = fixed_default;
  if (const char* env = std::getenv(kTestSeedEnv); env != nullptr) {
    const std::string_view text(env);
    if (text == "random") {
      std::random_device device;
      seed = (static_cast<uint64_t>(device()) << 32) ^ device();
    } else {
      const auto [end, error] =
          std::from_chars(text.data(), text.data() + text.size(), seed);
      if (text.empty() || error != std::errc() ||
          end != text.data() + text.size()) {
        std::fprintf(stderr,
                     "%s=\"%s\" is neither a decimal uint64 nor \"random\"\n",
                     kTestSeedEnv, env);
        std::abort();
      }
    }
  }
  std::printf("%.*s seed: %llu (%s=%llu to replay)\n",
              static_cast<int>(test_name.size()), test_name.data(),
              static_cast<unsigned long long>(seed), kTestSeedEnv,
              static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return seed;
}

// As above, named after the running GoogleTest test ("Suite.Name").
// REQUIRES: called from inside a test body.
inline uint64_t TestSeed(uint64_t fixed_default) {
  const ::testing::TestInfo* info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name =
      info != nullptr
          ? std::string(info->test_suite_name()) + "." + info->name()
          : std::string("(no test)");
  return TestSeed(name, fixed_default);
}

}  // namespace rnode::testing

#endif  // RNODE_TESTS_TEST_SEED_H_
