// AGENT.md: what `install` writes beside the `request` client in the spool,
// the text a person pastes into the agent's instructions. It describes this
// install only: its verbs, services, buildable services and limits.
#pragma once

#include <string>

#include "common/config.hpp"
#include "common/policy.hpp"

namespace hb::admin {

// `spool_rel` is the spool's path relative to the project root, which is
// how the agent (whose mount point is unknown to the host) finds it. The
// policy's refusals, dry runs and asks are listed, so the agent stops
// retrying what only a person can change or decide.
std::string render_agent_doc(const Config& config, const common::Policy& policy,
                             const std::string& spool_rel);

// Whether this install offers `verb` at all (no init under compose,
// join-network only where configured): AGENT.md and the tool manifest list
// the same verbs.
bool verb_offered(Verb verb, const Config& config);

// What an MCP client's tool-call timeout must be for this install: the
// longest a call can wait (held for a person, then run), rounded up to
// 100 s. 1900 with the defaults (600 s TTL + 10 s grace + 1200 s rebuild).
int tool_timeout_seconds(const Config& config);

}  // namespace hb::admin
