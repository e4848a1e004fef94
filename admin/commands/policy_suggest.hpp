// `hostbridge policy suggest`: a policy.conf learned from the audit log,
// allowing exactly the verbs and services that ran a command. The pure part
// (events and services in, policy text out) is here for the tests;
// admin/commands/policy_suggest.cpp reads the log and writes the file.
#pragma once

#include "admin/install/policy_engine_guard.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/audit_log.hpp"
#include "common/policy.hpp"
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
    EngineHold hold{"held", "held"};
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

// The verbs it never suggests `auto` for: what it learns from may have been
// a hostile agent. down and init always; up and rebuild where `hold` holds
// them.
bool needs_a_person(Verb verb, const EngineHold& hold);

}  // namespace hb::admin
