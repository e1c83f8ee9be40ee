// The process allocator (docs/adr/0007-jemalloc.md): in builds that link
// jemalloc, malloc must really be served by it (a linker that drops an
// unreferenced library would silently leave glibc's malloc in place).
#include <cstdint>
#include <cstdlib>

#include "gtest/gtest.h"

#if RNODE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

namespace rnode {
namespace {

#if RNODE_JEMALLOC
uint64_t ThreadAllocatedBytes() {
  uint64_t bytes = 0;
  size_t size = sizeof(bytes);
  EXPECT_EQ(mallctl("thread.allocated", &bytes, &size, nullptr, 0), 0);
  return bytes;
}
#endif

TEST(AllocatorTest, MallocIsServedByJemalloc) {
#if RNODE_JEMALLOC
  constexpr size_t kSize = size_t{1} << 20;
  const uint64_t before = ThreadAllocatedBytes();
  void* p = std::malloc(kSize);
  ASSERT_NE(p, nullptr);
  const uint64_t after = ThreadAllocatedBytes();
  std::free(p);
  EXPECT_GE(after - before, kSize);
#else
  GTEST_SKIP() << "built without jemalloc (sanitizer preset)";
#endif
}

// util/allocator_conf.cc is linked in: jemalloc purges on its background
// threads.
TEST(AllocatorTest, JemallocPurgesOnBackgroundThreads) {
#if RNODE_JEMALLOC
  bool enabled = false;
  size_t size = sizeof(enabled);
  ASSERT_EQ(mallctl("opt.background_thread", &enabled, &size, nullptr, 0), 0);
  EXPECT_TRUE(enabled);
  ASSERT_EQ(mallctl("background_thread", &enabled, &size, nullptr, 0), 0);
  EXPECT_TRUE(enabled);
#else
  GTEST_SKIP() << "built without jemalloc (sanitizer preset)";
#endif
}

}  // namespace
}  // namespace rnode
