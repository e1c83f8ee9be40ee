// DiskGuard's free-space floor over an injected reading of the free space.
#include "node/core/disk_guard.h"

#include <thread>

#include "gtest/gtest.h"

namespace rnode::node {
namespace {

TEST(DiskGuardTest, TheFloorRefusesBelowItAndNeverOnAGuess) {
  absl::StatusOr<uint64_t> free = uint64_t{5000};
  int reads = 0;
  DiskGuard guard(nullptr, 0,
                  DiskFloor{.path = "/data",
                            .min_free = 4096,
                            .free_bytes = [&](const std::string& path) {
                              EXPECT_EQ(path, "/data");
                              ++reads;
                              return free;
                            }});
  EXPECT_FALSE(guard.BelowFloor().has_value());
  EXPECT_EQ(guard.FreeBytes(), 5000u);
  EXPECT_EQ(reads, 1);  // fresh for a while: read once
  free = uint64_t{4095};
  std::this_thread::sleep_for(DiskGuard::kFreshFor * 2);
  EXPECT_TRUE(guard.BelowFloor().has_value());
  EXPECT_EQ(reads, 2);
  // Unreadable: not below (the floor does not refuse on a guess).
  free = absl::PermissionDeniedError("no");
  std::this_thread::sleep_for(DiskGuard::kFreshFor * 2);
  EXPECT_FALSE(guard.BelowFloor().has_value());
  EXPECT_EQ(guard.FreeBytes(), std::nullopt);
  // A write failure is a separate verdict: the floor does not make the
  // store unwritable.
  EXPECT_TRUE(guard.Writable());
}

TEST(DiskGuardTest, WithoutAFloorNothingIsRefusedAndTheRealDiskIsRead) {
  DiskGuard guard(nullptr, 0, DiskFloor{.path = "/", .min_free = 0});
  EXPECT_FALSE(guard.BelowFloor().has_value());
  const std::optional<uint64_t> free = guard.FreeBytes();
  ASSERT_TRUE(free.has_value());
  EXPECT_GT(*free, 0u);
  EXPECT_EQ(FreeBytesAt("/no/such/dir").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace rnode::node
