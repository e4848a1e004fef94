#include "engines/registry_admin.hpp"

#include "engines/podman_compose/install.hpp"
#include "engines/stack/install.hpp"

namespace hb {

// The names engines/registry_names.cpp reads (a test writes bridge.json
// with each and reads it back: ConfigWrite.BackendNamesReadBack).
std::string_view backend_kind_name(BackendKind kind) {
    return kind == BackendKind::Stack ? "stack" : "compose";
}

std::string_view compose_flavour_name(ComposeFlavour flavour) {
    return flavour == ComposeFlavour::PodmanCompose ? "podman-compose" : "docker";
}

std::string_view agent_words(const Config& config, Verb verb) {
    const bool verified = config.settle.has_value();
    return config.backend.kind == BackendKind::Stack ? exec::stack_agent_words(verb, verified)
                                                     : exec::compose_agent_words(verb, verified);
}

}  // namespace hb
