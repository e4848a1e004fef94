// `hostbridge policy edit`: policy.conf changed in the person's editor as
// the supported act (docs/DECIDE-AND-RUN.md, "Policy"). The edit is made on
// a copy beside it, read back by the executor's own parser, and put in
// place only when every line is understood and the file did not change
// meanwhile; then AGENT.md and the agent's tool manifest are written anew
// (admin/install/agent_files.hpp), so `doctor` finds them matching. A copy
// that is refused is kept, and the next `policy edit` starts from it.
#pragma once

#include <optional>
#include <string>

#include "common/config.hpp"

namespace hb::admin {

// `from`: the file whose text is the edit, for scripts and tests (`policy
// edit --from FILE`); no editor runs, the rest is the same.
int run_policy_edit(const Config& config, const std::optional<std::string>& from);

// After policy.conf changed (`policy edit`, `policy suggest --write`):
// AGENT.md and the tool manifest written anew, each said; an exit code.
int refresh_what_the_agent_reads(const Config& config);

}  // namespace hb::admin
