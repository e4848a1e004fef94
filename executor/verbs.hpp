// The properties of every verb, declared in one table. Everything the
// executor decides per verb (argument, policy key, rate window, whether a
// command runs, whether it runs in a systemd scope) reads this table.
#pragma once

#include <array>
#include <string_view>

#include "ipc/wire.hpp"

namespace hb::exec {

// Which sliding window a verb counts against (docs/ARCHITECTURE.md, step 6).
enum class RateClass {
    Exempt,    // ping: nothing runs
    ReadOnly,  // status, health, logs: read-only but they run a command
    Mutating,  // everything that changes the application
};

struct VerbInfo {
    Verb verb;
    ArgKind arg;                  // none / service / buildable service
    bool mutating;                // false: read-only
    bool long_lived;              // runs in a systemd scope so its containers outlive the drain
    bool runs_command;            // false only for ping, which the executor answers itself
    std::string_view policy_key;  // the policy.conf key, "MODE_<verb>"
};

// clang-format off
inline constexpr std::array<VerbInfo, kAllVerbs.size()> kVerbTable = {{
    //  verb               arg                mutating long_lived runs_command policy key
    {Verb::Ping,        ArgKind::None,      false,   false,     false,       "MODE_ping"},
    {Verb::Status,      ArgKind::None,      false,   false,     true,        "MODE_status"},
    {Verb::Health,      ArgKind::None,      false,   false,     true,        "MODE_health"},
    {Verb::Logs,        ArgKind::Service,   false,   false,     true,        "MODE_logs"},
    {Verb::Up,          ArgKind::None,      true,    true,      true,        "MODE_up"},
    {Verb::Down,        ArgKind::None,      true,    false,     true,        "MODE_down"},
    {Verb::Restart,     ArgKind::Service,   true,    true,      true,        "MODE_restart"},
    {Verb::Rebuild,     ArgKind::Buildable, true,    true,      true,        "MODE_rebuild"},
    {Verb::Init,        ArgKind::None,      true,    true,      true,        "MODE_init"},
    {Verb::JoinNetwork, ArgKind::None,      true,    false,     true,        "MODE_join-network"},
}};
// clang-format on

// The row of `verb`. Every Verb has exactly one row (checked at compile time).
constexpr const VerbInfo& verb_info(Verb verb) {
    for (const VerbInfo& row : kVerbTable) {
        if (row.verb == verb) return row;
    }
    // Unreachable for a valid Verb; a verb cast from a bad integer lands here.
    return kVerbTable[0];
}

// Derived, never declared twice: a verb that runs nothing is exempt from the
// rate limit; the rest count against the window of their kind.
constexpr RateClass rate_class(Verb verb) {
    const VerbInfo& row = verb_info(verb);
    if (!row.runs_command) return RateClass::Exempt;
    return row.mutating ? RateClass::Mutating : RateClass::ReadOnly;
}

std::string_view rate_class_name(RateClass rate);

}  // namespace hb::exec
