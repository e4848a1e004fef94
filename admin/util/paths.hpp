// Where the host-side files of one install live (docs/ARCHITECTURE.md, "Files
// on the host"). HOME, XDG_CONFIG_HOME and XDG_STATE_HOME are honoured here and
// only here: bridge.json then records absolute paths for everything else.
#pragma once

#include <string>

#include "ipc/result.hpp"

namespace hb::admin {

struct HostDirs {
    std::string home;
    std::string config_home;  // $XDG_CONFIG_HOME, else ~/.config
    std::string state_home;   // $XDG_STATE_HOME, else ~/.local/state
    std::string lib_home;     // ~/.local/lib (no XDG variable exists for it)
    std::string cache_home;   // $XDG_CACHE_HOME, else ~/.cache
};

// From the environment. HOME must be set and absolute; an XDG variable that
// is unset, empty or relative is ignored, as the XDG spec says.
Result<HostDirs> host_dirs_from_env();

struct InstallPaths {
    std::string slug;
    std::string config_dir;         // <config_home>/hostbridge/<slug>
    std::string state_dir;          // <state_home>/hostbridge/<slug>
    std::string lib_dir;            // <lib_home>/hostbridge/<slug>
    std::string unit_dir;           // <config_home>/systemd/user
    std::string config_file;        // bridge.json
    std::string policy_file;        // policy.conf
    std::string record_file;        // install.json: what the admin tool remembers
    std::string approved_dir;       // <state_dir>/approved: approved TCB copies
    std::string run_dir;            // <cache_home>/hostbridge/run/<slug>: executor/run_tree.hpp
    std::string executor;           // <lib_dir>/hostbridge-executor
    std::string parser;             // <lib_dir>/hostbridge-parser
    std::string engine_relay;       // <lib_dir>/hostbridge-engine-relay
    std::string snapshot;           // <lib_dir>/hostbridge-snapshot
    std::string pin;                // <lib_dir>/hostbridge-pin (bridge.json's pins.binary)
    std::string path_unit_name;     // hostbridge-<slug>.path
    std::string service_unit_name;  // hostbridge-<slug>.service
    std::string path_unit;          // <unit_dir>/<path_unit_name>
    std::string service_unit;       // <unit_dir>/<service_unit_name>
    std::string wants_link;         // <unit_dir>/default.target.wants/<path_unit_name>
};

InstallPaths install_paths(const HostDirs& dirs, const std::string& slug);

// <config_home>/hostbridge: one directory per installed slug.
std::string installs_root(const HostDirs& dirs);

}  // namespace hb::admin
