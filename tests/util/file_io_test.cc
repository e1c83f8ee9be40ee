// Tests for the small-file writer and reader: exact modes whatever the
// umask, atomic replacement, no symlink followed, bounded reads.
#include "util/file_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"

namespace rnode {
namespace {

namespace fs = std::filesystem;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("rnode_file_io_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)),
                       std::istreambuf_iterator<char>());
  }
  static mode_t ModeOf(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
  }

  fs::path dir_;
};

TEST_F(FileIoTest, TheModeIsExactWhateverTheUmask) {
  const mode_t old = ::umask(0);
  ASSERT_TRUE(WriteFileAtomically((dir_ / "secret").string(), "k", 0600).ok());
  ::umask(077);
  ASSERT_TRUE(WriteFileAtomically((dir_ / "public").string(), "p", 0644).ok());
  ::umask(old);
  EXPECT_EQ(ModeOf(dir_ / "secret"), 0600u);
  EXPECT_EQ(ModeOf(dir_ / "public"), 0644u);
  EXPECT_EQ(Read(dir_ / "secret"), "k");
}

TEST_F(FileIoTest, AFileIsReplacedWholeAndNoTemporaryFileStays) {
  const std::string path = (dir_ / "f").string();
  ASSERT_TRUE(WriteFileAtomically(path, "first version", 0600).ok());
  ASSERT_TRUE(WriteFileAtomically(path, "second", 0600).ok());
  EXPECT_EQ(Read(path), "second");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

// Whoever can write the directory may plant a symlink at the temporary
// path; writing through it would put the secret where they can read it
// (regression: the validator key was written through such a link).
TEST_F(FileIoTest, ASymlinkAtTheTemporaryPathIsNotFollowed) {
  const fs::path trap = dir_ / "attackers_file";
  std::ofstream(trap) << "";
  const std::string path = (dir_ / "validator.key").string();
  fs::create_symlink(trap, path + ".tmp");
  ASSERT_TRUE(WriteFileAtomically(path, "secret", 0600).ok());
  EXPECT_EQ(Read(trap), "");
  EXPECT_EQ(Read(path), "secret");
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(path)));
  EXPECT_EQ(ModeOf(path), 0600u);
}

TEST_F(FileIoTest, AWriteIntoAMissingDirectoryFailsNamingTheFile) {
  const std::string path = (dir_ / "no" / "such" / "f").string();
  const absl::Status s = WriteFileAtomically(path, "x", 0600);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find(path), std::string::npos) << s;
}

TEST_F(FileIoTest, ReadSmallFileReadsAndBounds) {
  const std::string path = (dir_ / "f").string();
  ASSERT_TRUE(WriteFileAtomically(path, "0123456789", 0600).ok());
  absl::StatusOr<std::string> text = ReadSmallFile(path, 10);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "0123456789");
  EXPECT_EQ(ReadSmallFile(path, 9).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadSmallFile((dir_ / "none").string(), 10).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadSmallFile(dir_.string(), 10).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace rnode
