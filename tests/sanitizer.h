// Whether the test binary runs under a sanitizer, so heavy tests can shrink
// their sizes instead of timing out (the asan and tsan presets).
#ifndef RNODE_TESTS_SANITIZER_H_
#define RNODE_TESTS_SANITIZER_H_

namespace rnode::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kUnderSanitizer = true;
#else
inline constexpr bool kUnderSanitizer = false;
#endif
#else
inline constexpr bool kUnderSanitizer = false;
#endif

// Whether it is ThreadSanitizer: its shadow call stack has a fixed size, and
// a recursion as deep as the term depth limit (building, walking and
// destroying a term kMaxIrDepth levels deep) overruns it and corrupts the
// runtime, which then crashes in its exit handlers after the test passed.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

}  // namespace rnode::testing

#endif  // RNODE_TESTS_SANITIZER_H_
