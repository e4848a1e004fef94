// The MCP tool list of hostbridge-agent: one tool per verb of this install
// that the policy does not deny, built from the manifest `install` drops
// beside the binary (admin/install/agent_manifest.hpp). The manifest only shapes what
// the model is offered; the host decides every request as always.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/verbs.hpp"

namespace hb::agent {

// A verb as the manifest offers it; its argument kind is ipc/verbs.hpp's.
struct OfferedVerb {
    std::string verb;
    ArgKind arg = ArgKind::None;
    bool denied = false;  // the manifest says the policy denies it
    // Mode `ask`: each call waits for a person's approval on the host, for
    // every service (`ask`) or only these (`ask_services`).
    bool ask = false;
    std::vector<std::string> ask_services;
};

struct Manifest {
    bool found = false;
    std::string problem;  // why it was not used, for stderr
    std::vector<OfferedVerb> verbs;
    std::vector<std::string> services;
    std::vector<std::string> buildable;
    std::string backend;  // "compose", "script" or empty
    // compose with the settle step and the structured status and health
    // (bridge.json's `settle`; docs/COMPOSE.md, "Verified outcomes")
    bool verified_outcomes = false;
    // `logs` takes `lines` and `since` (the manifest's `log_window`;
    // docs/PROTOCOL.md): offered on the logs tool only then.
    bool log_window = false;
    int mutating_count = 0, mutating_seconds = 0;
    int read_only_count = 0, read_only_seconds = 0;
    int ttl_seconds = 0;
    int rebuild_timeout_seconds = 0;
    int default_timeout_seconds = 0;
};

// What every tool shares, said once (MCP `instructions`, not in each
// description): the host decides every call, rate limits, approvals.
std::string_view tool_instructions();

// What tool `verb` is said to do with `backend` ("compose", "script" or
// empty), for tests/agent/test_tool_texts.cpp; empty for an unknown verb.
std::string tool_description_of(const std::string& verb, const std::string& backend,
                                bool verified_outcomes = false, bool log_window = false);

// Parses the manifest's text; an unusable one yields the default manifest
// (every verb, services as free names of the right shape) with `problem`
// saying why.
Manifest parse_manifest(const std::string& text);
// The manifest the install dropped at `path`, or the default one.
Manifest load_manifest(const std::string& path);

// The `tools` array of a tools/list answer. `structured`: the client speaks
// 2025-06-18 or newer, so each tool has an outputSchema.
nlohmann::json tool_list(const Manifest& manifest, bool structured);

// A tools/call request checked against the tool list: the verb and its
// argument, or the sentence a model can act on.
struct CallTarget {
    std::string verb;
    std::optional<std::string> service;
    // `logs` with the log window: the request's keys, as strings.
    std::optional<std::string> lines;
    std::optional<std::string> since;
};
struct CallCheck {
    std::optional<CallTarget> target;
    bool unknown_tool = false;  // a JSON-RPC error, not a tool error
    std::string error;
};
CallCheck check_call(const Manifest& manifest, const std::string& tool,
                     const nlohmann::json& arguments);

}  // namespace hb::agent
