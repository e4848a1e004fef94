#include "admin/util/paths.hpp"

#include <cstdlib>

#include "admin/util/fs_util.hpp"

namespace hb::admin {
namespace {

std::string env_dir(const char* name, const std::string& fallback) {
    const char* value = std::getenv(name);
    if (value == nullptr || value[0] != '/') return fallback;
    return lexically_normal(value);
}

}  // namespace

Result<HostDirs> host_dirs_from_env() {
    const char* home = std::getenv("HOME");
    if (home == nullptr || home[0] != '/') {
        return make_error("HOME is not set to an absolute path");
    }
    HostDirs dirs;
    dirs.home = lexically_normal(home);
    dirs.config_home = env_dir("XDG_CONFIG_HOME", dirs.home + "/.config");
    dirs.state_home = env_dir("XDG_STATE_HOME", dirs.home + "/.local/state");
    dirs.lib_home = dirs.home + "/.local/lib";
    dirs.cache_home = env_dir("XDG_CACHE_HOME", dirs.home + "/.cache");
    return dirs;
}

std::string installs_root(const HostDirs& dirs) {
    return dirs.config_home + "/hostbridge";
}

InstallPaths install_paths(const HostDirs& dirs, const std::string& slug) {
    InstallPaths p;
    p.slug = slug;
    p.config_dir = installs_root(dirs) + "/" + slug;
    p.state_dir = dirs.state_home + "/hostbridge/" + slug;
    p.lib_dir = dirs.lib_home + "/hostbridge/" + slug;
    p.unit_dir = dirs.config_home + "/systemd/user";
    p.config_file = p.config_dir + "/bridge.json";
    p.policy_file = p.config_dir + "/policy.conf";
    p.record_file = p.config_dir + "/install.json";
    p.approved_dir = p.state_dir + "/approved";
    // Host-only and stable across runs (a compose project keeps its name);
    // outside the state dir, so no mount of the tree's parent reaches the log.
    p.run_dir = dirs.cache_home + "/hostbridge/run/" + slug;
    p.executor = p.lib_dir + "/hostbridge-executor";
    p.parser = p.lib_dir + "/hostbridge-parser";
    p.engine_relay = p.lib_dir + "/hostbridge-engine-relay";
    p.snapshot = p.lib_dir + "/hostbridge-snapshot";
    p.pin = p.lib_dir + "/hostbridge-pin";
    p.path_unit_name = "hostbridge-" + slug + ".path";
    p.service_unit_name = "hostbridge-" + slug + ".service";
    p.path_unit = p.unit_dir + "/" + p.path_unit_name;
    p.service_unit = p.unit_dir + "/" + p.service_unit_name;
    p.wants_link = p.unit_dir + "/default.target.wants/" + p.path_unit_name;
    return p;
}

}  // namespace hb::admin
