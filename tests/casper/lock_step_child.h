// A forked child process that writes in lock step with the test, for crash
// tests: the child does one write per step the parent grants and reports
// each when it has returned; the parent can grant one more step and kill
// the child with SIGKILL at once, so the kill lands while it writes.
#ifndef RNODE_TESTS_CASPER_LOCK_STEP_CHILD_H_
#define RNODE_TESTS_CASPER_LOCK_STEP_CHILD_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <functional>

namespace rnode::casper::testing {

class LockStepChild {
 public:
  // Forks a child that calls `open()` once (exit 2 when it fails), then
  // `step(i)` for i = 0, 1, ... as the parent grants steps (exit 4 when one
  // fails), reporting each step after it returned. The child never returns.
  LockStepChild(const std::function<bool()>& open,
                const std::function<bool(size_t)>& step) {
    if (::pipe(go_) != 0 || ::pipe(ack_) != 0) return;
    pid_ = ::fork();
    if (pid_ != 0) {
      ::close(go_[0]);
      ::close(ack_[1]);
      return;
    }
    ::close(go_[1]);
    ::close(ack_[0]);
    if (!open()) ::_exit(2);
    char c;
    for (size_t i = 0;; ++i) {
      if (::read(go_[0], &c, 1) != 1) ::_exit(0);
      if (!step(i)) ::_exit(4);
      if (::write(ack_[1], &c, 1) != 1) ::_exit(5);
    }
  }

  ~LockStepChild() {
    if (pid_ > 0) {
      ::close(go_[1]);
      ::close(ack_[0]);
    }
  }
  LockStepChild(const LockStepChild&) = delete;
  LockStepChild& operator=(const LockStepChild&) = delete;

  // Whether the child was started.
  bool started() const { return pid_ > 0; }

  // Grants one step and waits until the child reports it done.
  bool Step() {
    const char c = 1;
    char got;
    return ::write(go_[1], &c, 1) == 1 && ::read(ack_[0], &got, 1) == 1;
  }

  // Grants one more step and kills the child at once; true when the child
  // died of that SIGKILL (not of an exit of its own).
  bool KillDuringNextStep() {
    const char c = 1;
    const bool granted = ::write(go_[1], &c, 1) == 1;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    return granted && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }

 private:
  int go_[2] = {-1, -1};
  int ack_[2] = {-1, -1};
  pid_t pid_ = -1;
};

}  // namespace rnode::casper::testing

#endif  // RNODE_TESTS_CASPER_LOCK_STEP_CHILD_H_
