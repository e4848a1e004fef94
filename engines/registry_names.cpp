// What each backend kind and compose flavour is called in bridge.json and
// what it is (common/config.hpp). Compiled into hb_common, which reads
// bridge.json for the executor and the admin tool alike; with the rest of
// engines/registry* the only code that names BackendKind and ComposeFlavour
// (ctest `backend_enums`). The names written back: engines/registry_admin.cpp.
#include "common/config.hpp"

namespace hb {

std::optional<BackendKind> backend_kind_named(std::string_view name) {
    if (name == "stack") return BackendKind::Stack;
    if (name == "compose") return BackendKind::Compose;
    return std::nullopt;
}

std::optional<ComposeFlavour> compose_flavour_named(std::string_view name) {
    if (name == "docker") return ComposeFlavour::Docker;
    if (name == "podman-compose") return ComposeFlavour::PodmanCompose;
    return std::nullopt;
}

bool stack_backend(BackendKind kind) {
    return kind == BackendKind::Stack;
}

bool compose_backend(BackendKind kind) {
    return kind == BackendKind::Compose;
}

bool podman_compose(const Backend& backend) {
    return backend.kind == BackendKind::Compose && backend.flavour == ComposeFlavour::PodmanCompose;
}

bool docker_compose(const Backend& backend) {
    return backend.kind == BackendKind::Compose && backend.flavour == ComposeFlavour::Docker;
}

}  // namespace hb
