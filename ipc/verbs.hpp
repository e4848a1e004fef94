// The verbs, declared once in one table that the parser, the executor and
// the admin tool all link (protocol and properties: docs/PROTOCOL.md,
// "Verbs"). Everything decided per verb reads this table: its spelling, its
// argument, its rate window, whether a command runs and whether it runs in
// a systemd scope. The policy key is derived from the spelling.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace hb {

// The closed set of verbs a request may name. Wire values are fixed forever
// (a new verb gets a new number, none is ever reused).
enum class Verb : std::uint8_t {
    Ping = 1,
    Status = 2,
    Health = 3,
    Logs = 4,
    Up = 5,
    Down = 6,
    Restart = 7,
    Rebuild = 8,
    Init = 9,
    JoinNetwork = 10,
};
// Every verb, in wire order: a new verb goes at the end of both lists and
// of the table below, and what is derived from them follows (the wire's
// range check, the policy's keys, the verbs a person decides).
inline constexpr std::array<Verb, 10> kAllVerbs = {
    Verb::Ping, Verb::Status,  Verb::Health,  Verb::Logs, Verb::Up,
    Verb::Down, Verb::Restart, Verb::Rebuild, Verb::Init, Verb::JoinNetwork};
inline constexpr std::size_t kVerbCount = kAllVerbs.size();
// The highest wire value: the values are 1..kVerbCount (verbs.cpp checks).
inline constexpr Verb kLastVerb = kAllVerbs.back();

// What argument a verb takes: none, a member of the service enumeration, or
// a member of the narrower buildable enumeration.
enum class ArgKind : std::uint8_t { None, Service, Buildable };

// Which sliding window a verb counts against (docs/DECIDE-AND-RUN.md, "The
// gates, in order").
enum class RateClass {
    Exempt,    // ping: nothing runs
    ReadOnly,  // status, health, logs: read-only but they run a command
    Mutating,  // everything that changes the application
};

struct VerbInfo {
    Verb verb;
    std::string_view name;        // the protocol's spelling ("join-network")
    ArgKind arg;                  // none / service / buildable service
    bool mutating;                // false: read-only
    bool long_lived;              // runs in a systemd scope so its containers outlive the drain
    bool runs_command;            // false only for ping, which the executor answers itself
    bool asks_a_person;           // stops or destroys: seeded `ask`, never suggested `auto`
    std::string_view policy_key;  // derived: "MODE_" + name (kPolicyKeys below)
};

namespace verbs_detail {
// clang-format off
struct Row { Verb verb; std::string_view name; ArgKind arg; bool mutating, long_lived, runs_command, asks_a_person; };
inline constexpr std::array<Row, kAllVerbs.size()> kRows = {{
    //  verb               name            arg                mutating long_lived runs_command asks_a_person
    {Verb::Ping,        "ping",         ArgKind::None,      false,   false,     false,       false},
    {Verb::Status,      "status",       ArgKind::None,      false,   false,     true,        false},
    {Verb::Health,      "health",       ArgKind::None,      false,   false,     true,        false},
    {Verb::Logs,        "logs",         ArgKind::Service,   false,   false,     true,        false},
    {Verb::Up,          "up",           ArgKind::None,      true,    true,      true,        false},
    {Verb::Down,        "down",         ArgKind::None,      true,    false,     true,        true},
    {Verb::Restart,     "restart",      ArgKind::Service,   true,    true,      true,        false},
    {Verb::Rebuild,     "rebuild",      ArgKind::Buildable, true,    true,      true,        false},
    {Verb::Init,        "init",         ArgKind::None,      true,    true,      true,        true},
    {Verb::JoinNetwork, "join-network", ArgKind::None,      true,    false,     true,        false},
}};
// clang-format on
inline constexpr std::string_view kPolicyPrefix = "MODE_";
inline constexpr std::size_t kMaxKey = 32;
// The text of every policy key, built at compile time from the names.
inline constexpr auto kPolicyKeys = [] {
    std::array<std::array<char, kMaxKey>, kRows.size()> out{};
    for (std::size_t i = 0; i < kRows.size(); ++i) {
        std::size_t n = 0;
        for (char c : kPolicyPrefix) out[i][n++] = c;
        for (char c : kRows[i].name) out[i][n++] = c;
    }
    return out;
}();
}  // namespace verbs_detail

inline constexpr auto kVerbTable = [] {
    using namespace verbs_detail;
    std::array<VerbInfo, kRows.size()> table{};
    for (std::size_t i = 0; i < kRows.size(); ++i) {
        const Row& r = kRows[i];
        table[i] = {r.verb,
                    r.name,
                    r.arg,
                    r.mutating,
                    r.long_lived,
                    r.runs_command,
                    r.asks_a_person,
                    std::string_view(kPolicyKeys[i].data(), kPolicyPrefix.size() + r.name.size())};
    }
    return table;
}();

// The row of `verb`. Every Verb has exactly one row (checked at compile time
// in verbs.cpp).
constexpr const VerbInfo& verb_info(Verb verb) {
    for (const VerbInfo& row : kVerbTable) {
        if (row.verb == verb) return row;
    }
    // Unreachable for a valid Verb; a verb cast from a bad integer lands here.
    return kVerbTable[0];
}

// The protocol's spelling of a verb ("join-network"), and back. A value
// outside the enum has the empty name.
std::string_view verb_name(Verb verb);
std::optional<Verb> verb_from_name(std::string_view name);
ArgKind verb_arg_kind(Verb verb);

// Derived, never declared twice: a verb that runs nothing is exempt from the
// rate limit; the rest count against the window of their kind.
constexpr RateClass rate_class(Verb verb) {
    const VerbInfo& row = verb_info(verb);
    if (!row.runs_command) return RateClass::Exempt;
    return row.mutating ? RateClass::Mutating : RateClass::ReadOnly;
}
std::string_view rate_class_name(RateClass rate);

}  // namespace hb
