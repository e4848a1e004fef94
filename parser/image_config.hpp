// Reads a base image's config (docker image config JSON, as `podman save
// --format docker-dir` writes it) for the one fact the build gate needs:
// how many ONBUILD triggers config.OnBuild holds (executor/base_triggers.hpp).
// Pure: no I/O; the sandboxed `hostbridge-parser --image-config` runs it.
#pragma once

#include <cstdint>
#include <span>

#include "ipc/image_config_wire.hpp"

namespace hb::parser {

// An object whose "config" is absent, null or an object whose "OnBuild" is
// absent, null or an array of strings; anything else is BadShape.
ImageConfigAnswer read_image_config(std::span<const std::uint8_t> json, std::uint32_t seq);

}  // namespace hb::parser
