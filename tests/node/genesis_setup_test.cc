// Tests for how a node settles its validator key (node/core/genesis_setup.h):
// where it comes from, and that it does not leak through the environment or
// a planted symlink.
#include "node/core/genesis_setup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

#include "crypto/secp256k1.h"
#include "gtest/gtest.h"
#include "node/config/config.h"
#include "util/bytes.h"

namespace rnode::node {
namespace {

namespace fs = std::filesystem;

constexpr char kKeyHex[] =
    "a2803d16030f83757a5043e5c0e28573685f6d8bf4e358bf1a5c2d3b6e9a8b5c";
constexpr char kVariable[] = "RNODE_VALIDATOR_PRIVATE_KEY";

class ResolveKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("rnode_resolve_key_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::unsetenv(kVariable);
  }
  void TearDown() override {
    ::unsetenv(kVariable);
    fs::remove_all(dir_);
  }
  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
  }

  fs::path dir_;
  std::ostringstream out_;
};

// A child process (or a core dump's environment block) must not inherit
// the key (regression: the variable stayed set for the node's lifetime).
TEST_F(ResolveKeyTest, TheEnvironmentKeyIsReadThenRemoved) {
  ASSERT_EQ(::setenv(kVariable, kKeyHex, 1), 0);
  NodeConfig c;
  absl::StatusOr<std::optional<crypto::Secp256k1PrivateKey>> key =
      ResolveKey(c, dir_.string(), out_);
  ASSERT_TRUE(key.ok()) << key.status();
  ASSERT_TRUE(key->has_value());
  EXPECT_EQ(HexEncode(**key), kKeyHex);
  EXPECT_EQ(std::getenv(kVariable), nullptr);
}

TEST_F(ResolveKeyTest, ABadEnvironmentKeyIsRefusedAndRemovedToo) {
  ASSERT_EQ(::setenv(kVariable, "not hex", 1), 0);
  NodeConfig c;
  EXPECT_EQ(ResolveKey(c, dir_.string(), out_).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::getenv(kVariable), nullptr);
}

// Whoever can write the data dir may plant a symlink where the key's
// temporary file goes (regression: the generated key was written through
// it, into a file of the attacker's, and was world-readable until a chmod).
TEST_F(ResolveKeyTest, AGeneratedKeyIsOwnerOnlyAndNotWrittenThroughASymlink) {
  const fs::path trap = dir_ / "attackers_file";
  std::ofstream(trap) << "";
  fs::create_symlink(trap, dir_ / "validator.key.tmp");
  NodeConfig c;
  c.standalone = true;
  absl::StatusOr<std::optional<crypto::Secp256k1PrivateKey>> key =
      ResolveKey(c, dir_.string(), out_);
  ASSERT_TRUE(key.ok()) << key.status();
  ASSERT_TRUE(key->has_value());
  EXPECT_EQ(Read(trap), "");
  const fs::path path = dir_ / "validator.key";
  EXPECT_EQ(Read(path), HexEncode(**key) + "\n");
  struct stat st {};
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  // The next start reads the same key.
  absl::StatusOr<std::optional<crypto::Secp256k1PrivateKey>> again =
      ResolveKey(c, dir_.string(), out_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(HexEncode(**again), HexEncode(**key));
}

TEST_F(ResolveKeyTest, AKeyFileThatIsNotASmallRegularFileIsRefused) {
  NodeConfig c;
  c.validator_private_key_path = dir_.string();  // a directory
  EXPECT_EQ(ResolveKey(c, dir_.string(), out_).status().code(),
            absl::StatusCode::kInvalidArgument);
  const fs::path big = dir_ / "big";
  std::ofstream(big) << std::string(1 << 20, 'a');
  c.validator_private_key_path = big.string();
  EXPECT_EQ(ResolveKey(c, dir_.string(), out_).status().code(),
            absl::StatusCode::kInvalidArgument);
  c.validator_private_key_path = (dir_ / "none").string();
  EXPECT_EQ(ResolveKey(c, dir_.string(), out_).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(ResolveKeyTest, AReadOnlyNodeHasNoKey) {
  NodeConfig c;
  absl::StatusOr<std::optional<crypto::Secp256k1PrivateKey>> key =
      ResolveKey(c, dir_.string(), out_);
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_FALSE(key->has_value());
}

}  // namespace
}  // namespace rnode::node
