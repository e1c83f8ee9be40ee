// Whether the test binary runs under a sanitizer, so heavy tests can shrink
// their sizes instead of timing out (the asan and tsan presets).
#ifndef RNODE_TESTS_SANITIZER_H_
#define RNODE_TESTS_SANITIZER_H_

// gcc says which sanitizer is on with __SANITIZE_*__, clang with
// __has_feature.
#if defined(__has_feature)
#define RNODE_TESTS_HAS_FEATURE(x) __has_feature(x)
#else
#define RNODE_TESTS_HAS_FEATURE(x) 0
#endif

namespace rnode::testing {

// ThreadSanitizer's shadow call stack has a fixed size: a recursion as deep
// as the term depth limit (building, walking and destroying a term
// kMaxIrDepth levels deep) overruns it and corrupts the runtime, which then
// crashes in its exit handlers after the test passed.
#if defined(__SANITIZE_THREAD__) || RNODE_TESTS_HAS_FEATURE(thread_sanitizer)
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

#if defined(__SANITIZE_ADDRESS__) || RNODE_TESTS_HAS_FEATURE(address_sanitizer)
inline constexpr bool kUnderAddressSanitizer = true;
#else
inline constexpr bool kUnderAddressSanitizer = false;
#endif

inline constexpr bool kUnderSanitizer =
    kUnderAddressSanitizer || kUnderThreadSanitizer;

}  // namespace rnode::testing

#undef RNODE_TESTS_HAS_FEATURE

#endif  // RNODE_TESTS_SANITIZER_H_
