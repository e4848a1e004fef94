#include "tests/support/process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "tests/support/files.hpp"

namespace hb::test {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// In the child: `fd` onto `target`, CLOEXEC cleared.
void place(int fd, int target) {
    if (fd == target) {
        if (::fcntl(fd, F_SETFD, 0) != 0) ::_exit(126);
    } else if (::dup2(fd, target) < 0) {
        ::_exit(126);
    }
}

// Waits until `pid` can be reaped or `limit` passed: pidfd_open and poll
// (an event, not a poll loop) where the kernel has it.
void await_exit(pid_t pid, std::chrono::milliseconds limit) {
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd >= 0) {
        pollfd p{fd, POLLIN, 0};
        int rc = 0;
        const auto deadline = Clock::now() + limit;
        do {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            rc = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
        } while (rc < 0 && errno == EINTR);
        ::close(fd);
        return;
    }
    const auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
            info.si_pid == pid) {
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

}  // namespace

std::vector<std::string> sanitizer_env() {
    std::vector<std::string> env;
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
        if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
    }
    return env;
}

std::vector<std::string> environment_with(const std::vector<std::string>& set,
                                          const std::vector<std::string>& unset) {
    const auto name_of = [](const std::string& entry) { return entry.substr(0, entry.find('=')); };
    std::vector<std::string> names = unset;
    for (const auto& entry : set) names.push_back(name_of(entry));
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry = *e;
        if (std::find(names.begin(), names.end(), name_of(entry)) == names.end()) {
            env.push_back(entry);
        }
    }
    env.insert(env.end(), set.begin(), set.end());
    return env;
}

int exit_code_of(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return -WTERMSIG(wait_status);
    return -1;
}

Child::Child(const Command& command) {
    if (command.argv.empty()) throw std::invalid_argument("Child: empty argv");
    std::vector<std::string> args = command.argv;
    std::vector<char*> argv = c_strings(args);
    std::optional<std::vector<std::string>> env = command.env;
    if (env) {
        for (auto& e : sanitizer_env()) {
            const std::string name = e.substr(0, e.find('=') + 1);
            const auto set_here = [&](const std::string& have) { return have.starts_with(name); };
            if (std::none_of(env->begin(), env->end(), set_here)) env->push_back(std::move(e));
        }
    }
    std::vector<char*> envp = env ? c_strings(*env) : std::vector<char*>{};
    char** const environment = env ? envp.data() : environ;
    const int out_flags = O_WRONLY | O_CREAT | O_CLOEXEC | (command.append ? O_APPEND : O_TRUNC);
    const bool one_file = command.err == command.out;

    const bool on_terminal = command.terminal >= 0;

    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        // Only async-signal-safe calls from here to exec.
        if (on_terminal) {
            if (::setsid() < 0 || ::ioctl(command.terminal, TIOCSCTTY, 0) != 0) ::_exit(126);
        } else if (command.own_group) {
            ::setpgid(0, 0);
        }
        // Every fd to place lifted above the standard ones first, so that
        // placing one cannot close another.
        int lifted[16];
        const std::size_t n = std::min<std::size_t>(command.fds.size(), 16);
        for (std::size_t i = 0; i < n; ++i) {
            lifted[i] = ::fcntl(command.fds[i].first, F_DUPFD_CLOEXEC, 10);
            if (lifted[i] < 0) ::_exit(126);
        }
        // An empty path keeps this process's stream.
        const int in = on_terminal          ? command.terminal
                       : command.in.empty() ? 0
                                            : ::open(command.in.c_str(), O_RDONLY | O_CLOEXEC);
        const int out = on_terminal           ? command.terminal
                        : command.out.empty() ? 1
                                              : ::open(command.out.c_str(), out_flags, 0644);
        const int err = on_terminal           ? command.terminal
                        : command.err.empty() ? 2
                        : one_file            ? out
                                              : ::open(command.err.c_str(), out_flags, 0644);
        if (in < 0 || out < 0 || err < 0) ::_exit(126);
        place(in, 0);
        place(out, 1);
        place(err, 2);
        for (std::size_t i = 0; i < n; ++i) place(lifted[i], command.fds[i].second);
        if (command.umask) ::umask(*command.umask);
        if (command.cwd && ::chdir(command.cwd->c_str()) != 0) ::_exit(126);
        if (command.uid) {
            const uid_t id = *command.uid;
            if (::setgroups(0, nullptr) != 0 || ::setresgid(id, id, id) != 0 ||
                ::setresuid(id, id, id) != 0) {
                ::_exit(125);
            }
        }
        if (command.before_exec && !command.before_exec()) ::_exit(126);
        sigset_t none;
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        if (command.search_path) {
            ::execvpe(argv[0], argv.data(), environment);
        } else {
            ::execve(argv[0], argv.data(), environment);
        }
        ::_exit(127);
    }
    // Both sides set the group: whichever runs first, the kill in
    // ~Child reaches the whole group. A terminal's session makes its own
    // (setsid fails in a process that already leads a group).
    if (command.own_group && !on_terminal) ::setpgid(pid, pid);
    pid_ = pid;
    own_group_ = command.own_group || on_terminal;
}

Child::~Child() {
    kill_and_reap();
}

Child::Child(Child&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), own_group_(other.own_group_), code_(other.code_) {}

Child& Child::operator=(Child&& other) noexcept {
    if (this != &other) {
        kill_and_reap();
        pid_ = std::exchange(other.pid_, -1);
        own_group_ = other.own_group_;
        code_ = other.code_;
    }
    return *this;
}

void Child::kill_and_reap() {
    if (pid_ <= 0) return;
    if (!code_) {
        ::kill(own_group_ ? -pid_ : pid_, SIGKILL);
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
    } else if (own_group_) {
        ::kill(-pid_, SIGKILL);
    }
    pid_ = -1;
}

bool Child::running() {
    if (pid_ <= 0 || code_) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
    code_ = exit_code_of(status);
    return false;
}

void Child::signal(int signo) const {
    if (pid_ > 0 && !code_) ::kill(pid_, signo);
}

std::optional<int> Child::wait_for(std::chrono::milliseconds limit) {
    if (pid_ <= 0) return code_;
    if (!code_ && running()) await_exit(pid_, limit);
    if (running()) return std::nullopt;
    return code_;
}

int Child::wait() {
    if (pid_ > 0 && !code_) {  // pid_ > 0: never waitpid(-1, ...)
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        code_ = exit_code_of(status);
    }
    return code_.value_or(-1);
}

int Child::wait_or_kill(std::chrono::milliseconds limit) {
    if (pid_ <= 0) return code_.value_or(-1);  // never kill(-1, ...)
    if (auto code = wait_for(limit)) return *code;
    ::kill(own_group_ ? -pid_ : pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    return wait();
}

int Child::stop(std::chrono::milliseconds grace) {
    if (pid_ <= 0) return code_.value_or(-1);
    signal(SIGTERM);
    const int code = wait_or_kill(grace);
    if (own_group_ && pid_ > 0) ::kill(-pid_, SIGKILL);
    return code;
}

int run(const Command& command, std::chrono::milliseconds limit) {
    Child child(command);
    return child.wait_or_kill(limit);
}

Output run_output(Command command, std::chrono::milliseconds limit) {
    TempDir scratch("output");
    command.out = command.err = scratch.path("output");
    command.append = false;
    Output result;
    result.code = run(command, limit);
    result.text = read_file(command.out);
    return result;
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (Clock::now() < end) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
}

std::string in_child(const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return "pipe failed";
    const pid_t pid = ::fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        ::close(fds[0]);
        const std::string out = body();
        (void)!::write(fds[1], out.data(), out.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    ::waitpid(pid, nullptr, 0);
    return out;
}

bool process_alive(pid_t pid) {
    const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    std::istringstream in(
        read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
    for (pid_t child; in >> child;) out.push_back(child);
    return out;
}

}  // namespace hb::test
