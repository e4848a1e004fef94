#include "executor/notify.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include <nlohmann/json.hpp>

#include "executor/runner.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {

using common::held_short_digest;
using common::HeldRequest;

namespace {

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

// Empty when one may go out now, its time kept in held/STAMP first (one
// that hangs still counts); else why not.
std::string too_soon(int held_fd, const char* stamp) {
    struct stat st {};
    const std::time_t now = std::time(nullptr);
    if (::fstatat(held_fd, stamp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        now - st.st_mtime < kNotifyInterval.count() && now >= st.st_mtime) {
        return "one went out less than " + std::to_string(kNotifyInterval.count()) + " s ago";
    }
    UniqueFd kept(::openat(held_fd, stamp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!kept || ::futimens(kept.get(), nullptr) != 0) return "cannot keep its time in held/";
    return {};
}

// Its output goes nowhere the agent can read: an unnamed file in held/.
UniqueFd unnamed_file(int held_fd) {
    return UniqueFd(::openat(held_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
}

std::string outcome(const RunResult& result) {
    return result.succeeded() ? "exited 0" : "failed (" + run_failure(result) + ")";
}

std::string desktop(const Config& config, int held_fd, const HeldRequest& held) {
    if (config.systemd.notify_send.empty()) {
        return "no desktop notification: install found no notify-send";
    }
    // The user manager's environment, which a drain it starts inherits.
    const char* bus = std::getenv("DBUS_SESSION_BUS_ADDRESS");
    if (bus == nullptr || bus[0] == '\0') return "no desktop notification: no session bus";
    if (auto why = too_soon(held_fd, ".notified"); !why.empty())
        return "no desktop notification: " + why;
    UniqueFd sink = unnamed_file(held_fd);
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
    return result.succeeded() ? "desktop notification sent"
                              : "desktop notification " + outcome(result);
}

// The person's notify_command, with its own stamp: the desktop's does not
// silence it.
std::string command(const Config& config, int held_fd, const HeldRequest& held) {
    if (auto why = too_soon(held_fd, ".notified-command"); !why.empty())
        return "notify_command not run: " + why;
    UniqueFd in = unnamed_file(held_fd);
    UniqueFd sink = unnamed_file(held_fd);
    if (!in || !sink || !sys::write_all(in.get(), held_summary(config, held) + "\n") ||
        ::lseek(in.get(), 0, SEEK_SET) != 0) {
        return "notify_command not run: no file in held/ for its input";
    }
    return "notify_command " +
           outcome(run_command(config.notify_command, sink.get(), kNotifyTimeout,
                               std::chrono::seconds(1), {}, {}, in.get()));
}

}  // namespace

std::string held_summary(const Config& config, const HeldRequest& held) {
    const auto shown = [](std::string_view text) { return sys::escape_unprintable(text); };
    const std::string digest = held_short_digest(held);
    const std::string name = shown(held.request);
    nlohmann::ordered_json j = {
        {"install", shown(config.slug)},
        {"request", name},
        {"verb", std::string(verb_name(held.verb))},
        {"service", held.service ? nlohmann::ordered_json(shown(*held.service)) : nullptr},
        {"command", shown(held.command)},
        {"digest", digest},
        {"held_at", held.held_at},
        {"expires_at", held.expires_at},
        {"allow", "hostbridge allow " + name + " " + digest},
        {"deny", "hostbridge deny " + name + " " + digest}};
    return j.dump();
}

std::string notify_person(const Config& config, int held_fd, const HeldRequest& held) {
    std::string told = desktop(config, held_fd, held);
    if (!config.notify_command.empty()) told += "; " + command(config, held_fd, held);
    return told;
}

}  // namespace hb::exec
