// The request clients run by a person on the host find their spool in the
// person's own configuration, never in the checkout's layout, which is the
// agent's (docs/agent-clients.md, "On the host"): the installs that
// `hostbridge install` recorded under <config home>/hostbridge/SLUG/bridge.json
// (admin/util/paths.hpp). Here, not in admin/: the static hostbridge-agent,
// which a host harness registers with --project-dir, links this too.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ipc/result.hpp"

namespace hb::client {

// What a client needs of one install: where its spool is, and beneath what.
struct HostInstall {
    std::string slug;
    std::string config_file;  // <config home>/hostbridge/<slug>/bridge.json
    std::string project_dir;  // as install recorded it: canonical, absolute
    std::string spool_dir;    // strictly beneath project_dir
    std::string state_dir;    // its audit log's dir; empty when bridge.json names none
};

// <config home>/hostbridge when that directory exists, the config home
// being $XDG_CONFIG_HOME when absolute, else $HOME/.config, as for the
// admin tool (admin/util/paths.cpp). Its existence is what makes a client
// a host client: only `hostbridge install` creates it, and a container has
// no host configuration.
std::optional<std::string> host_installs_root();

// Every install under `root` whose bridge.json names a project_dir and a
// spool_dir beneath it (plain components: no empty, `.` or `..`), by slug.
std::vector<HostInstall> host_installs(const std::string& root);

// The install a host client uses, first match wins: `project_dir` (the
// install whose project dir it is), $HOSTBRIDGE_SPOOL (the install whose
// spool it is, as written), else the install whose project dir holds the
// current directory (the deepest). Anything else is an error that says so:
// a spool no install of this user serves is never used.
Result<HostInstall> locate_host_install(const std::string& root,
                                        const std::optional<std::string>& project_dir);

}  // namespace hb::client
