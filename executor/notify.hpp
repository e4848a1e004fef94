// The desktop notification for a request held for a person (policy `ask`):
// notify-send from the absolute path install found, with a fixed argv, text
// made only of characters no notification server reads as markup, at most
// one per kNotifyInterval. Skipped, with the reason returned, where there is
// no notify-send or no session bus (CI, a headless host).
#pragma once

#include <chrono>
#include <string>

#include "common/config.hpp"
#include "common/held.hpp"

namespace hb::exec {

inline constexpr std::chrono::seconds kNotifyInterval{60};

// Announces `held`; returns what happened, for the service log line
// ("desktop notification sent", "no desktop notification: no session bus").
// `held_fd` keeps the time of the last notification (held/.notified).
std::string notify_person(const Config& config, int held_fd, const common::HeldRequest& held);

}  // namespace hb::exec
