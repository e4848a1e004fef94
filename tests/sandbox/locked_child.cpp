#include "locked_child.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>

#include "ipc/fd_passing.hpp"
#include "sandbox/sanitizer_runtime.hpp"

namespace hb::sandbox::test {
namespace {

// Moves `fd` to `target` in the child, whatever numbers they have now.
void place_fd(int fd, int target) {
    if (fd == target) {
        ::fcntl(fd, F_SETFD, 0);
        return;
    }
    if (::dup2(fd, target) < 0) ::_exit(kChildSetupFailed);
}

struct WireReport {
    std::uint8_t changed_uid, new_namespaces, bounding_set_cleared, pad;
    std::int32_t namespaces_errno;
};

}  // namespace

LockedChild::LockedChild(const std::function<int()>& body, ChildOptions options) {
    // Sanitized builds: load the symbolizer once here, so each child
    // inherits it instead of spending a fraction of a second in lock_down.
    static const bool warmed = (warm_up_sanitizer_runtime(), true);
    (void)warmed;
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        throw std::runtime_error("socketpair failed");
    }
    UniqueFd parent_end(pair[0]), child_end(pair[1]);
    int in[2] = {-1, -1}, err[2] = {-1, -1};
    if (options.stdin_pipe && ::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if (options.stderr_pipe && ::pipe2(err, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    UniqueFd in_r(in[0]), in_w(in[1]), err_r(err[0]), err_w(err[1]);

    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        // Lift each fd above 2 first, so placing one cannot clobber another.
        const int sock = ::fcntl(child_end.get(), F_DUPFD, 10);
        const int new_in = options.stdin_pipe ? ::fcntl(in_r.get(), F_DUPFD, 10) : -1;
        const int new_err = options.stderr_pipe ? ::fcntl(err_w.get(), F_DUPFD, 10) : -1;
        if (sock < 0) ::_exit(kChildSetupFailed);
        place_fd(sock, 3);
        if (new_in >= 0) place_fd(new_in, 0);
        if (new_err >= 0) place_fd(new_err, 2);
        // An exception must not climb back into the test framework in the
        // child: escaping a noexcept function ends in std::terminate, as
        // an exception escaping the parser's main would.
        const auto run = [&body]() noexcept { return body(); };
        ::_exit(run());
    }
    sock_ = std::move(parent_end);
    stdin_w_ = std::move(in_w);
    stderr_r_ = std::move(err_r);
}

LockedChild::~LockedChild() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

std::optional<LockdownReport> LockedChild::wait_ready() {
    auto got = recv_message(sock_.get(), sizeof(WireReport), FdPolicy::None);
    if (!got || got->kind != Received::Kind::Message || got->bytes.size() != sizeof(WireReport)) {
        return std::nullopt;
    }
    WireReport wire{};
    std::memcpy(&wire, got->bytes.data(), sizeof wire);
    LockdownReport report;
    report.changed_uid = wire.changed_uid != 0;
    report.new_namespaces = wire.new_namespaces != 0;
    report.bounding_set_cleared = wire.bounding_set_cleared != 0;
    report.namespaces_errno = wire.namespaces_errno;
    return report;
}

int LockedChild::wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0) {
        if (errno != EINTR) throw std::runtime_error("waitpid failed");
    }
    pid_ = -1;
    return status;
}

std::string LockedChild::read_stderr() {
    std::string out;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(stderr_r_.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

LockdownReport lock_or_exit() {
    auto report = lock_down(3);
    if (!report) {
        const std::string& why = report.error().message;
        (void)!::write(2, why.data(), why.size());
        (void)!::write(2, "\n", 1);
        ::_exit(kChildLockdownFailed);
    }
    WireReport wire{};
    wire.changed_uid = report->changed_uid;
    wire.new_namespaces = report->new_namespaces;
    wire.bounding_set_cleared = report->bounding_set_cleared;
    wire.namespaces_errno = report->namespaces_errno;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(&wire);
    if (!send_message(3, std::span<const std::uint8_t>(bytes, sizeof wire))) {
        ::_exit(kChildSetupFailed);
    }
    return *report;
}

std::string describe_status(int status) {
    if (WIFEXITED(status)) {
        const int code = WEXITSTATUS(status);
        std::string s = "exited " + std::to_string(code);
        if (code == kChildLockdownFailed) s += " (lock_down failed)";
        if (code == kChildSetupFailed) s += " (child setup failed)";
        if (code == kChildSurvived) s += " (the forbidden syscall returned)";
        return s;
    }
    if (WIFSIGNALED(status)) {
        const char* name = sigabbrev_np(WTERMSIG(status));
        return std::string("killed by SIG") +
               (name != nullptr ? name : std::to_string(WTERMSIG(status)).c_str());
    }
    return "status " + std::to_string(status);
}

bool killed_by(int status, int signal) {
    return WIFSIGNALED(status) && WTERMSIG(status) == signal;
}
bool exited_with(int status, int code) {
    return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

bool running_as_root() {
    return ::geteuid() == 0;
}

}  // namespace hb::sandbox::test
