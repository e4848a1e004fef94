// The paths both the executor and hostbridge-pin (engines/podman/pin_main.cpp)
// read: what a pinned source and a bind's target may be, and where a pin
// appears. Here, not in common/config.cpp, so the pin binary links these
// few lines and nothing of bridge.json.
#pragma once

#include <string>
#include <string_view>

namespace hb {

// "." or a normalised relative path (no empty, "." or ".." component): a
// checkout_paths entry, and what `hostbridge-pin pin` accepts.
bool is_checkout_path(std::string_view path);
// "/" or an absolute path with no empty, "." or ".." component and no
// control character: a bind's target inside a container.
bool is_container_path(std::string_view path);

// Where the pinned sources appear: a tmpfs the pin mounts in the engine's
// namespace over this host-side dir (mode 0500, empty), so a pin that is
// gone (the engine's pause process died) is "no such file", never an empty
// dir mounted silently.
std::string bind_pin_root(std::string_view run_dir);
// <bind_pin_root>/<rel with '%' as %25, '/' as %2F, "." as %2E>: one flat
// name per source, so no pin is ever made inside another pinned source.
std::string bind_pin_path(std::string_view run_dir, std::string_view rel);

}  // namespace hb
