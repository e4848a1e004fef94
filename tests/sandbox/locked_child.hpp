// Runs a function in a forked child laid out like hostbridge-parser (the
// socket on fd 3; optionally fd 0 and fd 2 on pipes the test holds), so
// the test can lock the child down for real and watch what happens to it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "ipc/unique_fd.hpp"
#include "sandbox/lockdown.hpp"

namespace hb::sandbox::test {

// Exit codes a child uses to say what went wrong before the interesting part.
inline constexpr int kChildLockdownFailed = 101;
inline constexpr int kChildSetupFailed = 102;
inline constexpr int kChildSurvived = 103;  // a forbidden syscall returned

struct ChildOptions {
    bool stdin_pipe = false;   // child fd 0: read end; test: stdin_w
    bool stderr_pipe = false;  // child fd 2: write end; test: stderr_r
};

class LockedChild {
  public:
    // Forks and runs `body` in the child; the child _exit()s with its
    // return value (and never returns into the test framework).
    LockedChild(const std::function<int()>& body, ChildOptions options = {});
    ~LockedChild();  // a child still running is killed and reaped
    LockedChild(const LockedChild&) = delete;
    LockedChild& operator=(const LockedChild&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }
    [[nodiscard]] int socket() const { return sock_.get(); }
    UniqueFd& stdin_w() { return stdin_w_; }
    UniqueFd& stderr_r() { return stderr_r_; }

    // The report the child sent after lock_down (see lock_or_exit), or
    // nothing when the child died or exited first.
    std::optional<LockdownReport> wait_ready();
    // Waits for the child; returns the raw wait status.
    int wait();
    // Everything the child wrote to its fd 2 (needs stderr_pipe).
    std::string read_stderr();

  private:
    pid_t pid_ = -1;
    UniqueFd sock_;
    UniqueFd stdin_w_;
    UniqueFd stderr_r_;
};

// In the child: lock_down(3) and send the report on the socket; on
// failure, print why on fd 2 and _exit(kChildLockdownFailed).
LockdownReport lock_or_exit();

// "exited 0", "killed by SIGSYS", ...: for test failure messages.
std::string describe_status(int status);
bool killed_by(int status, int signal);
bool exited_with(int status, int code);

// Whether this process runs as root (uid 0 in its namespace).
bool running_as_root();

}  // namespace hb::sandbox::test
