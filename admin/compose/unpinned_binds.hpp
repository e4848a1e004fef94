// A bind source in the checkout is safe from a swap only where the executor
// pins it (rootless podman: engines/podman/bind_pin.hpp). Elsewhere with the
// compose backend (docker, whose daemon resolves sources itself; podman as
// root) the engine resolves the path at every container start, so the agent
// can swap `src` for a link to any directory the host user can read while a
// container starts, and that directory is mounted (e2e_bind_pin_attack's
// control: 50 of 50). So install and approve refuse such a bind below the
// checkout root unless the person accepts it by name (bridge.json
// `unpinned_binds`, `install --unpinned-bind`); a bind of the root itself
// holds (the agent cannot replace its own mount root). docs/COMPOSE.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "admin/compose/compose_reader.hpp"
#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

struct UnpinnedBinds {
    // The accepted sources the compose file still binds (what bridge.json
    // keeps), sorted and unique.
    std::vector<std::string> accepted;
};

// `binds` from the compose reader; `accepted` what the person opted in to;
// `backend`'s flavour says who resolves the path (docker's daemon, or podman as root
// or not found to pin with). The first bind below the root not accepted is
// an error naming file, line, service and source, the risk, and both ways
// out. Install and approve both call this, for one wording.
Result<UnpinnedBinds> check_unpinned_binds(const std::vector<CheckoutBind>& binds,
                                           const std::vector<std::string>& accepted,
                                           const Backend& backend);

}  // namespace hb::admin
