// The project's containers that hold a bind source unpinned, or run with
// something else at a pinned target (docs/COMPOSE.md, "Bind sources are
// pinned"): a container created before install pinned its binds (or by
// hand) resolves the checkout path again at each start. `doctor` reports
// each as a PROBLEM; `install` names them when it is done (issue 48: it
// said nothing, then doctor exited 1 naming them).
#pragma once

#include <string>
#include <vector>

#include "admin/util/paths.hpp"
#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

struct ContainerFinding {
    bool problem = false;  // false: a warning (what could not be checked)
    std::string what;      // a sentence; names as the engine gave them
    std::string fix;       // a command line, for a problem
};

// The -p of every compose row, or else the name podman-compose 1.0.3
// gives the compose file's dir (admin/compose/build_plan.hpp): the run tree's copy
// lies in a dir named like the checkout's.
std::string compose_project_of(const Config& config);

// Nothing where the install pins no bind source.
std::vector<ContainerFinding> stale_containers(const Config& config, const InstallPaths& paths);

struct PinnedContainer {
    std::string name;  // as the engine gave it
    bool running = false;
};

// Every container of the pin engine, of any project, with a bind source
// under the install's pins (<run_dir>/.hostbridge-binds): each start
// resolves that path, which exists only while the run tree does, so
// `uninstall` brings these down before it removes the tree. An error: the
// engine could not be asked, so which ones is unknown.
Result<std::vector<PinnedContainer>> containers_on_pins(const Config& config);

}  // namespace hb::admin
