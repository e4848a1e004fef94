// bridge.json's build.base_images: the images besides the services' own a
// build's FROM or COPY --from may name (docs/BUILDS.md, "What a build may
// name"). install keeps the recorded list and adds `--base-image`s; an
// install older than the list (build.base_images absent) is given only its
// `--base-image`s: what its current Containerfiles name, read with the
// screen's own reading (parser/containerfile_screen.hpp), is named for the
// person to list, never recorded from files the agent writes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"

namespace hb::admin {

struct BaseImagePlan {
    std::vector<std::string> images;   // for build.base_images: canonical, sorted, unique
    std::vector<std::string> dropped;  // listed before, taken off by a drop
    // An upgrade of an install without the list: nothing is taken from the
    // Containerfiles (the agent writes them); the notes name what they name.
    bool older_install = false;
    // One sentence per Containerfile that could not be read, and per image
    // a Containerfile names that the list does not allow.
    std::vector<std::string> notes;
};

// `previous` is the build section of the bridge.json being replaced
// (nullptr or nullopt on a fresh install). Reads each service's
// Containerfile beneath `project_dir` (no link followed, regular files
// only, at most kMaxContainerfileBytes).
BaseImagePlan plan_base_images(const std::string& project_dir, const BuildSettings& build,
                               const std::optional<BuildSettings>* previous,
                               const std::vector<std::string>& options,
                               const std::vector<std::string>& drops = {});

}  // namespace hb::admin
