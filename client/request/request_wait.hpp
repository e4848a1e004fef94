// Waiting for one response file: inotify on responses/ once armed, and
// SIGINT/SIGTERM/SIGHUP taken as events (signalfd) so a client that gives up
// can still withdraw its request.
//
// Arming is the caller's call because an inotify instance that ever held a
// watch costs an RCU grace period when it is closed (about 8 ms here, paid
// inside exit() before the parent learns of it): a client that gets its
// answer in the first few milliseconds should not have armed at all.
#pragma once

#include <signal.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "client/request/request_response.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::client {

class Spool;

class ResponseWatch {
  public:
    enum class Signals { Take, Leave };
    // Blocks the three signals (restored by the destructor) unless told to
    // leave them (the MCP server, whose calls run on threads, ends on them);
    // inotify waits for arm().
    ResponseWatch(std::string responses_dir, std::string file_name,
                  Signals signals = Signals::Take);
    ~ResponseWatch();
    ResponseWatch(const ResponseWatch&) = delete;
    ResponseWatch& operator=(const ResponseWatch&) = delete;

    enum class Wake {
        Changed,  // our file appeared or was replaced (or events were lost)
        Timeout,
        Signal,
        External,  // the fd given to wake_on() became readable
    };
    struct Event {
        Wake wake = Wake::Timeout;
        int signal = 0;  // for Wake::Signal
    };

    // Watches `responses_dir` for `file_name` from now on. An answer
    // published before this made no event: re-read the file once after it.
    // Without inotify (ENOSYS, out of watches, a filesystem that has none)
    // every wait simply times out and the caller's re-check is a poll.
    void arm();
    [[nodiscard]] bool armed() const { return armed_; }

    // Also ends a wait when `fd` (an eventfd the caller owns) is readable;
    // how a cancelled MCP call stops waiting at once.
    void wake_on(int fd) { external_ = fd; }

    // Waits at most `max` for one of the above (unarmed: only a signal ends
    // the wait early).
    Event wait(std::chrono::milliseconds max);

  private:
    // Reads every queued inotify event; true when one concerns our file.
    bool drain_events();

    std::string responses_dir_;
    std::string file_name_;
    bool armed_ = false;
    sigset_t blocked_{};
    sigset_t previous_{};
    UniqueFd inotify_;
    UniqueFd signals_;
    bool took_signals_ = false;
    int external_ = -1;
};

// How long past a `pending` answer's expires_at a client still waits: the
// host writes `expired` on its next activation, not at that second.
inline constexpr std::chrono::seconds kPendingGrace{10};

// How waiting for one answer ended.
struct WaitResult {
    enum class End {
        Answered,   // `response` holds a final state
        NoAnswer,   // not taken up within the timeout
        Undecided,  // still `pending` at its expires_at plus kPendingGrace
        Signal,     // `signal` arrived
        External,   // the wake_on() fd
    };
    End end = End::NoAnswer;
    Response response;
    int signal = 0;
    std::string last_state;          // the last non-final state read, if any
    std::optional<Response> latest;  // that answer, whole
    // The last non-final answer was `pending`: the host holds the request
    // for a person, so it must never be withdrawn, and may still be allowed.
    [[nodiscard]] bool pending() const { return latest && latest->state == ResponseState::Pending; }
};

// Waits for the answer to request `name` as every agent client does:
// re-reading the response quickly at first, then on inotify events with a
// re-read every 250 ms as a safety net (filesystems that deliver no
// events). The take-up timeout counts only until the host reports
// `running` or `pending`; a `pending` answer is then waited for until its
// expires_at plus kPendingGrace (without one: as for `running`). `on_tick`, when given, is called
// every time round (at least every 250 ms) with the latest non-final answer, or null before any.
// Withdrawing a request that timed out is the caller's call.
WaitResult wait_for_response(const Spool& spool, const std::string& name, ResponseWatch& watch,
                             std::chrono::seconds take_up_timeout,
                             const std::function<void(const Response*)>& on_tick = {});

}  // namespace hb::client
