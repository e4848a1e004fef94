// Runs one argv from the argv table: fork + execve (no shell, absolute
// path), in a new session, stdin /dev/null, stdout and stderr to the
// request's log (a regular file, never a pipe: a daemon the command forks may
// hold it open forever), every other fd closed, a fixed environment. Waits
// for the direct child only; on timeout SIGTERM to its process group, a
// grace period, then SIGKILL to the group.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "executor/engine.hpp"
#include "ipc/result.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {

struct RunResult {
    enum class Status { Exited, Signaled, TimedOut, SpawnFailed };
    Status status = Status::SpawnFailed;
    int exit_code = -1;  // Exited
    int signal = 0;      // Signaled; TimedOut: the signal that ended it (0: it exited)
    std::string error;   // SpawnFailed: why, e.g. "cannot execute /x: No such file or directory"
    std::int64_t duration_ms = 0;
    [[nodiscard]] bool succeeded() const { return status == Status::Exited && exit_code == 0; }
};

// A spawned command: the leader of its own session and process group. The
// destructor of a Child that was never waited for kills the group (SIGKILL)
// and reaps the child, so no path leaves a command running unobserved.
// The caller must not set SIGCHLD to SIG_IGN (that would auto-reap it).
class Child {
  public:
    // `log_fd` must be a regular file; it becomes the child's stdout and
    // stderr. Returns once the exec succeeded; an exec failure is an error.
    // A non-empty `workdir` (trusted: from bridge.json) becomes its cwd.
    // `extra_env` is added to child_environment(). `stderr_fd` (a regular
    // file too), when given, takes stderr apart from stdout. `stdin_fd`,
    // when given, is its stdin instead of /dev/null (notify.cpp's summary).
    static Result<Child> spawn(const Argv& argv, int log_fd, const std::string& workdir = {},
                               const std::vector<std::string>& extra_env = {}, int stderr_fd = -1,
                               int stdin_fd = -1);

    [[nodiscard]] pid_t pid() const { return child_.pid(); }

    // Waits for the direct child (not for anything it left running). On
    // timeout: SIGTERM to the group, up to `grace` for the child to exit,
    // then SIGKILL to the group.
    RunResult wait(std::chrono::milliseconds timeout, std::chrono::milliseconds grace);

    // Whether the direct child exited within `wait`, without reaping or
    // signalling it (a caller watching its output decides when to stop it).
    [[nodiscard]] bool exited_within(std::chrono::milliseconds wait) const;

  private:
    Child(pid_t pid, UniqueFd pidfd);
    [[nodiscard]] bool exited_by(std::chrono::steady_clock::time_point deadline) const;

    sys::ChildGuard child_;  // kills the group and reaps unless waited for
    UniqueFd pidfd_;         // pidfd_open(2), or invalid where the kernel lacks it
    std::chrono::steady_clock::time_point started_;
};

inline constexpr std::chrono::milliseconds kDefaultKillGrace{5000};

// spawn + wait. A spawn failure is a RunResult with status SpawnFailed.
RunResult run_command(const Argv& argv, int log_fd, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds grace = kDefaultKillGrace,
                      const std::string& workdir = {},
                      const std::vector<std::string>& extra_env = {}, int stdin_fd = -1);

// A command whose stdout goes to `out_fd` and stderr to `err_fd`, with
// `extra_env` besides child_environment(): an engine query's way to run
// (run_query, engines/podman/engine_relay.hpp), so the answer the sandbox
// reads holds no warning lines.
RunResult run_to(const Argv& argv, int out_fd, int err_fd, std::chrono::milliseconds timeout,
                 const std::vector<std::string>& extra_env);

// What is left until `deadline`, never negative: a query's timeout.
std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline);
// "hostbridge: LINE\n" into the request's log (what the settle step and the
// pin check say beside the engine's own output); a failed write is ignored.
void log_line(int log_fd, std::string_view line);

// A query's stdout: an anonymous regular file (Child::spawn wants a regular
// file, never a pipe a daemon could hold open), read back from its start
// with at most `limit` bytes.
Result<UniqueFd> scratch_file(const char* name);
Result<std::string> read_scratch(int fd, std::size_t limit);

// How a command that did not exit 0 ended, for a sentence: "exited with
// status 1", "killed by signal 9", "timed out", or why it could not start.
std::string run_failure(const RunResult& result);

// The complete environment of every command: PATH= systemd's default
// (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin),
// HOME from the password database (not from our environment), XDG_RUNTIME_DIR
// when ours is set and absolute (rootless podman and systemd-run --user need
// it), LANG=C.UTF-8. Nothing else is inherited.
std::vector<std::string> child_environment();

// True when a systemd user manager is reachable: $XDG_RUNTIME_DIR/systemd/private
// is a socket. That private socket is what `systemd-run --user --scope` talks
// to, so DBUS_SESSION_BUS_ADDRESS is not needed.
bool user_manager_reachable();

// For a long-lived verb (up, restart, init, rebuild) with systemd enabled, a
// systemd-run binary configured and a reachable manager: `SYSTEMD_RUN --user
// --scope --quiet --collect --unit=hostbridge-<slug>-<verb>-<nonce> -- argv...`,
// so the containers it starts outlive the drain's cgroup. Otherwise `argv`
// unchanged. `nonce` is the request's nonce (lowercase hex, unique per request).
Argv scoped_argv(const Argv& argv, Verb verb, const Config& config, std::string_view nonce,
                 bool manager_reachable);

// The last `max_bytes` bytes of the regular file `fd` (the command's log),
// none before `from`, read with pread: the fd's offset is untouched.
Result<std::string> read_tail(int fd, std::size_t max_bytes = 16384, off_t from = 0);

}  // namespace hb::exec
