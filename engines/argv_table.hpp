// THE argv table: every command the bridge can ever run comes out of
// argv_for() or, after `up`, `restart` and `rebuild`, the four settle rows
// below. A security reviewer reads argv_table.cpp and the backends' rows
// it takes (engines/stack/rows.cpp, engines/podman_compose/rows.cpp) to
// enumerate them; docs/ARGV-TABLE.md lists them and a test keeps it exact.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "engines/build_input/build_input.hpp"
#include "engines/podman/rows.hpp"
#include "executor/engine.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

// `arg` is an index into config.services (the verdict's arg index), or
// nullopt. The parser already checked the argument; it is checked again
// here (present iff the verb takes one, in range, buildable for rebuild) so
// this function alone proves what can run. Denials: JoinNetworkNotConfigured,
// NotSupportedByCompose, ArgRequired, ArgForbidden, ArgNotAService,
// ArgNotBuildable, BuildNotConfigured.
ArgvOutcome argv_for(Verb verb, std::optional<std::size_t> arg, const Config& config);

// The settle step (engines/podman/settle.hpp): with config.settle, `up`, `restart`
// and `rebuild` end by waiting for the services they affect, asking the
// engine with these rows. An `id` is a container id as the engine listed it
// and hex_id() (ipc/inspect_wire.hpp) wrote it back: 64 lowercase hex
// digits, checked here again; a row with a bad id is nullopt.
bool settles(Verb verb, const Config& config);
// `up` on a podman-compose install whose bridge.json records the services'
// definitions (settle.definitions): before it settles, each service whose
// containers carry another definition label, or none, is recreated with
// recreate_rows (docs/COMPOSE.md, "Applying an approved edit"): the pin
// step, `$ENGINE rm` of its container by its labels, then
// `$COMPOSE up -d --no-build S`. nullopt for an index out of range or an
// install that does not recreate.
bool recreates(const Config& config);
std::optional<Plan> recreate_rows(const Config& config, std::size_t index);
// With config.settle, `status` and `health` end with one look at the
// services through the same rows (`health` runs each healthcheck first).
bool looks(Verb verb, const Config& config);
// What podman's queries are told of this install (engines/podman/rows.hpp):
// a compose install's containers carry kInstallLabel=$PROJECT (labelled);
// podman runs the healthchecks where it settles (accepts_log_window).
Posture posture(const Config& config);
// `logs` with `lines` or `since` (docs/PROTOCOL.md, "Following logs"): on a
// podman-compose or stack install with `settle` (podman), whose look finds
// the service's container. The agent's manifest offers the keys where this is true.
bool accepts_log_window(const Config& config);
// A compose install that accepts a window reads `logs S` alone the same
// way, as its last kPlainLogLines lines: from S's labelled container, never
// by the container's name, which a `container_name:` another checkout runs
// shares. argv_for gives such a request an empty plan (nothing fixed runs;
// engines/podman/follow_log.hpp reads the log).
bool logs_by_container(const Config& config);
inline constexpr std::uint16_t kPlainLogLines = 200;
// `config` with the install's words replaced by the names docs/ARGV-TABLE.md
// gives them ($STACK, $COMPOSE, $COMPOSE_FILE, $ENGINE, ...): what a dry run
// answers and what the table shows, with no host path in it.
Config symbolic_config(Config config);

// What argv_for would run, in those names, words joined by spaces (steps
// joined by " && ", meaning: the next only when this one succeeded; the
// settle step or the look named after them in words); a denial's
// reason text, or "nothing (answered by the executor)" for ping (whose dry
// run executor/decide.cpp answers `pong` instead).
// A logs `window`, when given, is shown as the row it runs.
std::string symbolic_command(Verb verb, std::optional<std::size_t> arg, const Config& config,
                             const LogWindow& window = {});

}  // namespace hb::exec
