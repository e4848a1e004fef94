// What the deciding core asks of the engines: one plan per verb, and the
// steps of that plan that are more than a row to run (a build's input, the
// settle step, reading a container's log). The rooms under engines/ answer
// it; the registry (engines/registry.hpp) alone knows which engine an
// install talks to, and main.cpp hands its Engines to the drain. Nothing of
// executor/ includes engines/ (tests/security/layers.sh).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/config.hpp"
#include "common/engine_hold.hpp"
#include "ipc/result.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

using Argv = std::vector<std::string>;  // argv[0] absolute (resolved at install)

// One row of the argv table a verb runs. A step with `snapshot_of` builds an
// image: just before it runs, the engine's build input copies that service's
// build context into a host-owned snapshot and screens its Containerfile in
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

// What follows a plan that ran to its end: the engine asked how the services
// it touched came out (settle: up, restart, rebuild), or one look at them
// (status, health); docs/ARGV-TABLE.md, "Settling".
enum class Then { Nothing, Settle, Look };

// Everything decide needs to know of a verb on this install, asked once.
struct VerbPlan {
    ArgvOutcome steps = Denied{ReasonCode::UnknownVerb};
    // `logs` read from the service's own container (a window, or an install
    // that reads every `logs` so) instead of a row: Engines::follow.
    bool follows_log = false;
    Then then = Then::Nothing;
    // What runs, in docs/ARGV-TABLE.md's names: what a dry run answers and
    // a person holding it is shown; never a host path.
    std::string shown;
};

// A build a person allowed: the snapshot taken when it was held, by its hash.
// prepare_build's detail key for a build already live (docs/BUILDS.md,
// "An unchanged rebuild"); the audit records it.
inline constexpr const char* kBuildLive = "unchanged";

struct HeldBuild {
    std::string request;  // the held request's name (on-schema)
    std::string sha256;   // the snapshot hash its record names
};

// How the services came out after the plan (Then), for the response (with
// each unsettled service's last log lines) and the audit record (without).
struct Settled {
    bool ok = false;
    std::string reason;  // when not ok: what did not settle, and how
    nlohmann::ordered_json services;
    nlohmann::ordered_json audited;
};

// A `logs` read from the service's container (docs/PROTOCOL.md, "Following logs").
struct Followed {
    bool ok = false;
    std::string reason;  // when not ok: what failed, in a sentence
    std::string text;    // the chosen lines
    std::string cursor;  // where the next `since` starts
    bool more = false;   // lines after the cursor were left out
};

using Deadline = std::chrono::steady_clock::time_point;

// What each row of a plan runs with besides the run tree's environment:
// with an engine user, CONTAINER_HOST naming a relay the drain runs while
// `keep` lives (engines/podman/engine_relay.hpp).
struct StepEnvironment {
    std::shared_ptr<void> keep;
    std::vector<std::string> env;
};

class Engines {
  public:
    virtual ~Engines() = default;

    // The verb's plan on this install: its rows, or the denial that stops
    // it; `arg` an index into config.services, checked here again.
    [[nodiscard]] virtual VerbPlan plan(const Config& config, Verb verb,
                                        std::optional<std::size_t> arg,
                                        const LogWindow& window) const = 0;

    // Why each engine verb is held for a person on this install, whatever
    // the policy says (common/engine_hold.hpp, effective_mode).
    [[nodiscard]] virtual common::EngineHold hold(const Config& config) const = 0;

    // The environment of one row; an error: the engine cannot be reached
    // safely (an engine user's socket that is not its), and nothing runs.
    [[nodiscard]] virtual Result<StepEnvironment> step_environment(const Config& config) const = 0;

    // The build step's input (docs/BUILDS.md): the snapshot of
    // services[index]'s context taken and screened (from the held one with
    // `held`); the value is the audit detail, an error the refusal. A
    // detail with kBuildLive true: the service already runs what this
    // snapshot builds, and none of the plan's rows run.
    [[nodiscard]] virtual Result<nlohmann::ordered_json> prepare_build(
        const Config& config, std::size_t index, const HeldBuild* held) const = 0;
    // A held request's snapshot, taken when it is held; the value its hash.
    [[nodiscard]] virtual Result<std::string> hold_build(const Config& config,
                                                         const std::string& request,
                                                         std::size_t index) const = 0;
    // Removes the held snapshots whose hold ended (`live` false).
    virtual void sweep_held_builds(const Config& config,
                                   const std::function<bool(const std::string&)>& live) const = 0;
    // The build step's environment besides the run tree's.
    [[nodiscard]] virtual std::vector<std::string> build_environment(const Config& config,
                                                                     std::size_t index) const = 0;
    // The image id the build wrote ("sha256:" and 64 hex digits), or empty.
    [[nodiscard]] virtual std::string built_image(const Config& config,
                                                  std::size_t index) const = 0;
    // After the build: nothing it left in its TMPDIR stays.
    [[nodiscard]] virtual Result<void> discard_build_tmp(const Config& config) const = 0;

    // What the plan's `then` asks of the engine; since_ns: a restarted
    // container must have started after it; build_live: prepare_build
    // found the build live, and no row ran. Engine warnings to `log_fd`.
    // `run_rows` runs more rows of the argv table as the plan's own ran
    // (`up` recreating a service whose definition changed); true when
    // each exited 0.
    [[nodiscard]] virtual Settled then(const Config& config, Then then, Verb verb,
                                       std::optional<std::size_t> arg, std::int64_t since_ns,
                                       bool build_live, int log_fd, Deadline deadline,
                                       const std::function<bool(const Plan&)>& run_rows) const = 0;
    // `logs` of services[service] through `window`, from its container.
    [[nodiscard]] virtual Followed follow(const Config& config, std::size_t service,
                                          const LogWindow& window, int log_fd,
                                          Deadline deadline) const = 0;
};

}  // namespace hb::exec
