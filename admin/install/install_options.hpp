// `hostbridge install` options (docs/COMMANDS.md, "install"), parsed and checked
// for shape; everything wrong here is a usage error (exit 2).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

extern const char* const kInstallHelp;

struct InstallOptions {
    bool help = false;
    std::string project_dir;  // absolute (made so from the cwd), not yet canonical
    std::optional<std::string> slug;
    std::string spool_rel;
    std::optional<decltype(Backend::kind)> backend;
    std::optional<std::string> stack_bin;                 // as given (a path made absolute)
    std::optional<std::string> compose_file;              // as given (relative to the project dir)
    std::optional<std::vector<std::string>> compose_cmd;  // split on spaces
    std::optional<std::vector<std::string>> services;
    std::optional<std::vector<std::string>> buildable;
    std::vector<std::string> tcb;
    // The stack backend's builds: service -> context (relative to the
    // project) and service -> Containerfile (relative to the context).
    std::vector<std::pair<std::string, std::string>> build_contexts;
    std::vector<std::pair<std::string, std::string>> containerfiles;
    // The stack labels its containers as compose does with this project
    // name: the executor then verifies outcomes (docs/COMPOSE.md, "A
    // stack's services").
    std::optional<std::string> stack_project;
    // The engine user whose podman service runs the project (docs/ENGINE-USER.md).
    std::optional<std::string> engine_user;
    // Compose bind sources below the checkout root accepted unpinned
    // (docker, podman as root): admin/compose/unpinned_binds.hpp. Sorted, unique.
    std::vector<std::string> unpinned_binds;
    // Images a build may name (`--base-image`), canonical (ipc/image_ref.hpp),
    // sorted, unique: added to bridge.json's build.base_images.
    std::vector<std::string> base_images;
    // `--drop-base-image`: canonical, sorted, unique; taken off the list.
    std::vector<std::string> dropped_base_images;
    std::optional<std::string> agent_container;
    std::optional<std::string> network;
    std::optional<std::string> engine;
    Window rate_limit{60, 600};  // common/config.hpp's Limits
    Window read_rate_limit{120, 60};
    int ttl_seconds = 600;
    int linger_seconds = 10;
    int max_held = 10;
    std::vector<std::pair<std::string, int>> verb_timeouts;  // verb name or "default"
    mode_t file_mode = 0644;
    std::optional<gid_t> agent_gid;
    bool allow_root = false;
    // --accept-uncontained-engine: up and rebuild may run unattended although
    // the engine runs as the person (common/engine_hold.hpp); never implied.
    bool accept_uncontained_engine = false;
    bool no_systemd = false;
    bool force = false;
    // Not recorded for upgrade: once renamed, bridge.json holds the new name.
    bool rename_project = false;
    // Not recorded either: the person's answer to one install's question
    // (admin/commands/adopt_containers.hpp).
    bool adopt_containers = false;
};

Result<InstallOptions> parse_install_options(int argc, char** argv);

// The options again, with paths absolute, minus --force and --slug: what
// doctor prints to re-run this install.
std::vector<std::string> reinstall_args(const InstallOptions& options);

}  // namespace hb::admin
