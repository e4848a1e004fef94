// Renders the systemd --user units of one install from the templates in
// units/ (embedded at build time). Every value is escaped for systemd:
// specifiers (%), variable expansion ($) and ExecStart= word splitting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "admin/util/paths.hpp"
#include "common/config.hpp"

namespace hb::admin {

struct RenderedUnits {
    std::string path_unit;
    std::string service_unit;
};

// The drain command the .service unit runs:
// <lib>/hostbridge-executor drain --config <bridge.json> --linger N [--allow-root]
std::vector<std::string> exec_start_argv(const Config& config, const InstallPaths& paths);

RenderedUnits render_units(const Config& config, const InstallPaths& paths);

// Reads the ExecStart= line of a rendered .service unit back into an argv
// (the inverse of the quoting render_units applies); empty if none.
std::vector<std::string> parse_exec_start(std::string_view service_unit_text);

}  // namespace hb::admin
