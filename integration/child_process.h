// What the multi-process tests share: free loopback ports and a child
// process (the real `rnode`) started with its output in a log file, probed,
// signalled and reaped. Header-only; tests only.
#ifndef RNODE_INTEGRATION_CHILD_PROCESS_H_
#define RNODE_INTEGRATION_CHILD_PROCESS_H_

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace rnode::testing {

// The `rnode` binary to start: $RNODE_BIN if set (a binary built
// elsewhere), else `built_path` (the target's RNODE_BIN_PATH).
inline std::string RnodeBinary(const char* built_path) {
  const char* env = std::getenv("RNODE_BIN");
  return env != nullptr ? env : built_path;
}

// Test ports are drawn below the kernel's ephemeral range (32768 and up on
// Linux): a port the kernel handed out for bind(0) and got back is soon
// handed out again as the local end of some outgoing connection, and a node
// given it then fails to bind. Another test picking the same port in the
// moment before its node binds is the only way to collide here.
inline constexpr int kTestPortLow = 20000;
inline constexpr int kTestPortHigh = 32000;  // exclusive

// True if 127.0.0.1:`port` could be bound just now.
inline bool PortFree(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok =
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

// A port on 127.0.0.1 free at the time of the call (0 if none was found).
inline int FreePort() {
  thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pick(kTestPortLow, kTestPortHigh - 1);
  for (int tries = 0; tries < 1000; ++tries) {
    const int port = pick(rng);
    if (PortFree(port)) return port;
  }
  return 0;
}

// `n` distinct free ports. Each is released before the next is drawn, so
// the set guards against drawing one twice. Once FreePort finds none (its
// 0), the rest are 0 too: a bounded loop, and a node given port 0 fails its
// test visibly.
inline std::vector<int> FreePorts(size_t n) {
  std::set<int> taken;
  std::vector<int> out;
  while (out.size() < n) {
    const int p = FreePort();
    if (p == 0) {
      out.resize(n, 0);
      break;
    }
    if (taken.insert(p).second) out.push_back(p);
  }
  return out;
}

// A child process with stdout and stderr appended to a log file. Killed
// (SIGKILL) and reaped on destruction if still running.
class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() {
    if (pid_ > 0) Kill(SIGKILL);
  }

  // Starts args[0] with `args`; false if it could not be spawned.
  bool Spawn(std::vector<std::string> args, const std::string& log) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const int rc =
        posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pid_ = -1;
    return rc == 0;
  }

  // False once the process has exited (it is then reaped).
  bool Alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exit_status_ = status;
      pid_ = -1;
      return false;
    }
    return true;
  }

  // Sends `sig` and waits for the exit.
  void Kill(int sig) {
    if (pid_ <= 0) return;
    ::kill(pid_, sig);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    exit_status_ = status;
    pid_ = -1;
  }

  // SIGTERM, then the exit status within `patience`; nullopt (and SIGKILL)
  // when the process did not exit in time.
  std::optional<int> Terminate(std::chrono::milliseconds patience) {
    if (pid_ <= 0) return exit_status_;
    ::kill(pid_, SIGTERM);
    const auto until = std::chrono::steady_clock::now() + patience;
    while (std::chrono::steady_clock::now() < until) {
      if (!Alive()) return exit_status_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Kill(SIGKILL);
    return std::nullopt;
  }

  // The running process's id; -1 when none runs.
  pid_t pid() const { return pid_; }

  // The wait status of the last exit seen.
  int exit_status() const { return exit_status_; }

 private:
  pid_t pid_ = -1;
  int exit_status_ = 0;
};

}  // namespace rnode::testing

#endif  // RNODE_INTEGRATION_CHILD_PROCESS_H_
