// bridge.json: the install-time configuration, read strictly.
// Schema: docs/CONFIG.md, key by key. Every path is absolute; nothing here
// consults HOME or the XDG variables.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ipc/pin_paths.hpp"  // is_checkout_path, bind_pin_path
#include "ipc/result.hpp"
#include "ipc/wire.hpp"

namespace hb {

// bridge.json is small; anything larger is refused before parsing.
inline constexpr std::size_t kMaxConfigBytes = 1 << 20;

enum class BackendKind { Stack, Compose };

// Which compose CLI backend.argv is, detected once by install: the one field
// every flavour-specific argv choice reads (docs/ARGV-TABLE.md). Docker:
// `docker compose` v2 and anything else that follows the compose spec CLI;
// PodmanCompose: podman-compose, whose `logs` knows no --no-color (1.0.3).
enum class ComposeFlavour { Docker, PodmanCompose };

struct Backend {
    BackendKind kind = BackendKind::Stack;
    std::vector<std::string> argv;  // absolute binary first
    std::string file;               // compose only: absolute compose file
    // Compose only: "flavour" in bridge.json, "docker" when absent (installs
    // older than the field ran the docker argv).
    ComposeFlavour flavour = ComposeFlavour::Docker;
    bool operator==(const Backend&) const = default;
};

// What each backend kind and compose flavour is, by name and by meaning:
// the registry's (engines/registry_names.cpp, compiled into hb_common, so
// reading bridge.json and the admin tool ask it; the names it writes are
// in engines/registry_admin.hpp). Nothing else but the registry names these
// enums (ctest `backend_enums`).
std::optional<BackendKind> backend_kind_named(std::string_view name);
std::optional<ComposeFlavour> compose_flavour_named(std::string_view name);
bool stack_backend(BackendKind kind);         // the project's own script
bool compose_backend(BackendKind kind);       // a compose CLI and file
bool podman_compose(const Backend& backend);  // compose with podman-compose
bool docker_compose(const Backend& backend);  // compose with docker compose v2

struct TcbPin {
    std::string path;                   // relative to project_dir
    std::optional<std::string> sha256;  // lowercase hex; nullopt: pinned as absent
    bool operator==(const TcbPin&) const = default;
};

struct Window {
    int count = 0;
    int seconds = 0;
    bool operator==(const Window&) const = default;
};

struct Limits {
    // What a working session needs (docs/PERFORMANCE.md, "A working session").
    Window mutating{60, 600};
    Window read_only{120, 60};
    int ttl_seconds = 600;
    int future_skew_seconds = 120;
    // Requests held for a person at once (policy `ask`); optional in
    // bridge.json ("max_held"), written only when it is not the default.
    int max_held = 10;
    bool operator==(const Limits&) const = default;
};

struct Timeouts {
    int default_seconds = 300;
    int rebuild_seconds = 1200;
    // Per-verb overrides from `install --verb-timeout VERB=SECONDS`, stored
    // in bridge.json as extra keys of "timeouts" named after the verb.
    std::vector<std::pair<Verb, int>> per_verb;
    [[nodiscard]] int for_verb(Verb verb) const;
    bool operator==(const Timeouts&) const = default;
};

struct DrainSettings {
    int time_budget_seconds = 1800;
    int linger_seconds = 10;
    bool operator==(const DrainSettings&) const = default;
};

struct Retention {
    int archive_days = 7;
    int responses_days = 1;
    bool operator==(const Retention&) const = default;
};

// The byte budget per window of wall-clock time for the audit events the
// agent can cause without a command running (docs/AUDIT-LOG.md, "Budget").
// Optional in bridge.json ("audit_budget"); these are the defaults.
struct AuditBudgetSettings {
    std::int64_t bytes = 256 * 1024;
    int seconds = 600;
    bool operator==(const AuditBudgetSettings&) const = default;
};

struct SystemdSettings {
    bool enabled = true;
    std::string systemd_run;  // absolute path, or empty when none was found
    // notify-send, found by install (absolute, outside the project), or
    // empty: a held request is announced on the desktop (executor/notify.hpp).
    // Optional in bridge.json, written only when found.
    std::string notify_send;
    bool operator==(const SystemdSettings&) const = default;
};

struct JoinNetwork {
    std::string engine;  // absolute path
    std::string network;
    std::string agent_container;
    bool operator==(const JoinNetwork&) const = default;
};

// How one buildable service's image is built (compose backend): read by
// install from the approved compose file, so the build step's argv comes
// from host-approved bytes (engines/podman_compose/rows.cpp, docs/BUILDS.md).
struct ServiceBuild {
    std::string service;
    std::string context;            // relative to project_dir: "." or a normal relative path
    std::string containerfile;      // relative to the context, normal, never leaving it
    std::string target;             // `build.target`, or empty
    std::vector<std::string> args;  // `build.args` as KEY=VALUE (or KEY), in file order
    std::string image;              // the tag the compose CLI runs the service from
    std::string container;          // podman-compose: the service's container name
    bool operator==(const ServiceBuild&) const = default;
};

// "build" in bridge.json: builds run on a host-owned snapshot of each
// service's context, never on the checkout (docs/BUILDS.md).
struct BuildSettings {
    std::string engine;  // absolute podman or docker that builds
    // Absolute buildah, podman-compose only: it reads a base image's ONBUILD
    // triggers, which podman 4.3 does not show (engines/podman/base_triggers.hpp).
    // Empty when install found none: every podman build is then refused.
    std::string buildah;
    std::string project;  // the compose project name, passed as -p to every compose row
    // `--network` of the build step: "none" (the default: no route anywhere,
    // the host's loopback included) or "private", which the person names.
    std::string network = "none";
    std::uint64_t max_files = 20000;       // entries in one snapshot
    std::uint64_t max_bytes = 1ULL << 30;  // bytes of regular files in one snapshot
    std::vector<ServiceBuild> services;    // sorted by service, each buildable
    // The images besides the services' own that a FROM or COPY --from may
    // name (`install --base-image`), canonical, sorted, unique
    // (ipc/image_ref.hpp); nullopt in an install older than the list, which
    // `upgrade` fills from its Containerfiles (docs/BUILDS.md).
    std::optional<std::vector<std::string>> base_images;
    bool operator==(const BuildSettings&) const = default;
};

inline constexpr std::size_t kMaxNotifyWords = 32;        // notify_command's words
inline constexpr std::size_t kMaxNotifyWordBytes = 4096;  // each of them
inline constexpr std::size_t kMaxBaseImages = 64;  // with the services', in one ScreenRequest

// The canonical images a build may name: base_images and each service's
// own tag (engines/build_input/screen_client.cpp sends them to the screen).
std::vector<std::string> build_allowed_images(const BuildSettings& build);

// "pins" in bridge.json (compose backend, rootless podman): the checkout
// paths the rendered compose file bind-mounts. runc resolves a bind source
// by path at every start, so before each command that may start a container
// the executor runs `ENGINE unshare PIN pin ...` (PIN: hostbridge-pin,
// engines/podman/bind_pin.hpp):
// inside the engine's own namespaces each source, opened with no link
// followed, is bound onto <run_dir>/.hostbridge-binds/<name>, the only path
// the rendered file names (docs/COMPOSE.md, "Bind sources are pinned").
struct BindPins {
    std::string engine;  // absolute podman whose `unshare` enters its namespaces
    std::string binary;  // absolute hostbridge-pin, run there as `pin` and `check-pins`
    // Relative to project_dir, "." or normal; sorted, unique; empty while
    // the compose file binds nothing of the checkout.
    std::vector<std::string> sources;
    bool operator==(const BindPins&) const = default;
};

// "settle" in bridge.json (compose backend): after `up`, `restart` and
// `rebuild` the executor waits until each affected service has settled,
// asking the engine about the project's containers with rows of the argv
// table (engines/podman/settle.hpp, docs/COMPOSE.md "Verified outcomes").
struct SettleSettings {
    std::string engine;   // absolute podman or docker that runs the project's containers
    std::string project;  // the compose project name (its containers' com.docker.compose.project)
    // The longest wait, within the verb's own timeout.
    int seconds = 30;
    // Compose backend: each service by the sha256 (64 lowercase hex) of its
    // rendered definition, the label its containers carry (kDefinitionLabel,
    // ipc/inspect_wire.hpp); `up` recreates a service whose containers'
    // differs (docs/COMPOSE.md, "Applying an approved edit"). Empty in an
    // install older than it: `up` then recreates nothing.
    std::map<std::string, std::string> definitions{};
    bool operator==(const SettleSettings&) const = default;
};
inline constexpr int kMaxSettleSeconds = 600;

// "engine" in bridge.json: the project's containers and builds belong to a
// dedicated unprivileged user's rootless podman service, which every command
// reaches through its API socket (CONTAINER_HOST, executor/runner.hpp
// engine_environment; docs/ENGINE-USER.md). Absent: the person's own engine.
struct EngineIdentity {
    std::string user;    // the engine user's login name, never the person's
    std::string socket;  // absolute path of its podman socket, outside the checkout
    std::string relay;   // absolute path of hostbridge-engine-relay (engines/relay/)
    bool operator==(const EngineIdentity&) const = default;
};
// A login name as `hostbridge engine setup` creates one: ^[a-z_][a-z0-9_-]{0,31}$.
bool is_user_name(std::string_view name);

// A compose project name as podman-compose normalises one:
// ^[a-z0-9][a-z0-9_-]{0,62}$.
bool is_project_name(std::string_view name);
// What a container's bind source `path` (as the engine stores it) is: the
// pinned source (a pins.sources entry) whose pin it names, if any; and
// whether it is the project dir or below it (a container created before
// pinning, or by hand, stores the checkout path). The executor's post-start check
// and doctor both ask this (engines/podman/pin_check.hpp, admin/commands/doctor.cpp).
struct BindSourceOf {
    std::optional<std::string> pinned;
    bool inside = false;
};
struct Config;
BindSourceOf bind_source_of(const Config& config, std::string_view path);

// The build of `service`, or null when bridge.json records none.
const ServiceBuild* find_build(const std::optional<BuildSettings>& build, std::string_view service);

struct Config {
    int version = 1;
    std::string slug;
    std::string project_dir;  // canonical
    std::string spool_dir;
    std::string state_dir;
    std::string policy_file;
    std::string parser;    // absolute path of hostbridge-parser
    std::string snapshot;  // absolute path of hostbridge-snapshot (the build's snapshot copy)
    bool allow_root = false;
    mode_t file_mode = 0644;
    std::optional<gid_t> agent_gid;
    Backend backend;
    std::vector<std::string> services;   // sorted
    std::vector<std::string> buildable;  // sorted, subset of services
    std::vector<TcbPin> tcb;
    // Where commands run: <run_dir>/<basename of project_dir>/ is rebuilt
    // from the verified approved copies before each command (executor/run_tree.hpp).
    std::string run_dir;
    // Files the admin tool rendered for the engine (a compose file with its
    // checkout paths made absolute), kept in <state_dir>/rendered/<path>;
    // each replaces the approved copy of the same path in the run tree.
    std::vector<TcbPin> rendered;
    // Checkout paths ("." or relative) the rendered files bind-mount or build
    // from: walked with no symlink allowed just before each command.
    std::vector<std::string> checkout_paths;
    Limits limits;
    Timeouts timeouts;
    DrainSettings drain;
    Retention retention;
    AuditBudgetSettings audit_budget;
    SystemdSettings systemd;
    std::optional<JoinNetwork> join_network;
    // Compose backend only; absent in installs older than snapshot builds.
    std::optional<BuildSettings> build;
    // Compose backend with rootless podman only; absent before pinning.
    std::optional<BindPins> pins;
    // Compose backend; absent in installs older than verified outcomes.
    std::optional<SettleSettings> settle;
    // "unpinned_binds" (compose backend without pins: docker, or podman as
    // root): the checkout paths below its root the person accepts as bind
    // sources that the engine resolves by path at every start, and the agent
    // can therefore swap for a link while a container starts
    // (admin/compose/unpinned_binds.hpp). Sorted, unique, never ".". Read only by the
    // admin tool's install and approve.
    std::vector<std::string> unpinned_binds;
    // Absent: the engine runs as the person (docs/ENGINE-USER.md).
    std::optional<EngineIdentity> engine;
    // "accept_uncontained_engine": true only where the person said so
    // (`install --accept-uncontained-engine`): the executor then runs an
    // engine verb the policy says auto although an escape through the
    // engine would reach the person (common/engine_hold.hpp).
    bool accept_uncontained_engine = false;
    // "notify_command": the person's own program, run for each held request
    // with its summary as JSON on stdin (executor/notify.hpp): absolute and
    // outside project_dir first, then fixed words, never a shell. Empty: none.
    std::vector<std::string> notify_command;
    bool operator==(const Config&) const = default;
};

// Parses bridge.json text. Any unknown key, wrong type, relative path,
// out-of-range number or inconsistent list is an error naming the key.
Result<Config> parse_config(std::string_view text);
// Reads and parses the file at `path`: refuses a symlink (O_NOFOLLOW), a
// non-regular file, a world-writable file and anything over kMaxConfigBytes.
Result<Config> load_config(const std::string& path);

}  // namespace hb
