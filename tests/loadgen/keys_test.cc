// The keys file: the shape scripts/shard writes, and what it refuses.
#include "integration/loadgen/keys.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "util/bytes.h"

namespace rnode::loadgen {
namespace {

using ::testing::HasSubstr;

constexpr char kKeyOne[] =
    "0000000000000000000000000000000000000000000000000000000000000001";
constexpr char kKeyTwo[] =
    "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(ParseKeysTest, ReadsEveryKeyOfTheShardFile) {
  const std::string text = std::string(R"({"keys":[{"private":")") + kKeyOne +
                           R"(","public":"04aa","address":"1111"},)" +
                           R"({"private":")" + kKeyTwo + R"("}],)" +
                           R"("genesis_time_ms":1700000000000})";
  absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> keys =
      ParseKeys(text);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 2u);
  EXPECT_EQ(HexEncode((*keys)[0]), kKeyOne);
  EXPECT_EQ(HexEncode((*keys)[1]), kKeyTwo);
}

TEST(ParseKeysTest, AcceptsBareHexEntries) {
  absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> keys =
      ParseKeys(std::string(R"({"keys":[")") + kKeyTwo + R"("]})");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->size(), 1u);
}

struct BadKeys {
  std::string text;
  const char* problem;
};

TEST(ParseKeysTest, RefusesWhatIsNotAKeysFile) {
  const std::string zero(64, '0');
  const BadKeys cases[] = {
      {"{", "not JSON"},
      {R"([])", "expected {\"keys\""},
      {R"({"validators":[]})", "expected {\"keys\""},
      {R"({"keys":[]})", "no keys"},
      {std::string(R"({"keys":[")") + kKeyOne + R"(",{"public":"04"}]})",
       "keys[1]: no \"private\""},
      {R"({"keys":[{"private":5}]})", "keys[0]: the private key is not"},
      {R"({"keys":[{"private":"zz"}]})", "keys[0]: private key:"},
      {R"({"keys":[{"private":"00ff"}]})", "keys[0]: private key:"},
      {R"({"keys":[")" + zero + R"("]})", "keys[0]: private key:"},
  };
  for (const BadKeys& c : cases) {
    absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> keys =
        ParseKeys(c.text);
    ASSERT_FALSE(keys.ok()) << c.text;
    EXPECT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument)
        << c.text;
    EXPECT_THAT(Message(keys.status()), HasSubstr(c.problem)) << c.text;
  }
}

TEST(ParseKeysTest, RefusesMoreThanTheBound) {
  std::string text = R"({"keys":[)";
  for (size_t i = 0; i <= kMaxKeys; ++i) {
    if (i > 0) text += ",";
    text += std::string("\"") + kKeyOne + "\"";
  }
  text += "]}";
  absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> keys =
      ParseKeys(text);
  ASSERT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(keys.status()), HasSubstr("at most"));
}

TEST(LoadKeysFileTest, MissingFileIsNotFound) {
  EXPECT_EQ(LoadKeysFile("/nonexistent/keys.json").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(LoadKeysFileTest, ReadsAFileAndNamesItInErrors) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::filesystem::path good =
      dir / ("loadgen_keys_test_good_" + std::to_string(::getpid()));
  const std::filesystem::path bad =
      dir / ("loadgen_keys_test_bad_" + std::to_string(::getpid()));
  std::ofstream(good) << R"({"keys":[{"private":")" << kKeyOne << R"("}]})";
  std::ofstream(bad) << "not json";
  absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> keys =
      LoadKeysFile(good.string());
  absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> refused =
      LoadKeysFile(bad.string());
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->size(), 1u);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(refused.status()), HasSubstr(bad.string()));
}

}  // namespace
}  // namespace rnode::loadgen
