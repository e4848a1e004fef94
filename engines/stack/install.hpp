// The stack backend's install-time reading (hb_engine_stack_install, linked
// by the admin tool, never the executor): a best-effort scan of a stack
// script for files of the project it may read that are not pinned: the run
// tree (executor/run_tree.hpp) holds only pinned files, and anything the
// script reads from the checkout is the agent's.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/verbs.hpp"

namespace hb::exec {

// Relative paths of regular files of the project that `script` names (as
// `name`, `./name`, `$var/name`, `${var}/name` or `<project_dir>/name`) and
// that are not in `pinned`. Heuristic: a name built at run time is missed.
std::vector<std::string> unpinned_files_named(const std::string& project_dir,
                                              std::string_view script,
                                              const std::set<std::string>& pinned);

// What AGENT.md says the host does for `verb` on a stack install
// (admin/install/agent_doc.cpp), `verified` where bridge.json has `settle`;
// empty for a verb whose words are the same on every backend.
std::string_view stack_agent_words(Verb verb, bool verified);

}  // namespace hb::exec
