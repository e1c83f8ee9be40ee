// Invariants (STYLE.md 6): CHECK aborts with a message where going on would
// corrupt consensus state; DCHECK does the same in debug builds only
// (NDEBUG off) and compiles to nothing otherwise, its condition unevaluated.
// Neither ever validates peer, client or file input: that returns a Status.
//
//   CHECK(index < size, "chunk index past the blob");
#ifndef RNODE_UTIL_CHECK_H_
#define RNODE_UTIL_CHECK_H_

#include <cstdio>
#include <cstdlib>

namespace rnode::internal {

// Prints "FILE:LINE: CHECK failed: COND: MESSAGE" to stderr and aborts.
[[noreturn]] inline void CheckFailed(const char* file, int line,
                                     const char* condition,
                                     const char* message) {
  std::fprintf(stderr, "%s:%d: CHECK failed: %s: %s\n", file, line, condition,
               message);
  std::fflush(stderr);
  std::abort();
}

}  // namespace rnode::internal

#define CHECK(condition, message)                                              \
  do {                                                                         \
    if (!(condition)) [[unlikely]] {                                           \
      ::rnode::internal::CheckFailed(__FILE__, __LINE__, #condition, message); \
    }                                                                          \
  } while (false)

#ifdef NDEBUG
#define DCHECK(condition, message) \
  do {                             \
    if (false) {                   \
      (void)(condition);           \
    }                              \
  } while (false)
#else
#define DCHECK(condition, message) CHECK(condition, message)
#endif

#endif  // RNODE_UTIL_CHECK_H_
