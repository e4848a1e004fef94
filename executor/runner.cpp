#include "executor/runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "ipc/verbs.hpp"
#include "sandbox/fds.hpp"

namespace hb::exec {
namespace {

using Clock = std::chrono::steady_clock;

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void child_fail(int err_fd, int err) {
    (void)!::write(err_fd, &err, sizeof err);
    ::_exit(127);
}

[[noreturn]] void exec_child(const char* path, char* const* argv, char* const* envp, int devnull,
                             int log_fd, int stderr_fd, int err_fd, const char* workdir) {
    // The drain may block or ignore signals; the command starts clean.
    sys::reset_signals();

    // Own session, hence own process group: the timeout kills exactly it.
    if (::setsid() < 0) child_fail(err_fd, errno);
    // The run tree (executor/run_tree.hpp), so a stack script or compose
    // finds its relative files among the verified copies, not in the checkout.
    if (workdir != nullptr && ::chdir(workdir) != 0) child_fail(err_fd, errno);

    // Copy the sources above 2 first, so no dup2 below clobbers another.
    const int in = ::fcntl(devnull, F_DUPFD_CLOEXEC, 3);
    const int out = ::fcntl(log_fd, F_DUPFD_CLOEXEC, 3);
    const int err = ::fcntl(stderr_fd, F_DUPFD_CLOEXEC, 3);
    if (in < 0 || out < 0 || err < 0) child_fail(err_fd, errno);
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) child_fail(err_fd, errno);

    // Every fd above 2 closes at exec (err_fd stays usable until then), so no
    // lock or pinned dirfd leaks into a long-lived container process.
    if (!sandbox::close_fds_from_3(-1, sandbox::FdAction::CloseOnExec)) child_fail(err_fd, EMFILE);
    ::execve(path, argv, envp);
    child_fail(err_fd, errno);
}

std::int64_t ms_since(Clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

}  // namespace

Child::Child(pid_t pid, UniqueFd pidfd)
    : child_(pid, /*group=*/true), pidfd_(std::move(pidfd)), started_(Clock::now()) {}

Result<Child> Child::spawn(const Argv& argv, int log_fd, const std::string& workdir,
                           const std::vector<std::string>& extra_env, int stderr_fd, int stdin_fd) {
    if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
        return make_error("cannot execute \"" + (argv.empty() ? std::string() : argv[0]) +
                          "\": not an absolute path");
    }
    struct stat st {};
    if (::fstat(log_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return make_error("the command's log is not a regular file");
    }
    if (stderr_fd < 0) stderr_fd = log_fd;
    if (::fstat(stderr_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        return make_error("the command's error log is not a regular file");
    }
    UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    if (!devnull) return make_error(sys::errno_text("open /dev/null"));
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return make_error(sys::errno_text("pipe2"));
    UniqueFd err_read(pipe_fds[0]);
    UniqueFd err_write(pipe_fds[1]);

    // Everything the child needs is built before fork: it must not allocate.
    std::vector<std::string> args = argv;
    std::vector<std::string> env = child_environment();
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> c_argv = sys::c_strings(args);
    std::vector<char*> c_env = sys::c_strings(env);

    const pid_t pid = ::fork();
    if (pid < 0) return make_error(sys::errno_text("fork"));
    if (pid == 0) {
        exec_child(c_argv[0], c_argv.data(), c_env.data(), stdin_fd < 0 ? devnull.get() : stdin_fd,
                   log_fd, stderr_fd, err_write.get(), workdir.empty() ? nullptr : workdir.c_str());
    }
    err_write.reset();
    // From here the Child owns the process: every return path reaps it.
    Child child(pid, UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))));

    int child_errno = 0;
    ssize_t n;
    do {
        n = ::read(err_read.get(), &child_errno, sizeof child_errno);
    } while (n < 0 && errno == EINTR);
    if (n != 0) {
        child.child_.kill_and_reap();
        const std::string why = n == static_cast<ssize_t>(sizeof child_errno)
                                    ? std::strerror(child_errno)
                                    : "the child failed before exec";
        return make_error("cannot execute " + argv[0] + ": " + why);
    }
    return child;
}

// True once the direct child has exited by `deadline`; it stays a zombie
// (not reaped), so its pid, and with it the process group id, cannot be
// reused while we still signal the group.
bool Child::exited_by(Clock::time_point deadline) const {
    const pid_t pid = child_.pid();
    for (;;) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (pidfd_) {
            const int wait_ms =
                deadline == Clock::time_point::max()
                    ? -1
                    : static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, INT_MAX));
            pollfd pfd{pidfd_.get(), POLLIN, 0};
            const int ready = ::poll(&pfd, 1, wait_ms);
            if (ready > 0) return true;
            if (ready == 0) return false;
            if (errno != EINTR) return false;
            continue;
        }
        // No pidfd (kernel < 5.3): poll waitid without reaping.
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid != 0) {
            return true;
        }
        if (deadline != Clock::time_point::max() && left.count() <= 0) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool Child::exited_within(std::chrono::milliseconds wait) const {
    return exited_by(Clock::now() + wait);
}

RunResult Child::wait(std::chrono::milliseconds timeout, std::chrono::milliseconds grace) {
    RunResult result;
    const pid_t pid = child_.pid();
    if (pid <= 0) {
        result.error = "no child to wait for";
        return result;
    }
    bool timed_out = false;
    if (!exited_by(Clock::now() + timeout)) {
        timed_out = true;
        ::kill(-pid, SIGTERM);
        (void)exited_by(Clock::now() + grace);
        // The whole group, even where the child itself already left on SIGTERM.
        ::kill(-pid, SIGKILL);
        (void)exited_by(Clock::time_point::max());
    }

    int status = 0;
    const pid_t reaped = sys::waitpid_retry(child_.release(), &status);
    result.duration_ms = ms_since(started_);
    if (reaped < 0) {
        result.error = sys::errno_text("waitpid");
        return result;
    }
    if (timed_out) {
        result.status = RunResult::Status::TimedOut;
        if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
    } else if (WIFEXITED(status)) {
        result.status = RunResult::Status::Exited;
        result.exit_code = WEXITSTATUS(status);
    } else {
        result.status = RunResult::Status::Signaled;
        result.signal = WTERMSIG(status);
    }
    return result;
}

namespace {

// Spawn and wait, a spawn failure reported as a RunResult: what
// run_command and run_query share.
RunResult spawn_and_wait(const Argv& argv, int log_fd, int stderr_fd,
                         std::chrono::milliseconds timeout, std::chrono::milliseconds grace,
                         const std::string& workdir, const std::vector<std::string>& extra_env,
                         int stdin_fd = -1) {
    const auto start = Clock::now();
    auto child = Child::spawn(argv, log_fd, workdir, extra_env, stderr_fd, stdin_fd);
    if (!child) {
        RunResult failed;
        failed.error = child.error().message;
        failed.duration_ms = ms_since(start);
        return failed;
    }
    return child->wait(timeout, grace);
}

}  // namespace

RunResult run_command(const Argv& argv, int log_fd, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds grace, const std::string& workdir,
                      const std::vector<std::string>& extra_env, int stdin_fd) {
    return spawn_and_wait(argv, log_fd, -1, timeout, grace, workdir, extra_env, stdin_fd);
}

RunResult run_to(const Argv& argv, int out_fd, int err_fd, std::chrono::milliseconds timeout,
                 const std::vector<std::string>& extra_env) {
    return spawn_and_wait(argv, out_fd, err_fd, timeout, kDefaultKillGrace, {}, extra_env);
}

std::string run_failure(const RunResult& r) {
    switch (r.status) {
        case RunResult::Status::Exited:
            return "exited with status " + std::to_string(r.exit_code);
        case RunResult::Status::Signaled:
            return "killed by signal " + std::to_string(r.signal);
        case RunResult::Status::TimedOut:
            return "timed out";
        case RunResult::Status::SpawnFailed:
            return r.error;
    }
    return "failed";
}

std::vector<std::string> child_environment() {
    // systemd's default PATH: the sbin directories hold the container
    // engine's helpers (netavark runs iptables; without it join-network fails).
    std::vector<std::string> env{
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
    // HOME from the password database: our own environment is not trusted.
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found &&
        found->pw_dir && found->pw_dir[0] == '/') {
        env.push_back(std::string("HOME=") + found->pw_dir);
    }
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    if (runtime && runtime[0] == '/') env.push_back(std::string("XDG_RUNTIME_DIR=") + runtime);
    env.push_back("LANG=C.UTF-8");
    return env;
}

bool user_manager_reachable() {
    const char* runtime = std::getenv("XDG_RUNTIME_DIR");
    if (!runtime || runtime[0] != '/') return false;
    struct stat st {};
    const std::string socket = std::string(runtime) + "/systemd/private";
    return ::stat(socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

Argv scoped_argv(const Argv& argv, Verb verb, const Config& config, std::string_view nonce,
                 bool manager_reachable) {
    if (!verb_info(verb).long_lived || !config.systemd.enabled ||
        config.systemd.systemd_run.empty() || !manager_reachable) {
        return argv;
    }
    Argv scoped{config.systemd.systemd_run,
                "--user",
                "--scope",
                "--quiet",
                "--collect",
                "--unit=hostbridge-" + config.slug + "-" + std::string(verb_name(verb)) + "-" +
                    std::string(nonce),
                "--"};
    scoped.insert(scoped.end(), argv.begin(), argv.end());
    return scoped;
}

std::chrono::milliseconds time_left(std::chrono::steady_clock::time_point deadline) {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
}

void log_line(int log_fd, std::string_view line) {
    [[maybe_unused]] const bool written =
        sys::write_all(log_fd, "hostbridge: " + std::string(line) + "\n");
}

Result<UniqueFd> scratch_file(const char* name) {
    UniqueFd fd(::memfd_create(name, MFD_CLOEXEC));
    if (!fd) return make_error(sys::errno_text("memfd_create"));
    return fd;
}

Result<std::string> read_scratch(int fd, std::size_t limit) {
    if (::lseek(fd, 0, SEEK_SET) != 0) return make_error(sys::errno_text("lseek"));
    std::string out;
    if (!sys::read_all(fd, out, limit)) return make_error(sys::errno_text("read"));
    return out;
}

Result<std::string> read_tail(int fd, std::size_t max_bytes, off_t from) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return make_error(sys::errno_text("fstat"));
    if (!S_ISREG(st.st_mode)) return make_error("the log is not a regular file");
    const auto size = static_cast<std::size_t>(st.st_size);
    off_t offset = std::min(
        std::max(static_cast<off_t>(size > max_bytes ? size - max_bytes : 0), from), st.st_size);
    std::string tail;
    tail.resize(size - static_cast<std::size_t>(offset));
    // Fewer bytes than asked: the file shrank meanwhile.
    const ssize_t got = sys::pread_full(fd, tail.data(), tail.size(), offset);
    if (got < 0) return make_error(sys::errno_text("pread"));
    tail.resize(static_cast<std::size_t>(got));
    return tail;
}

}  // namespace hb::exec
