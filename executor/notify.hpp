// The desktop notification for a request held for a person (policy `ask`):
// notify-send from the absolute path install found, with a fixed argv, text
// made only of characters no notification server reads as markup, at most
// one per kNotifyInterval. Skipped, with the reason returned, where there is
// no notify-send or no session bus (CI, a headless host).
// Beside it the person's own notify_command (bridge.json), at most one per
// kNotifyInterval too: its fixed argv through run_command, the held
// request's summary (held_summary) as one line of JSON on stdin, its output
// kept nowhere, killed after kNotifyTimeout.
#pragma once

#include <chrono>
#include <string>

#include "common/config.hpp"
#include "common/held.hpp"

namespace hb::exec {

inline constexpr std::chrono::seconds kNotifyInterval{60};
// How long a notify-send or notify_command may run; killed after (1 s grace).
inline constexpr std::chrono::seconds kNotifyTimeout{5};

// Announces `held`; returns what happened, for the service log line
// ("desktop notification sent", "no desktop notification: no session bus",
// then "; notify_command exited 0" where one is set).
// `held_fd` keeps the time of the last notification (held/.notified).
std::string notify_person(const Config& config, int held_fd, const common::HeldRequest& held);

// notify_command's stdin: install, request, verb, service (or null),
// command, digest, held_at, expires_at (Unix seconds) and the `allow` and
// `deny` a person runs. Every string with its bytes outside printable ASCII
// (and the backslash) written \xNN (sys::escape_unprintable), so no control
// byte from the agent's side reaches a phone or a chat verbatim.
std::string held_summary(const Config& config, const common::HeldRequest& held);

}  // namespace hb::exec
