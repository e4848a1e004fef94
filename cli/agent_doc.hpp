// AGENT.md: what `install` writes beside the `request` client in the spool,
// the text a person pastes into the agent's instructions. It describes this
// install only: its verbs, services, buildable services and limits.
#pragma once

#include <string>

#include "executor/config.hpp"

namespace hb::cli {

// `spool_rel` is the spool's path relative to the project root, which is
// how the agent (whose mount point is unknown to the host) finds it.
std::string render_agent_doc(const Config& config, const std::string& spool_rel);

}  // namespace hb::cli
