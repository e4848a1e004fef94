// The registry's part the admin tool links and the executor does not
// (hb_registry_admin): the names it writes into bridge.json and shows.
#pragma once

#include <string_view>

#include "common/config.hpp"
#include "ipc/verbs.hpp"

namespace hb {

std::string_view backend_kind_name(BackendKind kind);
std::string_view compose_flavour_name(ComposeFlavour flavour);
// What AGENT.md says the host does for `verb` on `config`'s install, in its
// backend's room's words (engines/stack/install.hpp,
// engines/podman_compose/install.hpp); empty where they are AGENT.md's own.
std::string_view agent_words(const Config& config, Verb verb);

}  // namespace hb
