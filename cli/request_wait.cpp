#include "cli/request_wait.hpp"

#include <limits.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

namespace hb::cli {

ResponseWatch::ResponseWatch(std::string responses_dir, std::string file_name)
    : responses_dir_(std::move(responses_dir)), file_name_(std::move(file_name)) {
    sigemptyset(&blocked_);
    sigaddset(&blocked_, SIGINT);
    sigaddset(&blocked_, SIGTERM);
    sigaddset(&blocked_, SIGHUP);
    ::sigprocmask(SIG_BLOCK, &blocked_, &previous_);
    signals_.reset(::signalfd(-1, &blocked_, SFD_CLOEXEC | SFD_NONBLOCK));
}

void ResponseWatch::arm() {
    armed_ = true;
    inotify_.reset(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    // The host publishes by rename (IN_MOVED_TO); the other two cover a
    // writer that creates the file in place.
    if (inotify_ && ::inotify_add_watch(inotify_.get(), responses_dir_.c_str(),
                                        IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE) < 0)
        inotify_.reset();
}

ResponseWatch::~ResponseWatch() {
    // A signal still pending is delivered now, with its default action:
    // the user asked for it.
    ::sigprocmask(SIG_SETMASK, &previous_, nullptr);
}

ResponseWatch::Event ResponseWatch::wait(std::chrono::milliseconds max) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + max;
    for (;;) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return {};
        std::array<pollfd, 2> fds{{{signals_.get(), POLLIN, 0}, {inotify_.get(), POLLIN, 0}}};
        if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0) continue;

        if (fds[0].revents & POLLIN) {
            signalfd_siginfo info{};
            if (::read(signals_.get(), &info, sizeof info) == sizeof info)
                return {Wake::Signal, static_cast<int>(info.ssi_signo)};
        }
        // Other clients' responses land in the same directory: only ours
        // (or lost events) ends the wait.
        if ((fds[1].revents & POLLIN) && drain_events()) return {Wake::Changed, 0};
    }
}

bool ResponseWatch::drain_events() {
    bool ours = false;
    alignas(inotify_event) std::array<char, 16 * (sizeof(inotify_event) + NAME_MAX + 1)> buf;
    for (;;) {
        ssize_t n = ::read(inotify_.get(), buf.data(), buf.size());
        if (n <= 0) return ours;  // EAGAIN: drained
        for (ssize_t at = 0; at < n;) {
            const auto* event = reinterpret_cast<const inotify_event*>(buf.data() + at);
            // Lost events or a vanished watch: re-read rather than guess.
            if ((event->mask & (IN_Q_OVERFLOW | IN_IGNORED)) != 0 ||
                (event->len > 0 && file_name_ == event->name))
                ours = true;
            at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        }
    }
}

}  // namespace hb::cli
