// The project's containers `install` adopts (issue 44 item 3's naming rule,
// issue 48 item 7; docs/COMPOSE.md, "Adopting the containers made before"):
// those podman-compose made from the checkout's compose dir, by hand without
// -p (the directory's project) or as the bridge's project without its label,
// pins or approved definition. Each is found by its compose labels alone,
// compared whole: another project's container, whatever its name, is never
// one. Only on the person's own rootless podman with pins (the engine's
// store holds no other user's containers).
#pragma once

#include <string>
#include <vector>

#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

struct Adoptee {
    std::string id;       // the engine's full id (64 hex): what is removed
    std::string name;     // as the engine gave it (the agent may have chosen it)
    std::string service;  // its com.docker.compose.service, one of config.services
    std::string why;      // a sentence, names as the engine gave them
};

// Whether this install adopts at all: compose on podman-compose, the
// person's own rootless podman with pins, verified outcomes (settle).
bool adopts_containers(const Config& config);

// Every container to adopt, in the engine's order; an error: the engine
// could not be asked.
Result<std::vector<Adoptee>> adoptable_containers(const Config& config);

// What adopt() did: each service left without a running container after
// it removed that service's containers, and the rows to start them.
struct Adoption {
    bool changed = false;              // a container was removed
    std::vector<std::string> down;     // services, sorted
    std::string error;                 // why it stopped, a sentence; empty when it did not
    std::vector<std::string> restart;  // command lines that start the project again
};

// Removes `which` (by id) and runs the rows `up` runs on this install
// (engines/argv_table.hpp, argv_for and the settle step after it), under the
// drain's lock, from a run tree built as the executor builds it. Before
// anything is removed it checks what the rows need (the drain's lock, the
// run tree, every built image): a failure there changes nothing. Says what
// it does on stdout.
Adoption adopt(const Config& config, const std::vector<Adoptee>& which);

// The line that removes them by hand, each by its id (never by a name the
// agent may have chosen).
std::string remove_line(const Config& config, const std::vector<Adoptee>& which);

}  // namespace hb::admin
