// The relay between test hosts (rnode-netrelay) with real network
// namespaces: a TCP exchange between two hosts takes the links file's delay
// each way, a cut link carries nothing, and SIGHUP heals it. Needs root
// (namespaces, TUN devices) and iproute2's `ip`.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <regex>
#include <string>
#include <thread>

#include "integration/child_process.h"

namespace rnode {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Runs `fn` on a thread that has entered network namespace `ns`; sockets
// it makes belong to that namespace wherever they are used later.
template <typename F>
auto InNamespace(const std::string& ns, F fn) {
  return std::async(std::launch::async,
                    [ns, fn]() {
                      const int fd =
                          ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY);
                      if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
                        ADD_FAILURE() << "cannot enter namespace " << ns;
                      }
                      if (fd >= 0) ::close(fd);
                      return fn();
                    })
      .get();
}

sockaddr_in Address(const std::string& ip, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

// Connects `fd` to `to` within `patience`; false if it did not.
bool ConnectWithin(int fd, const sockaddr_in& to, milliseconds patience) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0) {
    return true;
  }
  if (errno != EINPROGRESS) return false;
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, static_cast<int>(patience.count())) != 1) return false;
  int error = 0;
  socklen_t len = sizeof error;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
  return error == 0;
}

class NetRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root: network namespaces and TUN devices";
    }
    // A machine (or container) without TUN devices or namespaces cannot
    // host the test: said, not failed.
    const int tun = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (tun < 0) GTEST_SKIP() << "no /dev/net/tun: " << std::strerror(errno);
    ::close(tun);
    const int id = static_cast<int>(::getpid() % 10000);
    const std::string probe = "nrt" + std::to_string(id) + "probe";
    if (std::system(("ip netns add " + probe + " 2>/dev/null").c_str()) != 0) {
      GTEST_SKIP() << "cannot make a network namespace (ip netns add)";
    }
    std::system(("ip netns del " + probe).c_str());
    tag_ = "nrt" + std::to_string(id);
    subnet_ = "10.213." + std::to_string(id % 250) + ".";
    dir_ = ::testing::TempDir() + tag_;
    std::filesystem::create_directories(dir_);
    links_ = dir_ + "/links";
    WriteLinks("* * delay=40\n");
    const std::string relay = RNODE_NETRELAY_PATH;
    log_ = dir_ + "/relay.log";
    ASSERT_TRUE(relay_.Spawn({relay, "--links", links_, "--seed", "7", "--host",
                              "a=" + tag_ + "a=" + subnet_ + "11", "--host",
                              "b=" + tag_ + "b=" + subnet_ + "12"},
                             log_));
    const auto until = Clock::now() + std::chrono::seconds(10);
    while (Log().find("netrelay: ready") == std::string::npos) {
      ASSERT_TRUE(relay_.Alive()) << Log();
      ASSERT_LT(Clock::now(), until) << Log();
      std::this_thread::sleep_for(milliseconds(10));
    }
    for (const char* host : {"a", "b"}) {
      const std::string ns = tag_ + host;
      const std::string ip = subnet_ + (host[0] == 'a' ? "11" : "12");
      Ip("netns add " + ns);
      Ip("link set " + ns + " netns " + ns);
      Ip("-n " + ns + " addr add " + ip + "/24 dev " + ns);
      Ip("-n " + ns + " link set " + ns + " up");
      Ip("-n " + ns + " link set lo up");
    }
  }

  void TearDown() override {
    relay_.Terminate(milliseconds(2000));
    if (!tag_.empty()) {
      std::system(("ip netns del " + tag_ + "a 2>/dev/null").c_str());
      std::system(("ip netns del " + tag_ + "b 2>/dev/null").c_str());
    }
  }

  void Ip(const std::string& args) {
    ASSERT_EQ(std::system(("ip " + args).c_str()), 0) << "ip " << args;
  }

  void WriteLinks(const std::string& text) {
    std::ofstream(links_, std::ios::trunc) << text;
  }

  std::string Log() {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // A listener on host b's address that echoes one byte per connection
  // for as long as the test runs; its port.
  int StartEcho() {
    const int fd = InNamespace(tag_ + "b", [] {
      return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    });
    const sockaddr_in at = Address(subnet_ + "12", 0);
    EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&at), sizeof at), 0);
    EXPECT_EQ(::listen(fd, 8), 0);
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
    echo_ = std::jthread([fd](std::stop_token stop) {
      while (!stop.stop_requested()) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) != 1) continue;
        const int c = ::accept(fd, nullptr, nullptr);
        if (c < 0) continue;
        // A client whose FIN the relay never delivered (it was stopped
        // first) must not hold this thread: wait for its byte in slices.
        pollfd in{c, POLLIN, 0};
        while (!stop.stop_requested() && ::poll(&in, 1, 50) == 0) {
        }
        char byte = 0;
        if ((in.revents & POLLIN) != 0 && ::read(c, &byte, 1) == 1) {
          (void)!::write(c, &byte, 1);
        }
        ::close(c);
      }
      ::close(fd);
    });
    return ntohs(bound.sin_port);
  }

  // A socket of host a.
  int SocketOfA() {
    return InNamespace(tag_ + "a", [] {
      return ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    });
  }

  std::string tag_;
  std::string subnet_;
  std::string dir_;
  std::string links_;
  std::string log_;
  testing::ChildProcess relay_;
  std::jthread echo_;
};

TEST_F(NetRelayTest, AnExchangeTakesTheDelayOnEveryCrossing) {
  const int port = StartEcho();
  const int fd = SocketOfA();
  const auto start = Clock::now();
  ASSERT_TRUE(
      ConnectWithin(fd, Address(subnet_ + "12", port), std::chrono::seconds(5)))
      << Log();
  const auto connected = Clock::now();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const char sent = 'x';
  ASSERT_EQ(::write(fd, &sent, 1), 1);
  char echoed = 0;
  ASSERT_EQ(::read(fd, &echoed, 1), 1);
  const auto answered = Clock::now();
  ::close(fd);
  EXPECT_EQ(echoed, 'x');
  // SYN, SYN-ACK: two crossings of 40 ms; the byte and its echo: two more.
  // Only the lower bound is the relay's doing; how much later is the
  // machine's.
  EXPECT_GE(connected - start, milliseconds(80));
  EXPECT_GE(answered - connected, milliseconds(80));
}

TEST_F(NetRelayTest, ACutLinkCarriesNothingUntilTheRulesAreReadAgain) {
  const int port = StartEcho();
  WriteLinks("a b cut\n");
  ASSERT_EQ(::kill(relay_.pid(), SIGHUP), 0);
  // The relay says so once it has read them.
  const auto until = Clock::now() + std::chrono::seconds(10);
  while (Log().find("links read again") == std::string::npos) {
    ASSERT_LT(Clock::now(), until) << Log();
    std::this_thread::sleep_for(milliseconds(10));
  }
  const int cut = SocketOfA();
  EXPECT_FALSE(
      ConnectWithin(cut, Address(subnet_ + "12", port), milliseconds(1500)));
  ::close(cut);

  WriteLinks("a b up\n");
  ASSERT_EQ(::kill(relay_.pid(), SIGHUP), 0);
  bool healed = false;
  for (int attempt = 0; attempt < 10 && !healed; ++attempt) {
    const int fd = SocketOfA();
    healed =
        ConnectWithin(fd, Address(subnet_ + "12", port), milliseconds(500));
    ::close(fd);
  }
  EXPECT_TRUE(healed) << Log();
  relay_.Terminate(milliseconds(2000));
  // Its counters on exit: what a sent b got through once healed, and the
  // SYNs of the cut attempt were dropped as cut.
  std::smatch m;
  const std::string log = Log();
  ASSERT_TRUE(std::regex_search(
      log, m, std::regex("a -> b: passed ([0-9]+), lost 0, cut ([0-9]+)")))
      << log;
  EXPECT_GT(std::stoull(m[1]), 0u);
  EXPECT_GT(std::stoull(m[2]), 0u);
}

}  // namespace
}  // namespace rnode
