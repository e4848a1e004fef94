#include "executor/notify.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "executor/runner.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {

using common::held_short_digest;
using common::HeldRequest;

namespace {

constexpr const char* kStamp = ".notified";
constexpr std::chrono::seconds kNotifyTimeout{5};

// Names and verbs are already plain ASCII; anything else (a '<' or '&' a
// server would read as markup, a control byte) becomes '?'.
std::string plain(const std::string& text) {
    std::string out = text;
    for (char& c : out) {
        const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') ||
                          std::string_view(" ._:,-$/`()").find(c) != std::string_view::npos;
        if (!safe) c = '?';
    }
    return out;
}

}  // namespace

std::string notify_person(const Config& config, int held_fd, const HeldRequest& held) {
    if (config.systemd.notify_send.empty()) {
        return "no desktop notification: install found no notify-send";
    }
    // The user manager's environment, which a drain it starts inherits.
    const char* bus = std::getenv("DBUS_SESSION_BUS_ADDRESS");
    if (bus == nullptr || bus[0] == '\0') return "no desktop notification: no session bus";
    struct stat st {};
    const std::time_t now = std::time(nullptr);
    if (::fstatat(held_fd, kStamp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        now - st.st_mtime < kNotifyInterval.count() && now >= st.st_mtime) {
        return "no desktop notification: one went out less than " +
               std::to_string(kNotifyInterval.count()) + " s ago";
    }
    // Stamped before the spawn: a notify-send that hangs still counts.
    UniqueFd stamp(::openat(held_fd, kStamp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!stamp || ::futimens(stamp.get(), nullptr) != 0) {
        return "no desktop notification: cannot keep its time in held/";
    }
    // Its output goes nowhere the agent can read: an unnamed file in held/.
    UniqueFd sink(::openat(held_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
    if (!sink) return "no desktop notification: no file for its output";
    const std::string what =
        std::string(verb_name(held.verb)) + (held.service ? " " + *held.service : std::string());
    const Argv argv = {config.systemd.notify_send,
                       "--app-name=hostbridge",
                       "--urgency=normal",
                       "--",
                       plain("hostbridge " + config.slug + ": " + what + " waits for you"),
                       plain("hostbridge allow " + held.request + " " + held_short_digest(held) +
                             "  (or deny, see hostbridge pending)")};
    const RunResult result = run_command(argv, sink.get(), kNotifyTimeout, std::chrono::seconds(1),
                                         {}, {std::string("DBUS_SESSION_BUS_ADDRESS=") + bus});
    if (result.status == RunResult::Status::Exited && result.exit_code == 0) {
        return "desktop notification sent";
    }
    return "desktop notification failed (" +
           (result.status == RunResult::Status::SpawnFailed ? result.error
            : result.status == RunResult::Status::Exited
                ? "exit status " + std::to_string(result.exit_code)
                : std::string("killed or timed out")) +
           ")";
}

}  // namespace hb::exec
