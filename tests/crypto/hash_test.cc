// Published test vectors for the hash functions.
#include "crypto/hash.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/bytes_util.h"

namespace rnode::crypto {
namespace {

struct Vector {
  std::string input;
  std::string expected_hex;
};

TEST(HashTest, Blake2b256Vectors) {
  for (const Vector& v : std::vector<Vector>{
           {"", "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"},
           {"abc",
            "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319"},
       }) {
    EXPECT_EQ(HexEncode(Blake2b256(AsBytes(v.input))), v.expected_hex)
        << v.input;
  }
}

TEST(HashTest, Blake2b512Vectors) {
  EXPECT_EQ(HexEncode(Blake2b512(AsBytes(""))),
            "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419"
            "d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce");
  EXPECT_EQ(HexEncode(Blake2b512(AsBytes("abc"))),
            "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
            "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923");
}

TEST(HashTest, Sha256Vectors) {
  for (const Vector& v : std::vector<Vector>{
           {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
           {"abc",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
       }) {
    EXPECT_EQ(HexEncode(Sha256(AsBytes(v.input))), v.expected_hex) << v.input;
  }
}

TEST(HashTest, Keccak256IsEthereumKeccakNotSha3) {
  for (const Vector& v : std::vector<Vector>{
           {"", "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
           {"abc",
            "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"},
       }) {
    EXPECT_EQ(HexEncode(Keccak256(AsBytes(v.input))), v.expected_hex)
        << v.input;
  }
  // SHA3-256("") differs; make sure we are not computing it.
  EXPECT_NE(HexEncode(Keccak256(AsBytes(""))),
            "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
}

TEST(HashTest, Blake2b256OfSignedDeployPreimageMatchesPublicVector) {
  // The signed-subset proto bytes of a deploy and their digest, as published
  // for the public node's deploy signing.
  Bytes preimage = rnode::testing::Unhex(
      "12126e6577207820696e207b207821283129207d1880d095ffbc31380140a08d065a04"
      "726f6f74");
  EXPECT_EQ(HexEncode(Blake2b256(preimage)),
            "974ace95de3b85a3e5373678ab616732147cd8a7a0463dee9e055403617b3fc6");
}

TEST(HashTest, IncrementalBlake2bEqualsOneShot) {
  std::string a(1000, 'x');
  std::string b = "tail";
  Hash32 incremental =
      Blake2b256Hasher().Update(AsBytes(a)).Update(AsBytes(b)).Finish();
  EXPECT_EQ(incremental, Blake2b256(AsBytes(a + b)));
  EXPECT_EQ(Blake2b256Hasher().Finish(), Blake2b256({}));
}

}  // namespace
}  // namespace rnode::crypto
