// The decide-and-run step: the gates in the order docs/DECIDE-AND-RUN.md,
// "The gates, in order", lists, which tests/security/docs_one_home.sh holds to
// decide() below. Each gate either lets the request through or returns the
// one refusal that stopped it; only the last step spawns anything, and only
// a row of the one plan the engines gave for the verb (executor/engine.hpp).
#include "executor/decide.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>

#include "common/engine_hold.hpp"
#include "common/grant.hpp"
#include "common/integrity_gate.hpp"
#include "common/policy.hpp"
#include "executor/evidence.hpp"
#include "executor/rate_limiter.hpp"
#include "executor/run_tree.hpp"
#include "executor/runner.hpp"
#include "ipc/log_cursor.hpp"
#include "ipc/sys.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {

using common::AuditEvent;
using common::AuditLog;
using common::AuditRecord;
using common::check_tcb;
using common::GateReport;
using common::load_policy;
using common::Mode;
using common::Policy;

namespace {

std::string with_detail(ReasonCode reason, const std::string& detail) {
    return std::string(reason_text(reason)) + ": " + detail;
}

}  // namespace

Decision refusal(FinalState state, ReasonCode reason, const std::string& detail) {
    Decision d;
    d.state = state;
    d.reason = reason;
    if (!detail.empty()) d.reason_detail = with_detail(reason, detail);
    return d;
}

namespace {

// Expiry uses the wall clock on purpose: requested_at is wall-clock time
// written by the agent; the rate limiter, which must not jump, does not.
std::optional<Decision> check_expiry(const Config& config, const Verdict& verdict) {
    const std::int64_t now = std::time(nullptr);
    if (verdict.requested_at == kNoTime) {
        return refusal(FinalState::Denied, ReasonCode::BadRequestedAt);
    }
    if (verdict.requested_at - now > config.limits.future_skew_seconds) {
        return refusal(FinalState::Denied, ReasonCode::InFuture,
                       "more than " + std::to_string(config.limits.future_skew_seconds) +
                           " s ahead of the host clock");
    }
    if (now - verdict.requested_at > config.limits.ttl_seconds) {
        return refusal(FinalState::Expired, ReasonCode::Expired,
                       "older than " + std::to_string(config.limits.ttl_seconds) + " s");
    }
    return std::nullopt;
}

// The command's log: created fresh in archive/ through the pinned dirfd.
// A name already there was planted (the drain never reuses one): it is
// quarantined as evidence and the log created again; never appended to.
Result<UniqueFd> create_log(const Spool& spool, const Config& config, AuditLog& audit,
                            const std::string& name) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int fd = ::openat(spool.fd(SpoolDir::Archive), name.c_str(),
                                O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            UniqueFd log(fd);
            // The agent's container user may be another uid: group and
            // mode as for every published file (Spool's apply_file_mode).
            if (const char* unset =
                    apply_file_mode(log.get(), FileMode{config.file_mode, config.agent_gid})) {
                const int err = errno;
                return make_error(sys::errno_text(
                    std::string("cannot set the ") + unset + " of archive/" + name, err));
            }
            return log;
        }
        if (errno != EEXIST || attempt > 0) {
            return make_error(sys::errno_text("cannot create archive/" + name));
        }
        // The agent can delete the quarantined copy but not the audit log,
        // so what was planted is described there first (never opened: a
        // FIFO or device must not block or be read).
        struct stat st {};
        AuditRecord planted;
        planted.event = AuditEvent::Quarantined;
        planted.request = name;
        planted.reason = "planted in archive/ where a command's log goes; ";
        *planted.reason +=
            ::fstatat(spool.fd(SpoolDir::Archive), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0
                ? describe_evidence(st, -1)
                : std::string("gone before it could be described");
        if (auto audited = audit.append_agent(planted); !audited) {
            return make_error("cannot audit a planted archive/" + name + ": " +
                              audited.error().message);
        }
        if (auto moved = spool.quarantine(SpoolDir::Archive, name); !moved) {
            return make_error("cannot move a planted archive/" + name +
                              " aside: " + moved.error().message);
        }
    }
    return make_error("cannot create archive/" + name);
}

// The nonce of an on-schema name: the 16 hex digits before ".json".
std::string_view request_nonce(std::string_view name) {
    constexpr std::size_t kNonce = 16;
    constexpr std::size_t kSuffix = 5;  // ".json"
    if (name.size() < kNonce + kSuffix) return {};
    return name.substr(name.size() - kSuffix - kNonce, kNonce);
}

// One line in the log before each step of a plan with more than one, so
// the agent can tell whose output is whose.
void mark_step(int log_fd, std::size_t step, std::size_t steps) {
    const std::string line =
        "hostbridge: step " + std::to_string(step + 1) + " of " + std::to_string(steps) + "\n";
    [[maybe_unused]] const bool written = sys::write_all(log_fd, line);
}

// The host's own lines of `text` (log_line's): what a change that went live
// is answered with, without the engine's text around them (docs/PROTOCOL.md,
// `output`; podman-compose 1.0.3 prints errors it recovers from, issue 48).
std::string host_lines(const std::string& text) {
    std::string said;
    for (std::size_t at = 0, end = 0; at < text.size(); at = end) {
        end = std::min(text.find('\n', at), text.size() - 1) + 1;
        if (text.compare(at, 12, "hostbridge: ") == 0) said.append(text, at, end - at);
    }
    return said;
}

Decision follow(const DrainContext& context, const Verdict& verdict, int log_fd, std::string log) {
    const auto started = std::chrono::steady_clock::now();
    const int timeout_s = context.config.timeouts.for_verb(Verb::Logs);
    const Followed followed =
        context.engines.follow(context.config, verdict.arg_index, verdict.window, log_fd,
                               started + std::chrono::seconds(timeout_s));
    Decision d;
    d.log = std::move(log);
    d.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - started)
                        .count();
    if (!followed.ok) {
        d.state = FinalState::Failed;
        d.reason_detail = followed.reason;
        if (auto tail = read_tail(log_fd, kMaxOutputBytes + 3); tail) d.output = std::move(*tail);
        return d;
    }
    d.state = FinalState::Done;
    d.exit_code = 0;
    d.output = followed.text;
    d.cursor = followed.cursor;
    d.more = followed.more;
    return d;
}

// The request's `started` record, durable before the spawn (nothing runs
// without a record of it), and its `running` response.
Result<void> announce(DrainContext& context, const Claimed& request, const Verdict& verdict,
                      const std::string& log_name,
                      const std::optional<nlohmann::ordered_json>& build_detail,
                      const std::optional<nlohmann::ordered_json>& grant) {
    const Config& config = context.config;
    AuditRecord started;
    started.event = AuditEvent::Started;
    started.request = request.name;
    started.verb = *verdict.verb;
    if (verdict.arg_index != kNoArg) started.arg = config.services.at(verdict.arg_index);
    started.detail = build_detail;
    if (grant) {
        if (!started.detail) started.detail = nlohmann::ordered_json::object();
        (*started.detail)["grant"] = *grant;
    }
    if (auto audited = context.audit.append(started, /*sync=*/true); !audited) {
        return audited.error();
    }
    Response running;
    running.state = ResponseState::Running;
    running.request = request.name;
    running.verb = *verdict.verb;
    running.arg = started.arg;
    running.requested_at = verdict.requested_at;
    running.updated_at = std::time(nullptr);
    running.log = "archive/" + log_name;
    (void)context.responses.publish(running);  // best effort: the terminal one matters
    return {};
}

// The plan's steps in order under one deadline, each its own scope unit;
// the first that fails ends them. A build step's image id goes into
// `build_detail`.
RunResult run_steps(const DrainContext& context, const Claimed& request, Verb verb,
                    const Plan& plan, int log_fd, Deadline deadline,
                    std::optional<nlohmann::ordered_json>& build_detail, std::size_t first = 0) {
    const Config& config = context.config;
    // A plan of no steps (status and health where the engine is read) ran
    // to its end: only what follows it (plan.then) asks the engine.
    RunResult result;
    result.status = RunResult::Status::Exited;
    result.exit_code = 0;
    std::int64_t duration_ms = 0;
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const Step& step = plan[i];
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            result = RunResult{};
            result.status = RunResult::Status::TimedOut;
            break;
        }
        if (plan.size() > 1 && first == 0) mark_step(log_fd, i, plan.size());
        // Each step its own scope unit: the first keeps the documented name.
        const std::string nonce = std::string(request_nonce(request.name)) +
                                  (first + i == 0 ? "" : "-" + std::to_string(first + i));
        const Argv command = scoped_argv(step.argv, verb, config, nonce, user_manager_reachable());
        std::vector<std::string> env = run_tree_environment(config);
        auto engine = context.engines.step_environment(config);
        if (!engine) {
            result = RunResult{};
            result.error = engine.error().message;
            break;
        }
        env.insert(env.end(), engine->env.begin(), engine->env.end());
        if (step.snapshot_of) {
            const std::vector<std::string> build =
                context.engines.build_environment(config, *step.snapshot_of);
            env.insert(env.end(), build.begin(), build.end());
        }
        result = run_command(command, log_fd, left, kDefaultKillGrace, run_tree_dir(config), env);
        duration_ms += result.duration_ms;
        if (step.snapshot_of && build_detail) {
            const std::string image = context.engines.built_image(config, *step.snapshot_of);
            if (!image.empty()) (*build_detail)["image_id"] = image;
        }
        if (!result.succeeded()) break;
    }
    result.duration_ms = duration_ms;
    // Nothing a build step left in its TMPDIR outlives the build; the next
    // one starts from an empty one anyway (the engines' build input), or is
    // refused if it cannot, so a failure here is only reported.
    if (build_detail) {
        if (auto removed = context.engines.discard_build_tmp(config); !removed) {
            (void)sys::write_all(log_fd, "hostbridge: the build's TMPDIR was not removed: " +
                                             removed.error().message + "\n");
        }
    }
    return result;
}

// What the steps' result makes of the request.
Decision outcome_of(const RunResult& result, int timeout_s) {
    Decision d;
    d.duration_ms = result.duration_ms;
    switch (result.status) {
        case RunResult::Status::Exited:
            d.exit_code = result.exit_code;
            d.state = result.exit_code == 0 ? FinalState::Done : FinalState::Failed;
            if (result.exit_code != 0) {
                d.reason_detail = "exited with status " + std::to_string(result.exit_code);
            }
            break;
        case RunResult::Status::Signaled:
            d.state = FinalState::Failed;
            d.reason_detail = "killed by signal " + std::to_string(result.signal);
            break;
        case RunResult::Status::TimedOut:
            d.state = FinalState::Failed;
            d.reason = ReasonCode::Timeout;
            d.reason_detail = "timeout after " + std::to_string(timeout_s) + " s";
            break;
        case RunResult::Status::SpawnFailed:
            d.state = FinalState::Failed;
            d.reason = ReasonCode::SpawnFailed;
            d.reason_detail = with_detail(ReasonCode::SpawnFailed, result.error);
            break;
    }
    return d;
}

Decision run(DrainContext& context, const Claimed& request, const Verdict& verdict,
             const VerbPlan& plan, std::optional<nlohmann::ordered_json> build_detail,
             const std::optional<nlohmann::ordered_json>& grant) {
    const Config& config = context.config;
    const Verb verb = *verdict.verb;
    const std::string log_name = request.name + ".log";
    auto log = create_log(context.spool, config, context.audit, log_name);
    if (!log) {
        return refusal(FinalState::Failed, ReasonCode::SpawnFailed, log.error().message);
    }
    if (auto announced = announce(context, request, verdict, log_name, build_detail, grant);
        !announced) {
        return refusal(FinalState::Denied, ReasonCode::AuditUnavailable, announced.error().message);
    }
    if (plan.follows_log) return follow(context, verdict, log->get(), "archive/" + log_name);

    // A restarted container must have started after this (the settle step).
    timespec wall{};
    ::clock_gettime(CLOCK_REALTIME, &wall);
    const std::int64_t since_ns =
        static_cast<std::int64_t>(wall.tv_sec) * 1000000000 + wall.tv_nsec;
    // One budget for every step of the plan, and the settle step after it.
    const int timeout_s = config.timeouts.for_verb(verb);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
    // A build the engines found live already: none of the plan's rows run.
    const bool build_live = build_detail && build_detail->value(kBuildLive, false);
    const RunResult result =
        run_steps(context, request, verb, build_live ? Plan{} : std::get<Plan>(plan.steps),
                  log->get(), deadline, build_detail);
    const off_t steps_end = ::lseek(log->get(), 0, SEEK_CUR);  // where the steps' text ends

    Decision d = outcome_of(result, timeout_s);
    d.log = "archive/" + log_name;
    d.audit_detail = std::move(build_detail);
    if (grant) {
        if (!d.audit_detail) d.audit_detail = nlohmann::ordered_json::object();
        (*d.audit_detail)["grant"] = *grant;
    }
    // Only a plan that ran to its end settles: the engine is asked how the
    // services it touched came out, whatever the compose CLI said. status
    // and health: the services as facts (and a compose CLI's `ps` text
    // where the engine is not read).
    const bool ran_to_end = result.succeeded();
    if (ran_to_end && plan.then != Then::Nothing) {
        const auto asked_at = std::chrono::steady_clock::now();
        std::optional<std::size_t> arg;
        if (verdict.arg_index != kNoArg) arg = verdict.arg_index;
        // Rows the engine asks for after the plan's (`up` recreating a
        // service), each its own scope unit after the plan's.
        std::size_t ran = std::get<Plan>(plan.steps).size();
        const auto run_rows = [&](const Plan& rows) {
            std::optional<nlohmann::ordered_json> no_build;
            const RunResult r =
                run_steps(context, request, verb, rows, log->get(), deadline, no_build, ran);
            ran += rows.size();
            return r.succeeded();
        };
        const Settled settled = context.engines.then(config, plan.then, verb, arg, since_ns,
                                                     build_live, log->get(), deadline, run_rows);
        *d.duration_ms += std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - asked_at)
                              .count();
        d.services = settled.services;
        if (!d.audit_detail) d.audit_detail = nlohmann::ordered_json::object();
        (*d.audit_detail)["services"] = settled.audited;
        if (!settled.ok) {
            d.state = FinalState::Failed;
            d.reason_detail = settled.reason;
        }
    }
    // Opened O_RDWR above so the tail can be read back through the same
    // inode the command wrote, never by reopening a name in archive/. Three
    // bytes more than the response keeps, so utf8_tail() makes the cut itself
    // and drops a character split by it instead of reporting it as invalid.
    // A change that went live: only what the host said after its steps.
    const bool went_live = d.state == FinalState::Done && verb_info(verb).mutating;
    if (auto tail = read_tail(log->get(), kMaxOutputBytes + 3, went_live ? steps_end : 0); tail) {
        d.output = went_live ? host_lines(*tail) : std::move(*tail);
    } else {
        d.output = "(output unavailable: " + tail.error().message + ")";
    }
    return d;
}

// The grant that lets `verb` on `service` run unattended, one of its runs
// used, as the audit records it; nullopt (held for a person) when none does
// or grants/ cannot be trusted.
std::optional<nlohmann::ordered_json> use_grant(const std::string& state_dir, Verb verb,
                                                std::string_view service) {
    auto dir = common::open_grant_dir(state_dir, false);
    if (!dir || !*dir) return std::nullopt;
    auto grant = common::use_grant((*dir)->get(), verb, service, std::time(nullptr));
    if (!grant || !*grant) return std::nullopt;
    return nlohmann::ordered_json{
        {"id", (*grant)->id}, {"until", (*grant)->until}, {"runs_left", (*grant)->runs_left()}};
}

// Everything of decide_and_run but the window's audit detail.
Decision decide(DrainContext& context, const Claimed& request, const Verdict& verdict,
                Approval approval, const HeldBuild* held_build) {
    const Config& config = context.config;
    if (!verdict.verb) return refusal(FinalState::Denied, ReasonCode::ParserFailure);
    const Verb verb = *verdict.verb;

    if (auto expired = check_expiry(config, verdict)) return *expired;

    std::optional<std::size_t> arg;
    if (verdict.arg_index != kNoArg) arg = verdict.arg_index;
    // A per-service rule (MODE_restart.db) is looked up by the name the index
    // stands for; an index out of range is refused by the plan below.
    const std::string_view service =
        arg && *arg < config.services.size() ? std::string_view(config.services[*arg]) : "";

    // Read on every request, so an edit to policy.conf takes effect at once.
    const Policy policy = load_policy(config.policy_file, config.services);
    // An engine verb runs unattended only where an escape through the
    // engine is contained, whatever policy.conf says: a line set back to
    // auto by hand (or by a later tool) is still held for a person, unless
    // bridge.json says the person accepted it (common/engine_hold.hpp).
    const common::EngineHold hold = context.engines.hold(config);
    const Mode mode = common::effective_mode(config, hold, policy, verb, service);
    if (mode == Mode::Deny) {
        return refusal(FinalState::Denied, ReasonCode::PolicyDeny,
                       policy.deny_detail(verb, service));
    }
    // The verb's one plan on this install (executor/engine.hpp): its rows,
    // what follows them, and what it is shown as.
    const VerbPlan verb_plan = context.engines.plan(config, verb, arg, verdict.window);
    if (const auto* denied = std::get_if<Denied>(&verb_plan.steps)) {
        return refusal(FinalState::Denied, denied->reason);
    }
    if (std::holds_alternative<NoCommand>(verb_plan.steps)) {
        // ping runs nothing, so a dry run of it is the real thing: the agent's
        // liveness check answers whatever its mode.
        Decision pong;  // ping: answered here, nothing runs, nothing counted
        pong.state = FinalState::Done;
        pong.output = "pong";
        return pong;
    }
    const Plan& steps = std::get<Plan>(verb_plan.steps);

    // Every verb that runs a command: a read-only `status` runs the same
    // stack script as a `restart`, so an edited script must not run either.
    // A refusal here still uses a slot of the verb's window: probing the gate
    // with swapped files must not be free (SECURITY.md, "The gates").
    RateLimiter limiter(config);
    const auto gate_refusal = [&](const std::string& detail) {
        (void)limiter.try_admit(rate_class(verb));
        return refusal(FinalState::Denied, ReasonCode::IntegrityGate, detail);
    };
    const GateReport gate = check_tcb(config.project_dir, config.tcb);
    if (!gate.passed()) return gate_refusal(gate.detail());
    // What runs reads the verified copies, never the checkout's files: the
    // gate above only tells the agent its edits need an approval.
    if (auto walked = check_checkout_paths(config); !walked) {
        return gate_refusal(walked.error().message);
    }
    // Past the gate, before the run tree and the rate limit: nothing is
    // written, nothing runs, no slot is used.
    // A dry run answers in docs/ARGV-TABLE.md's names, never a host path.
    if (mode == Mode::DryRun) {
        return refusal(FinalState::Denied, ReasonCode::DryRun, "would run " + verb_plan.shown);
    }
    // Held for a person with what they will be shown; once allowed, it comes
    // back here and meets every gate again (the drain, executor/drain.cpp).
    // Or a person's grant lets it run unattended (common/grant.hpp), one of
    // its runs used now; never a verb held for containment.
    std::optional<nlohmann::ordered_json> granted;
    if (mode == Mode::Ask && approval != Approval::Given &&
        !common::held_for_containment(config, hold, verb)) {
        granted = use_grant(config.state_dir, verb, service);
    }
    if (mode == Mode::Ask && approval != Approval::Given && !granted) {
        Decision held = refusal(FinalState::Held, ReasonCode::AwaitingApproval);
        held.command = verb_plan.shown;
        // What the builder will read is fixed now, and shown (drain_held.cpp).
        for (const Step& step : steps) {
            if (!step.snapshot_of) continue;
            if (held.hold_snapshot_of) {
                return refusal(FinalState::Denied, ReasonCode::BuildInputRefused,
                               "a verb with more than one build cannot be held for a person");
            }
            held.hold_snapshot_of = step.snapshot_of;
        }
        return held;
    }
    if (auto tree = build_run_tree(config); !tree) return gate_refusal(tree.error().message);

    // Last, so only what is about to run uses a slot.
    const Admission admission = limiter.try_admit(rate_class(verb));
    if (!admission.admitted()) {
        return refusal(FinalState::Denied, ReasonCode::RateLimited, admission.detail);
    }
    // A build reads only a host-owned snapshot, screened in the sandbox.
    // After the slot is taken: a refused build input has used one, as a gate
    // refusal does, and a flood of rebuilds copies no more than the limit.
    std::optional<nlohmann::ordered_json> build_detail;
    for (const Step& step : steps) {
        if (!step.snapshot_of) continue;
        auto prepared = context.engines.prepare_build(config, *step.snapshot_of, held_build);
        if (!prepared) {
            return refusal(FinalState::Denied, ReasonCode::BuildInputRefused,
                           prepared.error().message);
        }
        build_detail = std::move(*prepared);
    }
    return run(context, request, verdict, verb_plan, std::move(build_detail), granted);
}

}  // namespace

Decision decide_and_run(DrainContext& context, const Claimed& request, const Verdict& verdict,
                        Approval approval, const HeldBuild* held) {
    Decision d = decide(context, request, verdict, approval, held);
    // The window asked for, and the cursor answered, in the audit record
    // of whatever became of the request (docs/AUDIT-LOG.md).
    if (verdict.window.given()) {
        if (!d.audit_detail) d.audit_detail = nlohmann::ordered_json::object();
        auto& detail = *d.audit_detail;
        if (verdict.window.lines != 0) detail["lines"] = verdict.window.lines;
        if (verdict.window.since_ns != kNoTime) {
            detail["since"] =
                format_cursor(LogCursor{verdict.window.since_ns, verdict.window.since_seen});
        }
        if (d.cursor) detail["cursor"] = *d.cursor;
        if (d.more) detail["more"] = *d.more;
    }
    return d;
}

}  // namespace hb::exec
