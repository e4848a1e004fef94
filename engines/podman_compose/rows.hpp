// The compose backend's rows: `$COMPOSE -p $PROJECT -f $COMPOSE_FILE` (the
// rendered copy in the run tree) and a word per verb, a rebuild's image
// built by the engine from the snapshot (docs/BUILDS.md), the bind pins
// before what may start a container. podman-compose 1.0.3's; where docker
// compose v2 differs, the registry says so in a Dialect (engines/registry.cpp;
// docs/ARCHITECTURE.md, "docker compose against the interface").
// docs/ARGV-TABLE.md lists them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "common/config.hpp"
#include "executor/engine.hpp"

namespace hb::exec {

struct ComposeDialect {
    // podman-compose 1.0.3: its `logs` has no --no-color (it never colours);
    // it ignores --no-deps, so a rebuild removes the service's container
    // alone and creates it again; its engine builds with --pull=never.
    // docker compose v2 (false): `up --no-deps --force-recreate S`, and its
    // build has no --pull=never (docs/DOCKER.md).
    bool podman_compose = true;
    // With settle (podman's): `status` and `health` are the engine's list of
    // the install's own containers; `logs S` reads S's container and runs no
    // fixed row (engines/podman/follow_log.hpp); `restart S` is the engine's
    // restart of S's labelled containers, without the compose CLI.
    bool engine_lists = false;
    // Where a build's snapshot and image id file lie, a build's input being
    // another room's (engines/build_input/build_input.hpp).
    std::string (*snapshot_dir)(const Config&, std::string_view) = nullptr;
    std::string (*image_id_file)(const Config&, std::string_view) = nullptr;
};

// The verb's rows, `arg` already checked (engines/argv_table.hpp). Ping and
// join-network are the table's own rows, never asked here.
ArgvOutcome compose_rows(Verb verb, std::optional<std::size_t> arg, const Config& config,
                         const ComposeDialect& dialect);

// `up` recreating services[index] (config.settle set, index in range): the
// pin step, then its container replaced as `rebuild` replaces it, with no
// build (engines/argv_table.hpp, recreate_rows).
Plan compose_recreate(const Config& config, std::size_t index);

}  // namespace hb::exec
