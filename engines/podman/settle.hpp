// The settle step: after `up`, `restart` and `rebuild` (compose backend, with
// `settle` in bridge.json) the executor waits, within the verb's time
// budget and at most settle.seconds, until every service the verb affects
// has settled: running, and healthy where it has a healthcheck (done), or
// exited, restarting, paused, unhealthy, not restarted, or not on the image
// just built (failed). A compose CLI that exits 0 after an error no longer
// counts as success. The engine is asked with the settle rows of
// engines/argv_table.hpp; its JSON is read in the sandbox
// (engines/podman/inspect_client.hpp). docs/COMPOSE.md, "Verified outcomes".
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config.hpp"
#include "engines/podman/rows.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/result.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

// The project's containers by the list row: their ids, sorted.
Result<std::vector<std::string>> list_containers(const Config& config, int log_fd,
                                                 std::chrono::steady_clock::time_point deadline);
// Those containers as the inspect row describes them, read in the sandbox.
Result<std::vector<ContainerFacts>> describe_containers(
    const Config& config, const Posture& posture, const std::vector<std::string>& ids, int log_fd,
    std::chrono::steady_clock::time_point deadline);
// The project's containers as the engine describes them now: the list and
// inspect rows, the JSON read in the sandbox. Engine warnings to `log_fd`.
Result<std::vector<ContainerFacts>> ask_engine(const Config& config, const Posture& posture,
                                               int log_fd,
                                               std::chrono::steady_clock::time_point deadline);

// What "settled as it should" means for one request.
struct SettleGoal {
    std::vector<std::size_t> services;  // indices into config.services, sorted
    // restart, rebuild: every container of those services must have started
    // at or after this (ns since the epoch, taken before the first step).
    std::int64_t since_ns = 0;
    // Every verb: when the request's first step began. The pin check
    // (engines/podman/pin_check.hpp) looks at containers started since then.
    std::int64_t request_ns = 0;
    // rebuild: the image the build step wrote (its --iidfile).
    std::optional<std::array<std::uint8_t, 32>> image;
    // up that compared definitions (changed_definitions): the services it
    // recreated, sorted; each other is `unchanged`.
    std::optional<std::vector<std::size_t>> recreated;
    // rebuild whose build was live already (docs/BUILDS.md, "An unchanged
    // rebuild"): nothing was built or recreated, and the answer says so.
    bool build_live = false;
};

// up: every service; restart S and rebuild S: S alone.
SettleGoal settle_goal(Verb verb, std::optional<std::size_t> arg, const Config& config,
                       std::int64_t since_ns);

enum class Standing { Good, Waiting, Bad };

// One container, judged: a fixed sentence built from numbers and enums
// ("exited with status 1"), empty when good.
struct Judged {
    Standing standing = Standing::Waiting;
    std::string problem;
};
Judged judge_container(const ContainerFacts& facts, const SettleGoal& goal);

struct ServiceReport {
    std::string service;
    std::vector<ContainerFacts> containers;  // labelled with the project and this service
    Standing standing = Standing::Waiting;   // the worst of its containers; Bad when it has none
    std::string problem;                     // the first container's problem, or "no container"
    std::string log;                         // the engine's last log lines when not Good
    // With goal.recreated: "recreated (definition changed)" or "unchanged".
    std::string applied;
    bool build_unchanged = false;  // goal.build_live
};
inline constexpr const char* kRecreated = "recreated (definition changed)";
inline constexpr const char* kUnchanged = "unchanged";
inline constexpr const char* kBuildUnchanged =
    "unchanged: its snapshot and image are the ones it runs, nothing recreated";

// `up` (engines/argv_table.hpp, recreates): the services a container of
// which was made from another definition than bridge.json's, or carries
// none, as the sandbox compared them (DefinitionMatch); sorted.
std::vector<std::size_t> changed_definitions(const std::vector<ContainerFacts>& facts,
                                             const Config& config);
// Pure: every goal service from the containers the engine described.
std::vector<ServiceReport> judge_services(const std::vector<ContainerFacts>& facts,
                                          const SettleGoal& goal, const Config& config);

struct SettleOutcome {
    bool ok = false;
    std::string reason;  // when not ok: what did not settle, and how
    std::vector<ServiceReport> services;
};

// Asks, judges, runs podman's healthchecks while one is starting, asks
// again once a second, until every goal service is Good or one is Bad, or
// until `deadline`. Engine warnings go to `log_fd` (the request's log).
SettleOutcome settle(const Config& config, const Posture& posture, const SettleGoal& goal,
                     int log_fd, std::chrono::steady_clock::time_point deadline);

// `status` and `health` on an install with `settle` (looks() in
// engines/argv_table.hpp): after the `ps` row exited 0, one look at every
// service, no waiting. `health` first runs the healthcheck of each running
// container that has one (podman: nothing else runs them here) and asks
// again, so what it reports is fresh. `ok` for status: the engine answered;
// for health: every service running, and healthy where it has a check.
// One line per service goes to `log_fd`, so the text says it too.
SettleOutcome look(const Config& config, const Posture& posture, Verb verb, int log_fd,
                   std::chrono::steady_clock::time_point deadline);

// The `services` array of the response and the audit record
// (docs/PROTOCOL.md): per service, its containers' id (12 hex digits),
// state, health, restart count, image (12 hex digits) and start time; the
// log lines only in the response (`with_logs`).
nlohmann::ordered_json settle_json(const SettleOutcome& outcome, bool with_logs);

}  // namespace hb::exec
