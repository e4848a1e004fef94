// Reads a base image as `podman save --format docker-archive` writes it (a
// tar: layers, <config digest>.json, manifest.json, repositories) for the
// one fact the build gate needs: how many ONBUILD triggers its config's
// config.OnBuild holds (engines/podman/base_triggers.hpp). Pure: the bytes come
// through a read function; the sandboxed `hostbridge-parser --image-config`
// runs it on the fd the executor sends.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "ipc/image_config_wire.hpp"

namespace hb::parser {

// Reads up to `size` bytes into `buf`: the count, 0 at the end, <0 an error.
using ReadFn = std::function<ssize_t(std::uint8_t* buf, std::size_t size)>;

// Walks the tar: ustar headers (checksum checked; PAX `path`/`size` records
// and GNU long names applied to the next entry), every entry's data read
// past, the one top-level regular file named <64 lowercase hex>.json kept
// (at most kMaxImageConfigBytes) and read as the config. Zero or two such
// files: NotOneConfig; anything out of shape: BadArchive.
ImageConfigAnswer read_image_archive(const ReadFn& read, std::uint32_t seq);

// The config itself: an object whose "config" is absent, null or an object
// whose "OnBuild" is absent, null or an array of strings; anything else is
// BadShape.
ImageConfigAnswer read_image_config(std::span<const std::uint8_t> json, std::uint32_t seq);

}  // namespace hb::parser
