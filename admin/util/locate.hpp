// Finds the install a command other than `install` acts on: the one named by
// --slug, else the one whose project directory holds the current directory.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "admin/util/paths.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

// Slugs with a config dir under <config_home>/hostbridge, sorted.
std::vector<std::string> installed_slugs(const HostDirs& dirs);

// The paths of the install to act on. With a slug: its config dir must
// exist. Without: the install (bridge.json readable) whose project dir is
// the deepest one containing the cwd. Errors say how to name one.
Result<InstallPaths> locate_install(const HostDirs& dirs, const std::optional<std::string>& slug);

}  // namespace hb::admin
