// Which executor and parser this hostbridge installs, and which version each
// install runs: what `list` shows, `doctor` compares and `upgrade` refreshes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hb::admin {

// Where this hostbridge finds the executor and parser it copies into each
// install, first match wins: beside itself (a build tree's bin/), then
// ../lib/hostbridge/ from its own directory (the package: /usr/bin/hostbridge
// and /usr/lib/hostbridge/).
std::vector<std::string> bundled_binary_dirs();
// The first executable `name` in bundled_binary_dirs(), if any.
std::optional<std::string> bundled_binary(std::string_view name);

// The version an executable prints on --version ("hostbridge-executor 0.1.0"
// -> "0.1.0"), nullopt when it prints none (an executor older than --version,
// a damaged copy). Only runs a host-side copy the admin tool installed.
std::optional<std::string> binary_version(const std::string& path);

// Compares dotted version numbers numerically ("0.10.0" > "0.9.1"):
// negative, zero or positive.
int compare_versions(std::string_view a, std::string_view b);

// This admin tool's version (the project version it was built with).
std::string_view own_version();

}  // namespace hb::admin
