// What the agent reads of its policy, written anew: AGENT.md in the spool
// and the tool manifest in its bin/ (admin/install/agent_doc.hpp,
// agent_manifest.hpp), from bridge.json and policy.conf as they are now.
// `policy edit` and `policy suggest --write` call it after changing
// policy.conf, so that `doctor` finds both matching (docs/DECIDE-AND-RUN.md,
// "Policy"); install writes them as part of the spool.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

// Each file with what happened ("updated", "no change"); the spool opened
// from the project dir without following a link (spool_setup.hpp), an
// error naming what stood in the way.
Result<std::vector<std::pair<std::string, std::string>>> refresh_agent_files(const Config& config);

}  // namespace hb::admin
