#include "client/request/request_wait.hpp"

#include <limits.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "client/request/request_spool.hpp"

namespace hb::client {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Most answers (ping, a denial, a short command) land within milliseconds:
// for the first 100 ms the response is simply re-read, which spares the
// exit the cost of tearing down an inotify watch (request_wait.hpp); then
// inotify takes over. Every millisecond for the first 20 ms, then backing
// off to 16 ms: a quick answer is seen within about a millisecond, and
// fifty clients started at once do not keep stealing the CPU the host needs
// to answer them.
constexpr milliseconds kQuickPhase{100};
constexpr milliseconds kEagerPhase{20};
constexpr milliseconds kEagerPoll{1};
constexpr milliseconds kLastQuickPoll{16};
// Once inotify is armed, and as a safety net where it sees nothing (a spool
// on a network or virtual filesystem shared with a VM), the response is
// still re-read this often.
constexpr milliseconds kRecheck{250};
// No host holds a request for a person this long; a later expires_at is
// waited for only this long.
constexpr std::chrono::seconds kLongestPending = std::chrono::hours(24 * 366);

}  // namespace

WaitResult wait_for_response(const Spool& spool, const std::string& name, ResponseWatch& watch,
                             std::chrono::seconds take_up_timeout,
                             const std::function<void(const Response*)>& on_tick) {
    const auto start = Clock::now();
    const auto deadline = start + take_up_timeout;
    bool taken_up = false;
    WaitResult result;
    std::optional<Clock::time_point> pending_until;  // a pending answer's expires_at + grace
    milliseconds quick_poll = kEagerPoll;
    for (;;) {
        // Checked first, and right after arming: an answer that landed before
        // the watch existed made no event.
        auto text = spool.read_response(name);
        if (text && *text) {
            auto response = parse_response(**text);
            if (response) {
                if (is_terminal(response->state)) {
                    result.end = WaitResult::End::Answered;
                    result.response = std::move(*response);
                    return result;
                }
                if (response->state == ResponseState::Running) {
                    taken_up = true;
                    pending_until.reset();
                }
                if (response->state == ResponseState::Pending) {
                    taken_up = true;
                    pending_until.reset();
                    // The host's wall clock against ours, re-read each time:
                    // a rewritten answer may carry another time.
                    // In whole seconds, clamped: a year-9999 (or year-1000)
                    // stamp must not overflow the clock's nanoseconds.
                    if (response->expires_at) {
                        const auto now = std::chrono::floor<std::chrono::seconds>(
                            std::chrono::system_clock::now());
                        pending_until =
                            Clock::now() + std::clamp<std::chrono::seconds>(
                                               *response->expires_at + kPendingGrace - now,
                                               std::chrono::seconds(0), kLongestPending);
                    }
                }
                result.last_state = response->state_text;
                result.latest = std::move(*response);
            }
        }
        if (on_tick) on_tick(result.latest ? &*result.latest : nullptr);
        if (!watch.armed() && Clock::now() - start >= kQuickPhase) {
            watch.arm();
            continue;
        }
        auto wait = kRecheck;
        if (!watch.armed()) {
            wait = quick_poll;
            if (Clock::now() - start >= kEagerPhase)
                quick_poll = std::min(quick_poll * 2, kLastQuickPoll);
        }
        if (!taken_up) {
            auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) {
                result.end = WaitResult::End::NoAnswer;
                return result;
            }
            wait = std::min(wait, left);
        }
        if (pending_until) {
            auto left = std::chrono::ceil<milliseconds>(*pending_until - Clock::now());
            if (left.count() <= 0) {
                result.end = WaitResult::End::Undecided;
                return result;
            }
            wait = std::min(wait, left);
        }
        auto event = watch.wait(wait);
        if (event.wake == ResponseWatch::Wake::Signal) {
            result.end = WaitResult::End::Signal;
            result.signal = event.signal;
            return result;
        }
        if (event.wake == ResponseWatch::Wake::External) {
            result.end = WaitResult::End::External;
            return result;
        }
    }
}

ResponseWatch::ResponseWatch(std::string responses_dir, std::string file_name, Signals signals)
    : responses_dir_(std::move(responses_dir)), file_name_(std::move(file_name)) {
    if (signals == Signals::Leave) return;
    took_signals_ = true;
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
    if (took_signals_) ::sigprocmask(SIG_SETMASK, &previous_, nullptr);
}

ResponseWatch::Event ResponseWatch::wait(std::chrono::milliseconds max) {
    const auto deadline = Clock::now() + max;
    for (;;) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) return {};
        std::array<pollfd, 3> fds{
            {{signals_.get(), POLLIN, 0}, {inotify_.get(), POLLIN, 0}, {external_, POLLIN, 0}}};
        if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0) continue;
        if (fds[2].revents & POLLIN) return {Wake::External, 0};

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

}  // namespace hb::client
