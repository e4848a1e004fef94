// Waiting for one response file without polling: inotify on responses/,
// armed before the request is published so no event can be missed, and
// SIGINT/SIGTERM/SIGHUP taken as events (signalfd) so a client that gives up
// can still withdraw its request.
#pragma once

#include <signal.h>

#include <chrono>
#include <string>

#include "ipc/unique_fd.hpp"

namespace hb::cli {

class ResponseWatch {
  public:
    // Blocks the three signals (restored by the destructor) and watches
    // `responses_dir` for `file_name`. Without inotify (ENOSYS, out of
    // watches, a filesystem that has none) every wait simply times out, and
    // the caller's re-check becomes a poll.
    ResponseWatch(const std::string& responses_dir, std::string file_name);
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

    // Waits at most `max` for one of the above.
    Event wait(std::chrono::milliseconds max);

  private:
    // Reads every queued inotify event; true when one concerns our file.
    bool drain_events();

    std::string file_name_;
    sigset_t blocked_{};
    sigset_t previous_{};
    UniqueFd inotify_;
    UniqueFd signals_;
};

}  // namespace hb::cli
