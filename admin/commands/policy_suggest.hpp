// `hostbridge policy suggest`: a policy.conf learned from the audit log,
// allowing exactly the verbs and services that ran a command. The pure part
// (events and services in, policy text out) is here for the tests;
// admin/commands/policy_suggest.cpp reads the log and writes the file.
#pragma once

#include "admin/install/policy_engine_guard.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/audit_log.hpp"
#include "common/policy.hpp"
#include "ipc/result.hpp"
#include "ipc/verbs.hpp"

namespace hb::admin {

// The fields of one audit line that suggest reads.
struct AuditUse {
    std::uint64_t seq = 0;
    std::string ts;  // "2024-05-01T10:00:00.123Z"
    common::AuditEvent event = common::AuditEvent::Denied;
    std::optional<Verb> verb;
    std::optional<std::string> arg;
};

// One line of the log, or nothing when it is not a record (a torn fragment
// the verifier accepted).
std::optional<AuditUse> parse_audit_use(std::string_view line);

// What the install offers: its services and the buildable ones
// (bridge.json), which a per-service key must name.
struct InstallServices {
    std::vector<std::string> services;
    std::vector<std::string> buildable;
    // Why up and rebuild are held for a person on the install
    // (admin/install/policy_engine_guard.hpp); held unless it says otherwise.
    EngineHold hold{"held", "held", ""};
};

struct Suggestion {
    std::string text;  // a complete policy.conf
    // The mode suggested for each verb without a service, in kAllVerbs order,
    // and each per-service rule: what the text says (the tests parse the
    // text and compare).
    std::vector<std::pair<Verb, common::Mode>> verbs;
    struct ServiceMode {
        Verb verb;
        std::string service;
        common::Mode mode;
    };
    std::vector<ServiceMode> service_rules;
    std::uint64_t commands = 0;  // `started` events learned from
    // Each key's comment: why it has its mode ("status: ran 3 times, ...").
    std::map<std::string, std::string> why;
};

// The policy that allows what ran: a verb with `started` events is `auto`
// (`ask` for down, init and rebuild, never `auto`), `ping` is always
// `auto`, every other verb `deny`. A verb that takes a service and ran for
// only some of this install's (buildable) services gets MODE_<verb>=deny
// and a key per used service. Services no longer in the install are named
// in a comment only. Each key has a comment line: how often, from when to
// when; every name from the log is made visible. `slug` names the install
// in the header.
Suggestion suggest_policy(std::span<const AuditUse> events, const InstallServices& install,
                          std::string_view slug);

// What `policy suggest` proposes: the person's current policy.conf with
// only the changes that tighten it (issue 45: it used to propose a fresh
// file, turning a person's later `ask`, per-service `deny` or `dry-run`
// back into `auto`). Each key the current file sets takes the tighter of
// its mode and the learned one (deny, then dry-run, then ask, then auto);
// where a verb's own line tightens, a service it still allows as before
// gets a key of its own, and one the learned policy holds tighter gets one
// too. Every other byte is kept; each changed or added key follows a
// comment line starting "# policy suggest:" that says what it was and why.
struct Tightened {
    std::string text;
    // One line per change, for above the diff: "MODE_health: auto -> deny
    // (health: never ran)".
    std::vector<std::string> summary;
};

// `current`: the policy.conf text. An error when it has a line this
// hostbridge does not understand (then every command is denied already).
Result<Tightened> tighten_policy(std::string_view current, const Suggestion& learned,
                                 std::span<const std::string> services,
                                 std::span<const std::string> buildable);

// The verbs it never suggests `auto` for: what it learns from may have been
// a hostile agent. down and init always; up and rebuild where `hold` holds
// them.
bool needs_a_person(Verb verb, const EngineHold& hold);

}  // namespace hb::admin
