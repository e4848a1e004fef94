#include "admin/util/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"
#include "sandbox/fds.hpp"

extern char** environ;

namespace hb::admin {
namespace {

// Kills (the group of) a child still running and reaps it, on every path.

std::vector<std::string> build_env(const RunOptions& options) {
    std::map<std::string, std::string> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string entry(*e);
        auto eq = entry.find('=');
        if (eq == std::string::npos) continue;
        env[entry.substr(0, eq)] = entry;
    }
    for (const auto& key : options.env_unset) env.erase(key);
    for (const auto& entry : options.env_set) {
        auto eq = entry.find('=');
        if (eq != std::string::npos) env[entry.substr(0, eq)] = entry;
    }
    std::vector<std::string> out;
    out.reserve(env.size());
    for (auto& [key, entry] : env) out.push_back(std::move(entry));
    return out;
}

}  // namespace

Result<RunResult> run_process(const std::vector<std::string>& argv, const RunOptions& options) {
    if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
        return make_error("internal: run_process needs an absolute program path");
    }
    int out_pipe[2] = {-1, -1};
    int err_pipe[2] = {-1, -1};
    if (options.out == Stream::Capture && ::pipe2(out_pipe, O_CLOEXEC) != 0) {
        return make_error(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    UniqueFd out_r(out_pipe[0]), out_w(out_pipe[1]);
    if (options.err == Stream::Capture && ::pipe2(err_pipe, O_CLOEXEC) != 0) {
        return make_error(std::string("cannot create a pipe: ") + std::strerror(errno));
    }
    UniqueFd err_r(err_pipe[0]), err_w(err_pipe[1]);
    UniqueFd devnull(::open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!devnull) return make_error(std::string("cannot open /dev/null: ") + std::strerror(errno));

    // Everything the child needs is built before fork: no allocation after.
    std::vector<std::string> env_strings = build_env(options);
    std::vector<char*> envp = sys::c_strings(env_strings);
    std::vector<std::string> args = argv;
    std::vector<char*> argp = sys::c_strings(args);
    const char* cwd = options.cwd ? options.cwd->c_str() : "/";

    pid_t pid = ::fork();
    if (pid < 0) return make_error(std::string("cannot fork: ") + std::strerror(errno));
    if (pid == 0) {
        if (options.new_session) ::setsid();
        ::dup2(devnull.get(), 0);
        if (options.out == Stream::Capture) ::dup2(out_w.get(), 1);
        if (options.out == Stream::Null) ::dup2(devnull.get(), 1);
        if (options.err == Stream::Capture) ::dup2(err_w.get(), 2);
        if (options.err == Stream::Null) ::dup2(devnull.get(), 2);
        (void)sandbox::close_fds_from_3();
        if (::chdir(cwd) != 0) ::_exit(127);
        ::execve(argp[0], argp.data(), envp.data());
        ::_exit(127);
    }
    sys::ChildGuard child(pid, options.new_session);
    out_w.reset();
    err_w.reset();

    RunResult result;
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    while (out_r.valid() || err_r.valid()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            child.kill_and_reap();
            break;
        }
        pollfd fds[2];
        nfds_t n = 0;
        if (out_r.valid()) fds[n++] = {out_r.get(), POLLIN, 0};
        if (err_r.valid()) fds[n++] = {err_r.get(), POLLIN, 0};
        int ready = ::poll(fds, n, static_cast<int>(left.count()));
        if (ready < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (nfds_t i = 0; i < n; ++i) {
            if (fds[i].revents == 0) continue;
            UniqueFd& fd = fds[i].fd == out_r.get() ? out_r : err_r;
            std::string& sink = fds[i].fd == out_r.get() ? result.out : result.err;
            char buf[4096];
            ssize_t got = ::read(fd.get(), buf, sizeof buf);
            if (got > 0) {
                sink.append(buf, static_cast<std::size_t>(got));
            } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
                fd.reset();
            }
        }
    }
    // The streams are closed (or were never captured): wait for the exit,
    // still against the deadline.
    while (!result.timed_out) {
        int status = 0;
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) {
            child.release();
            if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
            break;
        }
        if (done < 0 && errno != EINTR) {
            child.release();
            break;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            result.timed_out = true;
            break;
        }
        ::usleep(5000);
    }
    return result;
}

}  // namespace hb::admin
