// What `hostbridge pending` prints of a held request (common/held.hpp),
// the one view `allow` and `deny` show again before a person decides.
#pragma once

#include <ctime>
#include <string>

#include "admin/util/paths.hpp"
#include "common/config.hpp"
#include "common/held.hpp"
#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {

struct HeldInstall {
    Config config;
    UniqueFd held_fd;
};

// The install's bridge.json and its <state_dir>/held.
Result<HeldInstall> open_held_install(const InstallPaths& paths);
// The record held/<name>; an error that says why when it is not held.
Result<common::HeldRequest> read_held(int held_fd, const std::string& name);
// "45 s", "12 min", "3 h": how long, as pending shows it.
std::string shown_duration(std::int64_t seconds);
// Its name, digest (what `allow NAME DIGEST` takes), verb, service, what
// would run, when it was held and expires, what merged into it and, for a
// build, the screened Containerfile of its snapshot; all made visible.
void show_held(const common::HeldRequest& held, std::time_t now, const Config& config);

}  // namespace hb::admin
