#include "tests/support/pty.hpp"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace hb::test {

using Clock = std::chrono::steady_clock;

Interactive::Interactive(Command command, Via via) {
    int child_end = -1;
    if (via == Via::terminal) {
        fd_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
        char name[128];
        if (fd_ < 0 || ::grantpt(fd_) != 0 || ::unlockpt(fd_) != 0 ||
            ::ptsname_r(fd_, name, sizeof name) != 0 ||
            (child_end = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
            if (fd_ >= 0) ::close(fd_);
            throw std::runtime_error("cannot open a pseudo-terminal");
        }
        command.terminal = child_end;
    } else {
        int ends[2];
        if (::pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        fd_ = ends[0];
        child_end = ends[1];
        command.fds.emplace_back(child_end, STDOUT_FILENO);
    }
    try {
        child_ = Child(command);
    } catch (...) {
        ::close(child_end);
        ::close(fd_);
        throw;
    }
    // Only the child holds its end now: its exit (and its children's)
    // ends what can be read.
    ::close(child_end);
}

Interactive::~Interactive() {
    child_ = Child();
    ::close(fd_);
}

bool Interactive::read_some(Clock::time_point deadline) {
    pollfd p{fd_, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0)));
    if (ready < 0) return errno == EINTR;
    if (ready == 0) return false;
    char buf[4096];
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0) return errno == EINTR;  // EIO: a terminal no process holds any more
    if (n == 0) return false;
    shown_.append(buf, static_cast<std::size_t>(n));
    return true;
}

bool Interactive::read_until(const std::string& text, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (shown_.find(text) == std::string::npos) {
        if (!read_some(deadline)) return false;
    }
    return true;
}

void Interactive::type(const std::string& text) const {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error("cannot type on the child's terminal");
        done += static_cast<std::size_t>(n);
    }
}

int Interactive::finish(std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    while (read_some(deadline)) {
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return child_.wait_or_kill(std::max(left, std::chrono::milliseconds(0)));
}

}  // namespace hb::test
