#include "executor/wakeup.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>

#include "ipc/sys.hpp"

namespace hb::exec {
namespace {

void drain_fd(int fd) {
    alignas(inotify_event) char buf[4096];
    while (::read(fd, buf, sizeof buf) > 0) {
    }
}

}  // namespace

Result<Wakeup> Wakeup::open(int requests_fd, int held_fd, bool watch_requests) {
    Wakeup out;
    sigset_t stop_set;
    ::sigemptyset(&stop_set);
    ::sigaddset(&stop_set, SIGTERM);
    ::sigaddset(&stop_set, SIGINT);
    if (::sigprocmask(SIG_BLOCK, &stop_set, nullptr) != 0)
        return make_error(sys::errno_text("cannot block SIGTERM/SIGINT"));
    out.signal_fd_.reset(::signalfd(-1, &stop_set, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!out.signal_fd_) return make_error(sys::errno_text("signalfd"));
    if (!watch_requests) return out;

    out.inotify_fd_.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!out.inotify_fd_) return make_error(sys::errno_text("inotify"));
    const auto watch = [&](int dir_fd, std::uint32_t mask) {
        char path[64];
        std::snprintf(path, sizeof path, "/proc/self/fd/%d", dir_fd);
        return ::inotify_add_watch(out.inotify_fd_.get(), path, mask) >= 0;
    };
    // IN_CREATE too: link(2), symlink(2) and mkfifo(3) make an entry with
    // neither a move nor a close-after-write, and each is work for the drain.
    if (!watch(requests_fd, IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE))
        return make_error(sys::errno_text("cannot watch requests/"));
    // `hostbridge allow|deny` publish a decision by rename.
    if (!watch(held_fd, IN_MOVED_TO))
        return make_error(sys::errno_text("cannot watch the held requests"));
    return out;
}

bool Wakeup::stop_requested() {
    if (stopped_) return true;
    signalfd_siginfo info{};
    if (::read(signal_fd_.get(), &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        stopped_ = true;
    }
    return stopped_;
}

Wakeup::Event Wakeup::wait(std::optional<std::chrono::steady_clock::time_point> deadline) {
    for (;;) {
        if (stop_requested()) return Event::Stop;
        int timeout_ms = -1;
        if (deadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                *deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return Event::Timeout;
            // Round up: waking a millisecond early would only loop.
            timeout_ms = static_cast<int>(std::min<std::int64_t>(left.count() + 1, 60'000));
        }
        pollfd fds[2] = {{signal_fd_.get(), POLLIN, 0}, {inotify_fd_.get(), POLLIN, 0}};
        const nfds_t count = inotify_fd_ ? 2 : 1;
        const int ready = ::poll(fds, count, timeout_ms);
        if (ready < 0 && errno != EINTR) return Event::Stop;  // cannot wait: leave cleanly
        if (ready <= 0) continue;
        if (fds[0].revents != 0) continue;  // read by stop_requested() on the next turn
        if (count == 2 && fds[1].revents != 0) {
            drain_fd(inotify_fd_.get());
            return Event::Request;
        }
    }
}

}  // namespace hb::exec
