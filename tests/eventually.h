// Waiting in tests for a condition another thread makes true: polls it to
// a deadline instead of sleeping a guessed time (STYLE.md 11).
#ifndef RNODE_TESTS_EVENTUALLY_H_
#define RNODE_TESTS_EVENTUALLY_H_

#include <chrono>
#include <thread>

namespace rnode::testing {

// Generous: a loaded machine or a sanitizer build is slow, and a condition
// that holds returns at once.
inline constexpr std::chrono::seconds kEventuallyPatience{20};

// Polls `done` every `poll` until it holds or `patience` passes; returns
// its last answer.
template <typename Condition>
bool Eventually(Condition done,
                std::chrono::milliseconds patience = kEventuallyPatience,
                std::chrono::milliseconds poll = std::chrono::milliseconds(1)) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(poll);
  }
  return true;
}

}  // namespace rnode::testing

#endif  // RNODE_TESTS_EVENTUALLY_H_
