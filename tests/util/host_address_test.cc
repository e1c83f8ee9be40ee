// Tests for host classification: loopback and private hosts, in every form
// a setting or a peer's address may take.
#include "util/host_address.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rnode {
namespace {

TEST(HostAddressTest, LoopbackHosts) {
  for (const std::string host :
       {"127.0.0.1", "127.9.9.9", "::1", "[::1]", "::ffff:127.0.0.1",
        "localhost", "LocalHost", "node.localhost"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const std::string host :
       {"10.0.0.1", "0.0.0.0", "::", "::2", "[::]", "::ffff:10.0.0.1",
        "128.0.0.1", "example.org", "localhost.example.org", ""}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

TEST(HostAddressTest, PrivateHosts) {
  struct Case {
    std::string host;
    bool is_private;
  };
  const std::vector<Case> cases = {
      {"127.0.0.1", true},
      {"127.8.9.10", true},
      {"10.1.2.3", true},
      {"172.16.0.1", true},
      {"172.31.255.255", true},
      {"192.168.1.1", true},
      {"169.254.3.4", true},
      {"0.0.0.0", true},
      {"::", true},
      {"::1", true},
      {"[::1]", true},
      {"::ffff:10.0.0.1", true},
      {"fd00::1", true},
      {"fe80::1", true},
      {"localhost", true},
      {"LocalHost", true},
      {"8.8.8.8", false},
      {"172.32.0.1", false},
      {"172.15.255.255", false},
      {"192.169.0.1", false},
      {"2001:db8::1", false},
      {"::ffff:8.8.8.8", false},
      {"node.example.org", false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(IsPrivateHost(c.host), c.is_private) << c.host;
  }
}

}  // namespace
}  // namespace rnode
