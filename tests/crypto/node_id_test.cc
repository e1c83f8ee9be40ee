// Node ids from P-256 keys: published ids and PEM parsing.
#include "crypto/node_id.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/bytes_util.h"

namespace rnode::crypto {
namespace {

using rnode::testing::Unhex;

// Public keys of the public network's development TLS certificates and the
// node ids it publishes for them.
TEST(NodeIdTest, PublishedNodeIds) {
  struct V {
    const char* point;
    const char* node_id;
  } vectors[] = {
      {"04008119bf90eb0109a0ea679fdf5e728ccf3c1bb351a609b31e565c0c6cf262d5"
       "76836896f0b06304b8d88747431879092929519d06ae5f3996ad010d593ff137",
       "1e780e5dfbe0a3d9470a2b414f502d59402e09c2"},
      {"049ad9bdd5b71484e9781a4a89a67bca0882b73b9fbe91e28d18409d0e0ae2c9cd"
       "8a154f57978fb2dce7dfc3044fd3df9467c487ef120a97e255ad5f050cabb985",
       "24f315807e49a51b6c5ae18553ddc14f60418db4"},
      {"0429a78cb93497a4b3604fb6fee48adb5f06b82ae6ef966fd530d4d3b5bb824d7e"
       "8e5c8231975a46c3388e5761a5fe6dccf022c75a93d4c60efc49155e33def1e1",
       "cf0e82074956a32efab6af9af5d1aa0efed547d4"},
      {"04475b61e69c40ee1651438ab217f19974944e88658fe148578f1d98391f2cf913"
       "7b1425bfcf83e3a69603df5cc8e428d1d95659354eb73ad0c1c428d1127c37bc",
       "a5aec03d60a08500cbebbbe48de6e49bed9491bb"},
  };
  for (const V& v : vectors) {
    Bytes point = Unhex(v.point);
    EXPECT_EQ(*NodeIdFromP256Point(point), v.node_id);
    EXPECT_EQ(*NodeIdFromP256Point(ByteView(point).subspan(1)), v.node_id);
  }
}

TEST(NodeIdTest, WrongPointLengthIsInvalidArgument) {
  EXPECT_EQ(NodeIdFromP256Point(Bytes(33, 2)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NodeIdFromP256Point(Bytes(65, 0x02)).status().code(),
            absl::StatusCode::kInvalidArgument);
}

struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct BioFree {
  void operator()(BIO* p) const { BIO_free(p); }
};

std::string ToPem(EVP_PKEY* key, bool private_key) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (private_key) {
    PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                             nullptr);
  } else {
    PEM_write_bio_PUBKEY(bio.get(), key);
  }
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, len);
}

TEST(NodeIdTest, PemKeysGiveIdOfTheirPoint) {
  std::unique_ptr<EVP_PKEY, PkeyFree> key(EVP_EC_gen("P-256"));
  ASSERT_NE(key, nullptr);
  uint8_t point[65];
  size_t len = 0;
  ASSERT_EQ(EVP_PKEY_get_octet_string_param(
                key.get(), "encoded-pub-key", point, sizeof point, &len),
            1);
  std::string expected = *NodeIdFromP256Point(ByteView(point, len));
  EXPECT_EQ(*NodeIdFromPem(ToPem(key.get(), false)), expected);
  EXPECT_EQ(*NodeIdFromPem(ToPem(key.get(), true)), expected);
}

TEST(NodeIdTest, NonP256OrGarbagePemIsInvalidArgument) {
  EXPECT_EQ(NodeIdFromPem("not a pem").status().code(),
            absl::StatusCode::kInvalidArgument);
  std::unique_ptr<EVP_PKEY, PkeyFree> other(EVP_EC_gen("secp384r1"));
  ASSERT_NE(other, nullptr);
  EXPECT_THAT(NodeIdFromPem(ToPem(other.get(), false)).status().message(),
              ::testing::HasSubstr("P-256"));
}

}  // namespace
}  // namespace rnode::crypto
