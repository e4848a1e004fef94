// Sliding-window rate limits, shared by every drain process of one install.
//
// State: <state_dir>/ratelimit.json (written atomically: temp file, fdatasync,
// rename), guarded by flock on <state_dir>/ratelimit.lock, so one drain after
// another and concurrent drains all see the same windows. Times are
// CLOCK_BOOTTIME milliseconds, which never jump; they are stored with the
// boot id, and a file from another boot starts empty windows.
//
// Only what is admitted is recorded. A state file that cannot be read or
// parsed, or an update that cannot be written, refuses every counted verb
// (mutating and read-only alike: a limiter that cannot count bounds
// nothing); ping is exempt and never touches the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <vector>

#include "common/config.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {

struct Admission {
    enum class Kind { Admitted, OverLimit, StateUnusable };
    Kind kind = Kind::StateUnusable;
    int retry_after_seconds = 0;  // OverLimit: until a slot frees up, rounded up, >= 1
    // Refused: the detail after "rate limited: ", e.g. "retry in 12 s", or
    // which state file is unusable, why, and what to do about it.
    std::string detail;
    [[nodiscard]] bool admitted() const { return kind == Kind::Admitted; }
};

// The two windows' admissions, CLOCK_BOOTTIME ms, ascending.
struct RateState {
    using Stamps = std::vector<std::int64_t>;
    Stamps mutating;
    Stamps read_only;
};

class RateLimiter {
  public:
    // CLOCK_BOOTTIME in milliseconds; tests pass a fixed clock, so that what
    // they check does not depend on how long the machine has been up.
    using Clock = std::function<std::int64_t()>;
    static std::int64_t boottime_ms();

    RateLimiter(std::string state_dir, Window mutating, Window read_only,
                Clock clock = &RateLimiter::boottime_ms);
    explicit RateLimiter(const Config& config)
        : RateLimiter(config.state_dir, config.limits.mutating, config.limits.read_only) {}

    // Admits and records one request of class `rate`, or refuses it.
    Admission try_admit(RateClass rate);
    // The windows as they stand at `now`: the state file in `dir_fd` read
    // and slid (try_admit, under its lock; `doctor` shows what they hold).
    Result<RateState> windows_at(int dir_fd, std::int64_t now) const;

    static constexpr const char* kStateFile = "ratelimit.json";
    static constexpr const char* kLockFile = "ratelimit.lock";

  private:
    std::string state_dir_;
    Window mutating_;
    Window read_only_;
    Clock clock_;
    std::optional<std::string> boot_id_;  // read once; nullopt: unreadable
};

// The current boot's id (/proc/sys/kernel/random/boot_id), or nullopt.
std::optional<std::string> current_boot_id();

}  // namespace hb::exec
