// The registry's part the admin tool links and the executor does not
// (hb_registry_admin): the names it writes into bridge.json and shows.
#pragma once

#include <string_view>

#include "common/config.hpp"

namespace hb {

std::string_view backend_kind_name(BackendKind kind);
std::string_view compose_flavour_name(ComposeFlavour flavour);

}  // namespace hb
