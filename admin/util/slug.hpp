// The project slug: carried by every host-global name so that two projects
// never share a bridge (docs/COMMANDS.md, "install").
#pragma once

#include <string>
#include <string_view>

#include "ipc/wire.hpp"

namespace hb::admin {

// The project directory's basename, lowercased, every character outside
// [a-z0-9-] turned into '-'. The result may still be invalid (".x" -> "-x").
std::string derive_slug(std::string_view project_dir);

// ^[a-z0-9][a-z0-9-]{0,62}$, one rule with the executor's (ipc/wire.hpp).
using hb::is_valid_slug;

}  // namespace hb::admin
