#include "admin/compose/unpinned_binds.hpp"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "display/visible.hpp"

namespace hb::admin {

using display::visible;

Result<UnpinnedBinds> check_unpinned_binds(const std::vector<CheckoutBind>& binds,
                                           const std::vector<std::string>& accepted,
                                           const Backend& backend) {
    // Who resolves the path, in the error's words.
    const std::string_view engine = docker_compose(backend) ? "docker's daemon"
                                    : ::geteuid() == 0
                                        ? "podman run as root"
                                        : "podman (not found by install, so nothing pins)";
    std::set<std::string> used;
    for (const CheckoutBind& bind : binds) {
        if (bind.source == ".") continue;  // the root: the agent cannot swap it
        if (std::find(accepted.begin(), accepted.end(), bind.source) != accepted.end()) {
            used.insert(bind.source);
            continue;
        }
        const std::string source = visible(bind.source);
        return make_error(
            visible(bind.file) + " line " + std::to_string(bind.line) + ": service " +
            visible(bind.service) + " bind-mounts " + source + " of the checkout, and " +
            std::string(engine) +
            " resolves that path itself at every container start: the agent can swap " + source +
            " for a link to any directory you can read (your home, this bridge's bridge.json) "
            "while a container starts, and that directory is mounted into it. Bind the whole "
            "checkout (.:/app), a path outside it or a named volume instead; or accept the risk "
            "for this mount: hostbridge install ... --unpinned-bind " +
            source + " (bridge.json unpinned_binds; docs/COMPOSE.md)");
    }
    return UnpinnedBinds{{used.begin(), used.end()}};
}

}  // namespace hb::admin
