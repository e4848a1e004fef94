// The stack backend's rows: the project's own script ($STACK, its verified
// copy in the run tree) asked with a word per verb; what it then does is
// the script's (docs/COMPOSE.md, "A stack's services"). The registry
// (engines/registry.cpp) picks this room; docs/ARGV-TABLE.md lists its rows.
#pragma once

#include <cstddef>
#include <optional>

#include "common/config.hpp"
#include "executor/engine.hpp"

namespace hb::exec {

// The verb's rows, `arg` already checked (engines/argv_table.hpp). Ping and
// join-network are the table's own rows, never asked here.
ArgvOutcome stack_rows(Verb verb, std::optional<std::size_t> arg, const Config& config);

}  // namespace hb::exec
