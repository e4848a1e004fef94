// The project slug: carried by every host-global name so that two projects
// never share a bridge (docs/COMMANDS.md, "install").
#pragma once

#include <string>
#include <string_view>

namespace hb::cli {

// The project directory's basename, lowercased, every character outside
// [a-z0-9-] turned into '-'. The result may still be invalid (".x" -> "-x").
std::string derive_slug(std::string_view project_dir);

// ^[a-z0-9][a-z0-9-]{0,62}$
bool is_valid_slug(std::string_view slug);

}  // namespace hb::cli
