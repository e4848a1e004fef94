// Base images' ONBUILD triggers, checked before a podman build
// (docs/BUILDS.md, "Base images' triggers"). buildah runs the ONBUILD
// triggers of a docker-format base image as if they were lines of the
// Containerfile, but the screen (parser/containerfile_screen.cpp) reads
// only the snapshot's file: a trigger `RUN --mount=type=cache,id=../..`
// wrote into a host directory (tests/e2e/build_attacks.sh). So a build runs
// only while no image of the engine's store, which any FROM could name,
// carries a trigger. podman 4.3 does not show them; `buildah inspect` does.
#pragma once

#include <chrono>

#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::exec {

// Where the ids found without triggers are kept, in the builds dir under
// run_dir: an image id is the digest of its config, so an id once found
// without triggers never gets one, and each is asked about once.
inline constexpr const char* kNoTriggersFile = "images-without-triggers";
inline constexpr std::chrono::seconds kTriggerCheckTimeout{60};

// Lists the store's images (argv_table.hpp, trigger_images) and counts the
// triggers of each not in `builds_fd`'s kNoTriggersFile (trigger_count),
// within kTriggerCheckTimeout. The value is how many were asked about; an
// error is the refusal's sentence: an image with triggers (named by id),
// no buildah recorded, or a query that failed or answered out of shape.
Result<std::size_t> check_base_triggers(const Config& config, int builds_fd);

// docker's build pulls a FROM its daemon does not hold, whatever its flags
// (docs/DOCKER.md): of `refs` (build_allowed_images), those the daemon
// holds, which alone the screen then allows; one whose query failed in any
// way is left out.
Result<std::vector<std::string>> present_images(const Config& config,
                                                const std::vector<std::string>& refs);

}  // namespace hb::exec
