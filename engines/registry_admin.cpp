#include "engines/registry_admin.hpp"

namespace hb {

// The names engines/registry_names.cpp reads (a test writes bridge.json
// with each and reads it back: ConfigWrite.BackendNamesReadBack).
std::string_view backend_kind_name(BackendKind kind) {
    return kind == BackendKind::Stack ? "stack" : "compose";
}

std::string_view compose_flavour_name(ComposeFlavour flavour) {
    return flavour == ComposeFlavour::PodmanCompose ? "podman-compose" : "docker";
}

}  // namespace hb
