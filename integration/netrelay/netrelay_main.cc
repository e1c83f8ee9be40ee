// rnode-netrelay: a userspace switch between test hosts, each a network
// namespace with a TUN device the relay holds (docs/performance.md
// "Separate hosts"). Every IPv4 packet a host sends goes through the relay,
// which delays, jitters, drops or rate-limits it by the links file's rules
// and writes it into the destination host's device. The kernel here has no
// netem, so this is where distance is made; a partition is a `cut` rule.
//
//   rnode-netrelay --links FILE --host NAME=DEVICE=ADDRESS ... [--seed N]
//
// The relay makes each DEVICE (a TUN, in its own namespace) and prints
// "netrelay: ready" once all exist; the caller then moves them into their
// namespaces and gives them their addresses (scripts/shard does). SIGHUP
// reads the links file again (a malformed file is reported and the old
// rules stay); SIGUSR1 prints each link's counters; SIGTERM or SIGINT
// prints them and exits 0.
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "integration/netrelay/shaper.h"

namespace rnode::netrelay {
namespace {

// The largest packet read from a device (a TUN's MTU is 1500 unless the
// caller raises it; 64 KiB covers any IPv4 packet).
constexpr size_t kMaxPacket = 65536;
// Packets read from one device per wake-up, so one busy host cannot starve
// the others' reads or the deliveries.
constexpr int kReadBurst = 64;
// Bytes held in flight across all links (at 200 ms one way, 64 MiB is
// ~2.5 Gbit/s of traffic): beyond it packets are dropped and counted.
constexpr int64_t kMaxPendingBytes = 64 << 20;

struct Host {
  std::string name;
  std::string device;
  uint32_t address = 0;  // network order
  int fd = -1;
};

struct Pending {
  int64_t at_us;
  uint64_t seq;
  int to;
  std::vector<uint8_t> bytes;
  bool operator>(const Pending& o) const {
    return at_us != o.at_us ? at_us > o.at_us : seq > o.seq;
  }
};

int64_t NowUs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000 + ts.tv_nsec / 1000;
}

// Makes TUN device `name` (no packet-info header, non-blocking); -1 and a
// message on stderr on failure.
int OpenTun(const std::string& name) {
  const int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    std::cerr << "netrelay: /dev/net/tun: " << std::strerror(errno) << "\n";
    return -1;
  }
  ifreq ifr{};
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name.c_str());
  if (::ioctl(fd, TUNSETIFF, &ifr) < 0) {
    std::cerr << "netrelay: TUNSETIFF " << name << ": " << std::strerror(errno)
              << "\n";
    ::close(fd);
    return -1;
  }
  return fd;
}

class Relay {
 public:
  Relay(std::vector<Host> hosts, std::string links_path, uint64_t seed)
      : hosts_(std::move(hosts)),
        links_path_(std::move(links_path)),
        rng_(seed),
        links_(hosts_.size() * hosts_.size()),
        params_(hosts_.size() * hosts_.size()) {
    for (size_t i = 0; i < hosts_.size(); ++i) {
      by_address_[hosts_[i].address] = static_cast<int>(i);
    }
  }

  // Reads the links file into the per-link parameters; false (and the old
  // rules kept) if it cannot be read or parsed.
  bool LoadLinks() {
    std::ifstream in(links_path_);
    if (!in) {
      std::cerr << "netrelay: cannot read " << links_path_ << "\n";
      return false;
    }
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::vector<LinkRule>> rules = ParseLinks(text.str());
    if (!rules.ok()) {
      std::cerr << "netrelay: " << rules.status().message()
                << " (the old rules stay)\n";
      return false;
    }
    for (size_t from = 0; from < hosts_.size(); ++from) {
      for (size_t to = 0; to < hosts_.size(); ++to) {
        params_[from * hosts_.size() + to] =
            Resolve(*rules, hosts_[from].name, hosts_[to].name);
      }
    }
    return true;
  }

  // The event loop; returns the exit code.
  int Run() {
    sigset_t signals;
    sigemptyset(&signals);
    for (int s : {SIGHUP, SIGTERM, SIGINT, SIGUSR1}) sigaddset(&signals, s);
    if (::sigprocmask(SIG_BLOCK, &signals, nullptr) != 0)
      return Fail("sigprocmask");
    const int sig_fd = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
    timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (sig_fd < 0 || timer_fd_ < 0 || epoll_fd_ < 0) {
      return Fail("signalfd/timerfd/epoll");
    }
    const auto watch = [this](int fd, uint64_t tag) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = tag;
      return ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
    };
    // Tags: a host's index, then the timer and the signals after them.
    const uint64_t timer_tag = hosts_.size();
    const uint64_t signal_tag = hosts_.size() + 1;
    for (size_t i = 0; i < hosts_.size(); ++i) {
      if (!watch(hosts_[i].fd, i)) return Fail("epoll_ctl");
    }
    if (!watch(timer_fd_, timer_tag) || !watch(sig_fd, signal_tag)) {
      return Fail("epoll_ctl");
    }
    std::cout << "netrelay: ready (" << hosts_.size() << " hosts)" << std::endl;

    std::vector<uint8_t> buffer(kMaxPacket);
    epoll_event events[16];
    for (;;) {
      const int n = ::epoll_wait(epoll_fd_, events, 16, -1);
      if (n < 0 && errno != EINTR) return Fail("epoll_wait");
      for (int e = 0; e < n; ++e) {
        const uint64_t tag = events[e].data.u64;
        if (tag < hosts_.size()) {
          ReadFrom(static_cast<int>(tag), buffer);
        } else if (tag == timer_tag) {
          uint64_t expirations = 0;
          (void)!::read(timer_fd_, &expirations, sizeof expirations);
        } else {
          signalfd_siginfo info{};
          while (::read(sig_fd, &info, sizeof info) == sizeof info) {
            if (info.ssi_signo == SIGHUP) {
              if (LoadLinks()) std::cerr << "netrelay: links read again\n";
            } else if (info.ssi_signo == SIGUSR1) {
              PrintCounters();
            } else {
              PrintCounters();
              return 0;
            }
          }
        }
      }
      Deliver();
    }
  }

 private:
  int Fail(const char* what) {
    std::cerr << "netrelay: " << what << ": " << std::strerror(errno) << "\n";
    return 1;
  }

  void ReadFrom(int from, std::vector<uint8_t>& buffer) {
    for (int i = 0; i < kReadBurst; ++i) {
      const ssize_t got = ::read(hosts_[from].fd, buffer.data(), buffer.size());
      if (got < 0 && errno != EAGAIN && errno != EINTR) {
        // The device is gone (its namespace deleted under the relay): stop
        // watching it rather than wake for its error for ever.
        std::cerr << "netrelay: " << hosts_[from].device << ": "
                  << std::strerror(errno) << "; no longer read\n";
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, hosts_[from].fd, nullptr);
        return;
      }
      if (got <= 0) return;
      const size_t size = static_cast<size_t>(got);
      // IPv4 only: the version nibble and a whole header; IPv6 router
      // solicitations and the like are dropped.
      if (size < 20 || (buffer[0] >> 4) != 4) {
        ++not_ipv4_;
        continue;
      }
      uint32_t dst = 0;
      std::memcpy(&dst, buffer.data() + 16, sizeof dst);
      const auto it = by_address_.find(dst);
      if (it == by_address_.end() || it->second == from) {
        ++unroutable_;
        continue;
      }
      const int to = it->second;
      const size_t link =
          static_cast<size_t>(from) * hosts_.size() + static_cast<size_t>(to);
      if (pending_bytes_ + got > kMaxPendingBytes) {
        ++relay_full_;
        continue;
      }
      const std::optional<int64_t> at =
          links_[link].Admit(params_[link], NowUs(), size, rng_);
      if (!at) continue;
      pending_bytes_ += got;
      pending_.push(
          Pending{*at, seq_++, to,
                  std::vector<uint8_t>(buffer.begin(), buffer.begin() + got)});
    }
  }

  // Writes every packet that is due, then arms the timer for the next
  // (only when that changed: a wake-up delivering nothing new costs no
  // system call).
  void Deliver() {
    const int64_t now = NowUs();
    while (!pending_.empty() && pending_.top().at_us <= now) {
      const Pending& p = pending_.top();
      if (::write(hosts_[p.to].fd, p.bytes.data(), p.bytes.size()) < 0) {
        ++device_full_;
      }
      pending_bytes_ -= static_cast<int64_t>(p.bytes.size());
      pending_.pop();
    }
    const int64_t next = pending_.empty() ? 0 : pending_.top().at_us;
    if (next == armed_us_) return;
    armed_us_ = next;
    itimerspec spec{};  // zero: disarmed
    spec.it_value.tv_sec = next / 1'000'000;
    spec.it_value.tv_nsec = (next % 1'000'000) * 1000;
    ::timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
  }

  void PrintCounters() {
    for (size_t from = 0; from < hosts_.size(); ++from) {
      for (size_t to = 0; to < hosts_.size(); ++to) {
        const Link& l = links_[from * hosts_.size() + to];
        if (l.delivered() + l.lost() + l.cut() + l.queue_full() == 0) continue;
        std::cerr << "netrelay: " << hosts_[from].name << " -> "
                  << hosts_[to].name << ": passed " << l.delivered()
                  << ", lost " << l.lost() << ", cut " << l.cut()
                  << ", queue full " << l.queue_full() << "\n";
      }
    }
    std::cerr << "netrelay: not IPv4 " << not_ipv4_ << ", unroutable "
              << unroutable_ << ", relay full " << relay_full_
              << ", device full " << device_full_ << std::endl;
  }

  std::vector<Host> hosts_;
  std::string links_path_;
  std::mt19937_64 rng_;
  std::vector<Link> links_;         // [from * hosts + to]
  std::vector<LinkParams> params_;  // [from * hosts + to]
  absl::flat_hash_map<uint32_t, int> by_address_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending_;
  int64_t pending_bytes_ = 0;
  uint64_t seq_ = 0;
  int timer_fd_ = -1;
  int64_t armed_us_ = 0;  // the timer's time (µs); 0: disarmed
  int epoll_fd_ = -1;
  uint64_t not_ipv4_ = 0;
  uint64_t unroutable_ = 0;
  uint64_t relay_full_ = 0;
  uint64_t device_full_ = 0;
};

}  // namespace
}  // namespace rnode::netrelay

int main(int argc, char** argv) {
  using rnode::netrelay::Host;
  CLI::App app{"A userspace switch between test hosts in network namespaces"};
  std::string links;
  std::vector<std::string> host_specs;
  uint64_t seed = std::random_device{}();
  app.add_option("--links", links,
                 "the links file (rules; SIGHUP reads it again)")
      ->required();
  app.add_option("--host", host_specs, "NAME=DEVICE=ADDRESS (IPv4), repeatable")
      ->required();
  app.add_option("--seed", seed, "seed of loss and jitter (printed)");
  CLI11_PARSE(app, argc, argv);

  std::vector<Host> hosts;
  for (const std::string& spec : host_specs) {
    const std::vector<std::string> parts = absl::StrSplit(spec, '=');
    in_addr address{};
    if (parts.size() != 3 || parts[0].empty() || parts[1].empty() ||
        parts[1].size() >= IFNAMSIZ ||
        ::inet_pton(AF_INET, parts[2].c_str(), &address) != 1) {
      std::cerr << "netrelay: --host " << spec
                << ": expected NAME=DEVICE=ADDRESS (a device name of at most "
                << IFNAMSIZ - 1 << " characters, an IPv4 address)\n";
      return 2;
    }
    for (const Host& h : hosts) {
      if (h.name == parts[0] || h.device == parts[1] ||
          h.address == address.s_addr) {
        std::cerr << "netrelay: --host " << spec
                  << " repeats a name, device or address\n";
        return 2;
      }
    }
    hosts.push_back(Host{parts[0], parts[1], address.s_addr, -1});
  }
  std::cerr << "netrelay: seed " << seed << "\n";
  for (Host& h : hosts) {
    h.fd = rnode::netrelay::OpenTun(h.device);
    if (h.fd < 0) return 1;
  }
  rnode::netrelay::Relay relay(std::move(hosts), links, seed);
  if (!relay.LoadLinks()) return 2;
  return relay.Run();
}
