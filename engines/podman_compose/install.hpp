// The compose backend's install-time reading: which compose command to run
// when none is given, and which flavour it is. The admin tool links it
// (hb_engine_compose_install) and runs what it asks; the executor does not,
// and reads the flavour install recorded in bridge.json (backend.flavour).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/verbs.hpp"

namespace hb::exec {

// What the admin tool lends this reading: a program found on PATH, and an
// argv run with a short bound, what it printed when it exited 0.
struct InstallHost {
    std::function<std::optional<std::string>(std::string_view name)> find;
    std::function<std::optional<std::string>(const std::vector<std::string>& argv)> run;
};

// `docker compose` where `docker compose version` works, else
// podman-compose where it is on PATH; nullopt for neither.
std::optional<std::vector<std::string>> default_compose_command(const InstallHost& host);

struct ComposeFlavourRead {
    bool podman_compose = false;
    std::string how;  // "by its name" or "from `version`"
    // compose v1 (Debian 12's docker-compose 1.29: "docker-compose version
    // 1.29.2, build unknown"), which install refuses.
    bool compose_v1 = false;
};
// Which compose CLI `words` is (words[0] resolved), asked once (`...
// version`). A binary inside the checkout is the agent's until approved:
// never run it, go by its name. Anything unrecognised follows the compose
// spec CLI, as docker compose does.
ComposeFlavourRead read_compose_flavour(const std::vector<std::string>& words, bool inside_checkout,
                                        const InstallHost& host);

// What AGENT.md says the host does for `verb` on a compose install
// (admin/install/agent_doc.cpp), `verified` where bridge.json has `settle`;
// empty for a verb whose words are the same on every backend, or that
// compose does not offer (`init`).
std::string_view compose_agent_words(Verb verb, bool verified);

}  // namespace hb::exec
