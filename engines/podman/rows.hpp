// podman's own queries: the rows the settle step, the look, the pin check,
// the base-trigger check and a windowed `logs` ask the engine with, after
// or around the verb's own rows (engines/argv_table.hpp). An `id` is a
// container id as the engine listed it and hex_id() (ipc/inspect_wire.hpp)
// wrote it back: 64 lowercase hex digits, checked here again; a row with a
// bad id is nullopt. docs/ARGV-TABLE.md lists them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/config.hpp"
#include "executor/engine.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

// What the registry (engines/registry.hpp, posture()) says of an install
// for podman's queries, so this room switches on no backend.
struct Posture {
    // A compose install's containers carry kInstallLabel=$PROJECT, set by
    // its rendered compose file (ipc/inspect_wire.hpp): `status` and
    // `health` list, rebuild removes, and the sandboxed reader counts as
    // the project's only those. A stack's carry its own labels
    // (docs/COMPOSE.md, "A stack's services").
    bool labelled = false;
    // podman's healthchecks are systemd timers, which a host without
    // systemd as PID 1 lacks: the settle step runs them (docker compose's
    // daemon runs its own).
    bool healthchecks = false;
};

// `$ENGINE ps -a -q --no-trunc --filter label=com.docker.compose.project=$PROJECT`
Argv settle_list(const Config& config);
// `$ENGINE container inspect ID...`, read in the sandbox (engines/podman/inspect_client.hpp).
std::optional<Argv> settle_inspect(const Config& config, const std::vector<std::string>& ids);
// `$ENGINE healthcheck run ID`; nullopt where podman does not run them (Posture).
std::optional<Argv> settle_healthcheck(const Config& config, const Posture& posture,
                                       const std::string& id);
// `$ENGINE logs --tail 20 ID`: what an unsettled service printed last.
std::optional<Argv> settle_log(const Config& config, const std::string& id);
inline constexpr int kSettleLogLines = 20;

// The post-start check of pinned bind sources (engines/podman/pin_check.hpp), with
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
// `$ENGINE unshare $PIN check-pins RUN_DIR PID (SOURCE TARGET)...`: in
// the engine's namespaces, whether what the process PID finds at each
// TARGET is the pin of SOURCE. nullopt for a pid of 0, a source that is not
// "." or normal, a target that is not absolute and normal.
std::optional<Argv> settle_pin_check(const Config& config, std::uint32_t pid,
                                     const std::vector<std::pair<std::string, std::string>>& binds);
// `$ENGINE stop --time 0 ID`: a container whose binds are not the pins.
std::optional<Argv> settle_stop(const Config& config, const std::string& id);

// Before a podman build (engines/podman/base_triggers.hpp): every image of the
// engine's store, which a FROM could name, then, for an id not checked
// before, how many ONBUILD triggers its config holds (docker's inspect
// shows them, .Config.OnBuild: docs/DOCKER.md). trigger_count is nullopt
// without build.buildah on podman or for an id that is not 64 lowercase hex.
Argv trigger_images(const Config& config);
std::optional<Argv> trigger_count(const Config& config, const std::string& id);
// Before a docker build: whether the daemon holds `ref` (one of
// build_allowed_images): `docker image inspect --format {{.Id}} REF`.
Argv image_present(const Config& config, const std::string& ref);
// With an engine user, whose store buildah cannot read (docs/ENGINE-USER.md):
// `$ENGINE save --format docker-archive -o FILE ID`, the image as the
// engine hands it out, one tar the client writes without extracting
// anything, at image_save_file, where the sandbox walks it to the config
// (engines/podman/image_config_client.hpp). nullopt for a bad id.
std::optional<Argv> trigger_save(const Config& config, const std::string& id);
inline constexpr const char* kImageSaveName = ".image-config.tar";  // in the builds dir
std::string image_save_file(const Config& config);

// `$ENGINE logs --timestamps --since T ID` with the window's since (T one
// nanosecond before the cursor; none for the cursor 0:0),
// else `$ENGINE logs --timestamps --tail N ID`; nullopt for a bad id or a
// window with neither.
std::optional<Argv> window_log(const Config& config, const std::string& id,
                               const LogWindow& window);

}  // namespace hb::exec
