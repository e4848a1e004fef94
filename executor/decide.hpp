// The one step of the drain that decides about an accepted request and, when
// it may, runs it. Everything before it (claim, classify, parse) and after
// it (audit of the outcome, response, archive) belongs to the drain; this
// step only returns what happened.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "executor/engine.hpp"
#include "executor/responses.hpp"
#include "executor/spool.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

// What the drain lends to the step. The step may audit (`started`, synced,
// before any spawn) and publish a `running` response; the terminal audit
// event and response are the drain's.
struct DrainContext {
    const Config& config;
    const Engines& engines;  // the registry's (engines/registry.hpp): the verb's plan
    const Spool& spool;
    common::AuditLog& audit;
    const ResponseWriter& responses;
};

// A request the drain claimed into processing/ and the parser accepted.
struct Claimed {
    std::string name;  // on-schema basename, in processing/
};

// Held: not final; the drain holds it for a person (common/held.hpp).
enum class FinalState { Done, Failed, Denied, Expired, Held };

struct Decision {
    FinalState state = FinalState::Denied;
    ReasonCode reason = ReasonCode::None;
    // The full reason sentence for a code that carries a detail ("timeout
    // after 300 s", "rate limited: retry in 40 s"); empty: reason_text(reason).
    std::string reason_detail;
    std::optional<int> exit_code;             // only when a command ran
    std::optional<std::string> output;        // raw bytes; the drain trims and repairs them
    std::optional<std::string> log;           // "archive/<name>.log" when a command ran
    std::optional<std::int64_t> duration_ms;  // the command's run time
    std::string command;                      // Held: what would run, in docs/ARGV-TABLE.md's names
    // Held: the service whose build the person is shown a snapshot of
    // (engines/build_input/build_input.hpp, hold_build), taken when a record is made.
    std::optional<std::size_t> hold_snapshot_of;
    // The audit record's `detail` for a build: the snapshot's hash, files
    // and bytes, and the image id the builder wrote (docs/AUDIT-LOG.md).
    std::optional<nlohmann::ordered_json> audit_detail;
    // After up, restart and rebuild with a settle step: per service, how it
    // settled (engines/podman/settle.hpp), with its last log lines when it failed.
    std::optional<nlohmann::ordered_json> services;
    // A windowed logs (docs/PROTOCOL.md, "Following logs"): where the next
    // `since` starts, and whether lines after it were left out.
    std::optional<std::string> cursor;
    std::optional<bool> more;
};

// The reason text a Decision stands for (null when it has none).
inline std::optional<std::string> decision_reason(const Decision& decision) {
    if (!decision.reason_detail.empty()) return decision.reason_detail;
    if (decision.reason == ReasonCode::None) return std::nullopt;
    return std::string(reason_text(decision.reason));
}

// A refusal in `state` for `reason`: its sentence is the reason's text, then
// ": " and `detail` when there is one (decide.cpp and drain_held.cpp).
Decision refusal(FinalState state, ReasonCode reason, const std::string& detail = {});

// Whether a person has allowed this very request (`hostbridge allow`): only
// then does a verb under `ask` get past the hold.
enum class Approval { None, Given };

// Decides (docs/DECIDE-AND-RUN.md, "The gates, in order") and runs.
// Called for an Accept verdict, and for a held request a person allowed;
// `held` then names the snapshot the person was shown, which is what builds.
Decision decide_and_run(DrainContext& context, const Claimed& request, const Verdict& verdict,
                        Approval approval = Approval::None, const HeldBuild* held = nullptr);

}  // namespace hb::exec
