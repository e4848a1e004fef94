// THE argv table: every command the bridge can ever run comes out of
// argv_for(). A security reviewer reads that one function (argv_table.cpp)
// to enumerate them; docs/ARGV-TABLE.md lists them and a test keeps it exact.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/config.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

using Argv = std::vector<std::string>;  // argv[0] absolute (resolved at install)

// One command of a verb. A step with `snapshot_of` builds an image: just
// before it runs, the executor copies that service's build context into its
// host-owned snapshot dir (snapshot_dir) and screens its Containerfile in
// the sandbox; the argv names only the snapshot (docs/BUILDS.md).
struct Step {
    Argv argv;
    std::optional<std::size_t> snapshot_of;  // index into config.services
    bool operator==(const Step&) const = default;
};
// The steps of one verb, run in order under one time budget; the first
// that fails ends the request.
using Plan = std::vector<Step>;

struct NoCommand {};  // ping: answered by the executor itself, nothing runs
struct Denied {       // this install cannot run the verb (or the arg is off its enumeration)
    ReasonCode reason;
};
using ArgvOutcome = std::variant<Plan, NoCommand, Denied>;

// `arg` is an index into config.services (the verdict's arg index), or
// nullopt. The parser already checked the argument; it is checked again
// here (present iff the verb takes one, in range, buildable for rebuild) so
// this function alone proves what can run. Denials: JoinNetworkNotConfigured,
// NotSupportedByCompose, ArgRequired, ArgForbidden, ArgNotAService,
// ArgNotBuildable, BuildNotConfigured.
ArgvOutcome argv_for(Verb verb, std::optional<std::size_t> arg, const Config& config);

// Where the snapshot of `service`'s build context is made, and the file the
// builder writes the new image's id to: under run_dir, host-only.
std::string snapshot_dir(const Config& config, std::string_view service);
std::string image_id_file(const Config& config, std::string_view service);

// `config` with the install's words replaced by the names docs/ARGV-TABLE.md
// gives them ($STACK, $COMPOSE, $COMPOSE_FILE, $ENGINE, ...): what a dry run
// answers and what the table shows, with no host path in it.
Config symbolic_config(Config config);

// What argv_for would run, in those names, words joined by spaces (steps
// joined by " && ", meaning: the next only when this one succeeded); a denial's
// reason text, or "nothing (answered by the executor)" for ping (whose dry
// run executor/decide.cpp answers `pong` instead).
std::string symbolic_command(Verb verb, std::optional<std::size_t> arg, const Config& config);

}  // namespace hb::exec
