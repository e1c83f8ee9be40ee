// A TCP proxy on 127.0.0.1 that holds every chunk it relays for a fixed
// delay before passing it on, in both directions: a peer "far away" for
// tests of what a connection does over a long path. Each connection gets
// a connection to the target and two pump threads; Stop() (or the
// destructor) closes everything and joins them.
#ifndef RNODE_TESTS_NODE_P2P_DELAY_PROXY_H_
#define RNODE_TESTS_NODE_P2P_DELAY_PROXY_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace rnode::testing {

class DelayProxy {
 public:
  // Listens on an ephemeral port and relays to 127.0.0.1:`target_port`.
  DelayProxy(int target_port, std::chrono::milliseconds delay)
      : target_port_(target_port), delay_(delay) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) !=
            0 ||
        ::listen(listener_, 16) != 0) {
      return;
    }
    socklen_t len = sizeof addr;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~DelayProxy() { Stop(); }
  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  int port() const { return port_; }  // 0: it could not listen

  void Stop() {
    if (stopped_.exchange(true)) return;
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    if (acceptor_.joinable()) acceptor_.join();
    std::lock_guard<std::mutex> lock(mu_);
    for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);
    for (std::thread& t : pumps_) t.join();
    for (int fd : fds_) ::close(fd);
  }

 private:
  void AcceptLoop() {
    while (!stopped_) {
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) return;
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(static_cast<uint16_t>(target_port_));
      std::lock_guard<std::mutex> lock(mu_);
      fds_.push_back(client);
      fds_.push_back(server);
      if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) !=
          0) {
        ::shutdown(client, SHUT_RDWR);
        continue;
      }
      pumps_.emplace_back([this, client, server] { Pump(client, server); });
      pumps_.emplace_back([this, client, server] { Pump(server, client); });
    }
  }

  // Relays `from` to `to`, each chunk after the delay, until either end
  // closes.
  void Pump(int from, int to) {
    char buf[16384];
    for (;;) {
      const ssize_t n = ::recv(from, buf, sizeof buf, 0);
      if (n <= 0) break;
      std::this_thread::sleep_for(delay_);
      for (ssize_t sent = 0; sent < n;) {
        const ssize_t m =
            ::send(to, buf + sent, static_cast<size_t>(n - sent), MSG_NOSIGNAL);
        if (m <= 0) {
          ::shutdown(from, SHUT_RDWR);
          return;
        }
        sent += m;
      }
    }
    ::shutdown(to, SHUT_RDWR);
  }

  const int target_port_;
  const std::chrono::milliseconds delay_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stopped_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;
  std::vector<std::thread> pumps_;
};

}  // namespace rnode::testing

#endif  // RNODE_TESTS_NODE_P2P_DELAY_PROXY_H_
