// The rendered compose files of an install (admin/compose/compose_reader.hpp renders
// them): kept at <state_dir>/rendered/<rel> next to the approved copies and
// pinned in bridge.json ("rendered", "checkout_paths"), so the executor puts
// exactly these bytes into the run tree, after checking their hashes.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/compose/compose_reader.hpp"
#include "admin/util/paths.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

// Every file podman-compose 1.0.3 (COMPOSE_DEFAULT_LS) or docker compose v2
// reads from its working directory when run without -f. The stack backend
// pins each as absent when missing, so a planted one is a changed pin.
inline constexpr std::array<std::string_view, 14> kComposeDefaultFiles = {
    "compose.yaml",
    "compose.yml",
    "compose.override.yaml",
    "compose.override.yml",
    "podman-compose.yaml",
    "podman-compose.yml",
    "docker-compose.yml",
    "docker-compose.yaml",
    "docker-compose.override.yml",
    "docker-compose.override.yaml",
    "container-compose.yml",
    "container-compose.yaml",
    "container-compose.override.yml",
    "container-compose.override.yaml",
};

struct RenderedFile {
    std::string rel;     // relative to the project dir, as its source is pinned
    std::string text;    // the rendered bytes
    std::string sha256;  // lowercase hex of text
};

struct RenderPlan {
    std::vector<RenderedFile> files;          // sorted by rel
    std::vector<std::string> checkout_paths;  // sorted, unique
    std::vector<std::string> pinned_sources;  // sorted, unique: ComposeModel's
    std::map<std::string, std::string>
        definitions;  // ComposeModel's: bridge.json's settle.definitions
};

// The plan for a model read from `project_dir` (rendered files outside it
// are not part of the run tree and never occur).
RenderPlan plan_render(const std::string& project_dir, const ComposeModel& model);

// bridge.json's settle.definitions: the plan's, of the install's `services`
// (`install --services` may bridge fewer than the file has).
std::map<std::string, std::string> bridged_definitions(const RenderPlan& plan,
                                                       const std::vector<std::string>& services);

std::string rendered_dir(const InstallPaths& paths);  // <state_dir>/rendered
std::string rendered_copy_path(const InstallPaths& paths, const std::string& rel);
Result<std::optional<std::string>> read_rendered_copy(const InstallPaths& paths,
                                                      const std::string& rel);

// Writes each file of the plan (mode 0600, directories 0700) and removes
// the rendered copies of `stale` paths the plan no longer holds. Returns
// how many files it wrote or removed.
Result<int> store_rendered(const InstallPaths& paths, const RenderPlan& plan,
                           const std::vector<std::string>& stale);

}  // namespace hb::admin
