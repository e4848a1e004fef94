// What a lingering drain and `watch` wait on: a request landing in
// requests/ (inotify IN_MOVED_TO|IN_CLOSE_WRITE on the pinned directory) or
// a person's decision landing in <state_dir>/held (IN_MOVED_TO), a
// stop signal (SIGTERM/SIGINT through a signalfd, so they are only ever
// acted on between requests), or a deadline.
#pragma once

#include <chrono>
#include <optional>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {

class Wakeup {
  public:
    // Blocks SIGTERM and SIGINT and reads them from a signalfd. With
    // `watch_requests`, also watches the pinned requests/ and held/ dir fds
    // (through /proc/self/fd, so each watch is on the pinned inode, not on
    // a path).
    static Result<Wakeup> open(int requests_fd, int held_fd, bool watch_requests);

    enum class Event { Request, Stop, Timeout };
    // Waits for the next event; nullopt waits without a deadline. Reading a
    // request event drains every queued inotify event (one wakeup, one drain).
    Event wait(std::optional<std::chrono::steady_clock::time_point> deadline);

    // True once SIGTERM or SIGINT arrived (checked without blocking).
    bool stop_requested();

  private:
    Wakeup() = default;
    UniqueFd signal_fd_;
    UniqueFd inotify_fd_;
    bool stopped_ = false;
};

}  // namespace hb::exec
