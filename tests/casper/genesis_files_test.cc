// bonds.txt and wallets.txt parsing: accepted shapes and every refusal, each
// naming the file and line.
#include "casper/genesis/genesis_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "util/bytes.h"

namespace rnode::casper::genesis {
namespace {

using ::testing::HasSubstr;

// Well-known development keys and their REV addresses (see
// tests/crypto/rev_address_test.cc).
constexpr char kPk1[] =
    "04ffc016579a68050d655d55df4e09f04605164543e257c8e6df10361e6068a533"
    "6588e9b355ea859c5ab4285a5ef0efdf62bc28b80320ce99e26bb1607b3ad93d";
constexpr char kPk2[] =
    "04fa70d7be5eb750e0915c0f6d19e7085d18bb1c22d030feb2a877ca2cd226d044"
    "38aa819359c56c720142fbc66e9da03a5ab960a3d8b75363a226b7c800f60420";
constexpr char kAddr1[] = "1111AtahZeefej4tvVR6ti9TJtv8yxLebT31SCEVDCKMNikBk5r3g";
constexpr char kAddr2[] = "111127RX5ZgiAdRaQy4AWy57RdvAAckdELReEBxzvWYVvdnR32PiHA";

std::string Line(const char* a, const char* sep, const char* b) {
  return std::string(a) + sep + b;
}

TEST(ParseBondsTest, ReadsValidatorsInFileOrder) {
  std::string text = Line(kPk1, " ", "1000") + "\n" + Line(kPk2, " ", "7");
  absl::StatusOr<std::vector<Bond>> bonds = ParseBonds(text, "bonds.txt");
  ASSERT_TRUE(bonds.ok()) << bonds.status();
  ASSERT_EQ(bonds->size(), 2u);
  EXPECT_EQ(HexEncode((*bonds)[0].validator), kPk1);
  EXPECT_EQ((*bonds)[0].stake, 1000);
  EXPECT_EQ(HexEncode((*bonds)[1].validator), kPk2);
  EXPECT_EQ((*bonds)[1].stake, 7);
}

TEST(ParseBondsTest, SkipsBlankLinesAndToleratesCrlf) {
  std::string text =
      "\n" + Line(kPk1, " ", "5") + "\r\n   \n" + Line(kPk2, " ", "6") + "\r\n";
  absl::StatusOr<std::vector<Bond>> bonds = ParseBonds(text, "bonds.txt");
  ASSERT_TRUE(bonds.ok()) << bonds.status();
  EXPECT_EQ(bonds->size(), 2u);
}

struct BadCase {
  std::string text;
  std::string expected;  // substring of the error
};

class ParseBondsRefusesTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseBondsRefusesTest, NamesFileLineAndReason) {
  absl::StatusOr<std::vector<Bond>> bonds = ParseBonds(GetParam().text, "b.txt");
  ASSERT_FALSE(bonds.ok());
  EXPECT_EQ(bonds.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bonds.status().message()),
              HasSubstr(GetParam().expected));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseBondsRefusesTest,
    ::testing::Values(
        BadCase{"", "no validators"}, BadCase{"\n\n", "no validators"},
        BadCase{Line(kPk1, "  ", "5"), "b.txt:1: expected"},
        BadCase{Line(kPk1, "\t", "5"), "b.txt:1: expected"},
        BadCase{kPk1, "b.txt:1: expected"},
        BadCase{Line(kPk1, " ", "-5"), "b.txt:1: stake `-5`"},
        BadCase{Line(kPk1, " ", "0"), "b.txt:1: stake must be at least 1"},
        BadCase{Line(kPk1, " ", "12a"), "not a decimal number"},
        BadCase{Line(kPk1, " ", "9223372036854775808"),
                "above the largest Int"},
        BadCase{Line("04zz", " ", "5"), "b.txt:1: public key"},
        BadCase{Line("02ffc016579a68050d655d55df4e09f04605164543e257c8e6df1036"
                     "1e6068a533",
                     " ", "5"),
                "b.txt:1: public key"},
        BadCase{Line(kPk1, " ", "5") + "\n" + Line(kPk2, " ", "5") + "\n" +
                    Line(kPk1, " ", "9"),
                "b.txt:3: validator already bonded on line 1"}));

TEST(ParseBondsTest, LargestStakeIsAccepted) {
  absl::StatusOr<std::vector<Bond>> bonds =
      ParseBonds(Line(kPk1, " ", "9223372036854775807"), "b.txt");
  ASSERT_TRUE(bonds.ok()) << bonds.status();
  EXPECT_EQ((*bonds)[0].stake, INT64_MAX);
}

TEST(ParseWalletsTest, ReadsWalletsAndTheirKeyHashes) {
  std::string text = Line(kAddr1, ",", "50000000000000000") + "\n" +
                     Line(kAddr2, ",", "0") + "\n";
  absl::StatusOr<std::vector<Wallet>> wallets = ParseWallets(text, "w.txt");
  ASSERT_TRUE(wallets.ok()) << wallets.status();
  ASSERT_EQ(wallets->size(), 2u);
  EXPECT_EQ((*wallets)[0].address, kAddr1);
  EXPECT_EQ((*wallets)[0].balance, 50000000000000000);
  EXPECT_EQ((*wallets)[1].balance, 0);
  EXPECT_NE((*wallets)[0].key_hash, (*wallets)[1].key_hash);
}

TEST(ParseWalletsTest, EmptyFileMeansNoWallets) {
  absl::StatusOr<std::vector<Wallet>> wallets = ParseWallets("\n", "w.txt");
  ASSERT_TRUE(wallets.ok()) << wallets.status();
  EXPECT_TRUE(wallets->empty());
}

class ParseWalletsRefusesTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(ParseWalletsRefusesTest, NamesFileLineAndReason) {
  absl::StatusOr<std::vector<Wallet>> w = ParseWallets(GetParam().text, "w.txt");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(w.status().message()), HasSubstr(GetParam().expected));
}

std::string CorruptChecksum(std::string addr) {
  addr.back() = addr.back() == 'g' ? 'h' : 'g';
  return addr;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseWalletsRefusesTest,
    ::testing::Values(
        BadCase{Line(kAddr1, " ", "5"), "w.txt:1: expected"},
        BadCase{Line(kAddr1, ",", "5") + ",0", "w.txt:1: expected"},
        BadCase{"\n" + Line(kAddr1, ",", "-1"), "w.txt:2: balance `-1`"},
        BadCase{Line(kAddr1, ",", ""), "w.txt:1: balance ``"},
        BadCase{Line(kAddr1, ",", "99999999999999999999"),
                "above the largest Int"},
        BadCase{CorruptChecksum(kAddr1) + ",5", "w.txt:1: address"},
        BadCase{"0xabc,5", "w.txt:1: address"},
        BadCase{Line(kAddr1, ",", "1") + "\n" + Line(kAddr1, ",", "2"),
                "w.txt:2: address already listed on line 1"}));

TEST(ReadGenesisFileTest, ReadsWholeFileAndReportsMissingOnes) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("rnode-genesis-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "bonds.txt").string();
  {
    std::ofstream out(path, std::ios::binary);
    out << Line(kPk1, " ", "10");
  }
  absl::StatusOr<std::string> text = ReadGenesisFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, Line(kPk1, " ", "10"));
  absl::StatusOr<std::string> missing =
      ReadGenesisFile((dir / "nope.txt").string());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace rnode::casper::genesis
