// bridge.json's "build" from the approved compose file: for each buildable
// service with its own build, what the executor's build step passes to the
// engine (engines/podman_compose/rows.cpp, docs/BUILDS.md). Written by install and
// by approve, from the same reading of the compose file (compose_reader.hpp).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "admin/compose/compose_reader.hpp"
#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

// The project name podman-compose 1.0.3 derives from a directory's name:
// lower case, only [-_a-z0-9] kept. Empty when nothing is left.
std::string compose_project_name(const std::string& dir_basename);

// The compose project name an install passes as -p to every compose row (its
// containers' com.docker.compose.project, its images' and containers' names):
// compose_project_name(basename of the compose file's directory), cut to 52
// characters, then "_hb" and the first 8 hex digits of the SHA-256 of the
// canonical project dir; "hb" and the digits when the basename gives nothing.
// A hand-run podman-compose without -p derives only the first part, so a
// clone of the same repository run by hand never shares it (issue 44 item 3;
// docs/COMPOSE.md, "The project's name").
std::string install_project_name(const std::string& project_dir, const std::string& compose_file);

struct BuildPlanInput {
    std::string project_dir;      // canonical
    std::string compose_file;     // absolute
    bool podman_compose = false;  // else docker compose v2
    std::string engine;           // absolute podman or docker, or empty when none was found
    const std::vector<ComposeBuild>* builds = nullptr;
    const std::vector<std::string>* buildable = nullptr;
    // What a person set by hand in the previous bridge.json (network,
    // budgets, base images) is kept.
    const std::optional<BuildSettings>* previous = nullptr;
    // Absolute buildah (podman-compose), or empty when none was found: it
    // reads base images' ONBUILD triggers (engines/podman/base_triggers.hpp).
    std::string buildah;
    // The compose project name (install_project_name, or the one an older
    // install recorded): images and container names derive from it.
    std::string project;
};

// nullopt (every rebuild refused, with a note saying why) when there is no
// engine or no usable project name. `notes` gets one sentence per service
// left out.
std::optional<BuildSettings> plan_builds(const BuildPlanInput& in, std::vector<std::string>& notes);

// The stack backend's "build": what `install --build-context S=DIR
// [--containerfile S=FILE]` recorded (paths already normal and inside,
// admin/install/install_options.cpp). Each S must be buildable; the budgets a person
// set in the previous bridge.json are kept.
Result<BuildSettings> plan_stack_builds(
    const std::vector<std::pair<std::string, std::string>>& contexts,
    const std::vector<std::pair<std::string, std::string>>& containerfiles,
    const std::vector<std::string>& buildable, const std::optional<BuildSettings>* previous);

}  // namespace hb::admin
