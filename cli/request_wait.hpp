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
#include <string>

#include "ipc/unique_fd.hpp"

namespace hb::cli {

class ResponseWatch {
  public:
    // Blocks the three signals (restored by the destructor); inotify waits
    // for arm().
    ResponseWatch(std::string responses_dir, std::string file_name);
    ~ResponseWatch();
    ResponseWatch(const ResponseWatch&) = delete;
    ResponseWatch& operator=(const ResponseWatch&) = delete;

    enum class Wake {
        Changed,  // our file appeared or was replaced (or events were lost)
        Timeout,
        Signal,
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
};

}  // namespace hb::cli
