// THE argv table: every command the bridge can ever run comes out of
// argv_for() or, after `up`, `restart` and `rebuild`, the four settle rows
// below. A security reviewer reads this one file (argv_table.cpp) to
// enumerate them; docs/ARGV-TABLE.md lists them and a test keeps it exact.
#pragma once

#include <cstddef>
#include <cstdint>
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

// The settle step (executor/settle.hpp): with config.settle, `up`, `restart`
// and `rebuild` end by waiting for the services they affect, asking the
// engine with these rows. An `id` is a container id as the engine listed it
// and hex_id() (ipc/inspect_wire.hpp) wrote it back: 64 lowercase hex
// digits, checked here again; a row with a bad id is nullopt.
bool settles(Verb verb, const Config& config);
// With config.settle, `status` and `health` end with one look at the
// services through the same rows (`health` runs each healthcheck first).
bool looks(Verb verb, const Config& config);
// A compose install's containers carry kInstallLabel=$PROJECT, set by its
// rendered compose file (ipc/inspect_wire.hpp): `status` and `health` list,
// rebuild removes, and the sandboxed reader counts as the project's
// (`labelled`: the settle step, the look, logs) only those. A stack's
// carry its own labels (docs/COMPOSE.md, "A stack's services").
bool install_labelled(const Config& config);
// `$ENGINE ps -a -q --no-trunc --filter label=com.docker.compose.project=$PROJECT`
Argv settle_list(const Config& config);
// `$ENGINE container inspect ID...`, read in the sandbox (executor/inspect_client.hpp).
std::optional<Argv> settle_inspect(const Config& config, const std::vector<std::string>& ids);
// `$ENGINE healthcheck run ID` (podman: its healthcheck timers are systemd's,
// which a host without systemd as PID 1 lacks); nullopt for docker compose,
// whose daemon runs them.
std::optional<Argv> settle_healthcheck(const Config& config, const std::string& id);
// `$ENGINE logs --tail 20 ID`: what an unsettled service printed last.
std::optional<Argv> settle_log(const Config& config, const std::string& id);
inline constexpr int kSettleLogLines = 20;

// The post-start check of pinned bind sources (executor/pin_check.hpp), with
// `pins` in bridge.json. Each container's bind mounts, one line per
// container: its id, its process id and start time (ns), then each bind's
// source and destination as Go quotes them; only binds, whose paths come
// from the rendered compose file (an image's VOLUME paths, the agent's
// text, are volumes and never printed).
inline constexpr std::string_view kBindMountsFormat =
    "{{.Id}} {{.State.Pid}} {{.State.StartedAt.UnixNano}}{{range .Mounts}}{{if eq .Type \"bind\"}} "
    "{{printf \"%q\" .Source}} "
    "{{printf \"%q\" .Destination}}{{end}}{{end}}";
// `$ENGINE container inspect --format kBindMountsFormat ID...`
std::optional<Argv> settle_mounts(const Config& config, const std::vector<std::string>& ids);
// `$ENGINE unshare $EXECUTOR check-pins RUN_DIR PID (SOURCE TARGET)...`: in
// the engine's namespaces, whether what the process PID finds at each
// TARGET is the pin of SOURCE. nullopt for a pid of 0, a source that is not
// "." or normal, a target that is not absolute and normal.
std::optional<Argv> settle_pin_check(const Config& config, std::uint32_t pid,
                                     const std::vector<std::pair<std::string, std::string>>& binds);
// `$ENGINE stop --time 0 ID`: a container whose binds are not the pins.
std::optional<Argv> settle_stop(const Config& config, const std::string& id);

// Before a podman build (executor/base_triggers.hpp): every image of the
// engine's store, which a FROM could name, then, for an id not checked
// before, how many ONBUILD triggers its config holds. trigger_count is
// nullopt without build.buildah or for an id that is not 64 lowercase hex.
Argv trigger_images(const Config& config);
std::optional<Argv> trigger_count(const Config& config, const std::string& id);
// With an engine user, whose store buildah cannot read (docs/ENGINE-USER.md):
// `$ENGINE save --format docker-archive -o FILE ID`, the image as the
// engine hands it out, one tar the client writes without extracting
// anything, at image_save_file, where the sandbox walks it to the config
// (executor/image_config_client.hpp). nullopt for a bad id.
std::optional<Argv> trigger_save(const Config& config, const std::string& id);
inline constexpr const char* kImageSaveName = ".image-config.tar";  // in the builds dir
std::string image_save_file(const Config& config);

// `logs` with `lines` or `since` (docs/PROTOCOL.md, "Following logs"): on a
// podman-compose or stack install with `settle` (podman), whose look finds
// the service's container. The agent's manifest offers the keys where this is true.
bool accepts_log_window(const Config& config);
// A compose install that accepts a window reads `logs S` alone the same
// way, as its last kPlainLogLines lines: from S's labelled container, never
// by the container's name, which a `container_name:` another checkout runs
// shares. argv_for gives such a request an empty plan (nothing fixed runs;
// executor/follow_log.hpp reads the log).
bool logs_by_container(const Config& config);
inline constexpr std::uint16_t kPlainLogLines = 200;
// `$ENGINE logs --timestamps --since T ID` with the window's since (T one
// nanosecond before the cursor, log_lines.hpp; none for the cursor 0:0),
// else `$ENGINE logs --timestamps --tail N ID`; nullopt for a bad id or a
// window with neither.
std::optional<Argv> window_log(const Config& config, const std::string& id,
                               const LogWindow& window);

// Where the snapshot of `service`'s build context is made, and the file the
// builder writes the new image's id to: under run_dir, host-only.
std::string snapshot_dir(const Config& config, std::string_view service);
std::string image_id_file(const Config& config, std::string_view service);

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
