// Starting the real binaries a test drives, and waiting on them: one
// fork/exec for every area, with everything the child needs built before
// the fork (a test may have threads; the child calls nothing that could
// take a lock), and a Child that is killed and reaped when it goes out of
// scope, so a failed assertion never leaves a process behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hb::test {

// ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS as this test has them
// ("K=V"). A child started with a clean environment gets them too: without
// them a sanitized binary runs its runtime's defaults (LeakSanitizer's
// ptrace check at exit, no abort), not what ./run-tests chose.
std::vector<std::string> sanitizer_env();

struct Command {
    std::vector<std::string> argv;  // argv[0] absolute, unless search_path
    bool search_path = false;       // argv[0] looked up in PATH (execvpe)
    // The child's whole environment, plus what of sanitizer_env() it does
    // not set itself; nullopt: this process's environment.
    std::optional<std::vector<std::string>> env;
    // stdin, stdout and stderr: files (stdout and stderr created 0644 or
    // truncated; the same path for both makes one file in the order
    // written); an empty path keeps this process's.
    std::string in = "/dev/null";
    std::string out = "/dev/null";
    std::string err = "/dev/null";
    bool append = false;  // out and err appended to, not truncated
    std::optional<std::string> cwd;
    std::optional<mode_t> umask;
    std::optional<uid_t> uid;  // as root: no supplementary groups, gid and uid this
    bool own_group = false;    // a process group of its own, killed with it
    // dup2(from, to) after the standard streams (e.g. a socket to fd 3,
    // pipes to 0 and 1); `from` stays open in the parent.
    std::vector<std::pair<int, int>> fds;
    // A pseudo-terminal's slave side (tests/support/pty.hpp): stdin, stdout
    // and stderr instead of in, out and err, and the controlling terminal
    // of a session of the child's own (as forkpty(3) makes it); that
    // session is its group, killed with it.
    int terminal = -1;
    // The child's last step before exec, e.g. taking a record lock that
    // survives exec: async-signal-safe calls only; false exits 126.
    std::function<bool()> before_exec;
};

// This process's environment with each "K=V" of `set` in place of K's
// value and each name of `unset` left out: for a child that inherits
// what the test was started with, as a person's shell passes it on.
std::vector<std::string> environment_with(const std::vector<std::string>& set,
                                          const std::vector<std::string>& unset = {});

// A wait status as tests report it: the exit code, or -signal.
int exit_code_of(int wait_status);

class Child {
  public:
    Child() = default;
    // Forks and execs `command`; throws when it cannot fork. A failed exec
    // exits 127, a failed set-up 126 (125: cannot switch uid).
    explicit Child(const Command& command);
    ~Child();  // SIGKILL (to its group, with own_group) and reaped, if still running
    Child(Child&& other) noexcept;
    Child& operator=(Child&& other) noexcept;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;

    [[nodiscard]] pid_t pid() const { return pid_; }
    // False once it ended (it is then reaped, and wait() returns at once).
    [[nodiscard]] bool running();
    void signal(int signo) const;
    // Its exit code (or -signal) once it ends within `limit`; nullopt while
    // it still runs.
    std::optional<int> wait_for(std::chrono::milliseconds limit);
    int wait();
    // Waits up to `limit`, then kills it: -SIGKILL.
    int wait_or_kill(std::chrono::milliseconds limit);
    // SIGTERM, then SIGKILL past `grace`; its group's stragglers are killed
    // too. The exit code (or -signal).
    int stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

  private:
    void kill_and_reap();
    pid_t pid_ = -1;
    bool own_group_ = false;
    std::optional<int> code_;
};

// Runs `command` to its end (killed past `limit`); its exit code or -signal.
int run(const Command& command, std::chrono::milliseconds limit = std::chrono::minutes(5));

struct Output {
    int code = -1;     // exit code, or -signal
    std::string text;  // stdout and stderr together, in the order written
};
// Runs `command` with stdout and stderr in one file of a scratch directory
// (whatever its out and err say) and returns what it printed.
Output run_output(Command command, std::chrono::milliseconds limit = std::chrono::minutes(5));

// Polls `done` every 5 ms until it holds (true) or `limit` passed (then one
// last look). For a state that has no event a test could wait on.
bool wait_until(const std::function<bool()>& done,
                std::chrono::milliseconds limit = std::chrono::seconds(20));

// Runs `body` in a forked child (whose namespaces or ids it may change for
// good) and returns what it returned.
std::string in_child(const std::function<std::string()>& body);

// True while `pid` exists and is not a zombie.
bool process_alive(pid_t pid);
// The direct children of `pid` (/proc/<pid>/task/<pid>/children).
std::vector<pid_t> children_of(pid_t pid);

}  // namespace hb::test
