// The drain's side of requests held for a person (policy `ask`,
// docs/DECIDE-AND-RUN.md "Held for a person"): hold or merge a request,
// and, under the drain lock, act on what a person decided, expire what
// waited past its TTL and fail what a crashed drain had taken up. The
// records live in <state_dir>/held (common/held.hpp), never in the spool.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "executor/drain.hpp"
#include "executor/drain_finish.hpp"
#include "executor/notify.hpp"
#include "executor/rate_limiter.hpp"
#include "ipc/request_name.hpp"
#include "ipc/sys.hpp"

namespace hb::exec {

using common::AuditEvent;
using common::AuditRecord;
using common::config_generation;
using common::decided_keep_seconds;
using common::held_digest;
using common::held_name;
using common::held_short_digest;
using common::HeldDecision;
using common::HeldFile;
using common::HeldRequest;
using common::kMaxMerged;
using common::list_held;
using common::parse_decision;
using common::parse_held;
using common::publish_held_file;
using common::read_held_file;
using common::remove_held;
using common::render_held;

namespace {

Decision denied(ReasonCode code, const std::string& detail = {}) {
    return refusal(FinalState::Denied, code, detail);
}

// The least of its TTL a request must have left to be held: less would
// expire before a person could act, and would only add a line to the log.
constexpr std::int64_t kMinHoldSeconds = 60;

std::string allow_or_deny(const std::string& name) {
    return "`hostbridge allow " + name + "` runs it, `hostbridge deny " + name + "` refuses it";
}

}  // namespace

Decision Drain::hold(const std::string& name, const Verdict& verdict, const Decision& held,
                     std::optional<std::int64_t>& expires_at) {
    const int fd = held_fd_.get();
    auto names = list_held(fd);
    if (!names)
        return denied(ReasonCode::AwaitingApproval, "cannot hold it: " + names.error().message);
    std::optional<std::string> service;
    if (verdict.arg_index != kNoArg) service = config_.services.at(verdict.arg_index);
    const std::string generation = config_generation(config_);
    const std::int64_t now = wall_now();
    // A name held before (the agent can delete archive/NAME and send it
    // again) or with a decision still lying there: a decision is never
    // applied to another request than the one a person was shown.
    if (common::held_name_used(fd, name)) return denied(ReasonCode::NameAlreadyUsed);

    std::size_t count = 0;
    for (const std::string& other_name : *names) {
        if (!is_request_name(other_name)) continue;  // decisions, taken, temporary files
        auto text = read_held_file(fd, other_name);
        if (!text || !*text) continue;
        auto other = parse_held(**text);
        if (!other) continue;
        ++count;
        // The same command, checked against the same install, not yet
        // decided: one decision answers both, and it runs at most once.
        if (other->verb != *verdict.verb || other->service != service ||
            other->window != verdict.window || other->generation != generation ||
            other->expires_at <= now ||
            sys::exists_at(fd, held_name(other_name, HeldFile::Decision))) {
            continue;
        }
        if (other->merged.size() >= kMaxMerged) {
            return denied(ReasonCode::TooManyHeld,
                          std::to_string(kMaxMerged) + " requests already wait with " + other_name);
        }
        other->merged.push_back(name);
        if (auto kept = publish_held_file(fd, other_name, render_held(*other), false); !kept) {
            return denied(ReasonCode::AwaitingApproval, "cannot hold it: " + kept.error().message);
        }
        expires_at = other->expires_at;
        Decision merged = held;
        merged.reason_detail = std::string(reason_text(ReasonCode::AwaitingApproval)) +
                               ", together with " + other_name +
                               " (the same request): " + allow_or_deny(other_name);
        return merged;
    }
    if (count >= static_cast<std::size_t>(config_.limits.max_held)) {
        return denied(ReasonCode::TooManyHeld,
                      std::to_string(count) + " already wait; `hostbridge pending` lists them");
    }
    const std::int64_t left = verdict.requested_at + config_.limits.ttl_seconds - now;
    if (left < std::min<std::int64_t>(kMinHoldSeconds, config_.limits.ttl_seconds / 2)) {
        return refusal(FinalState::Expired, ReasonCode::Expired,
                       std::to_string(std::max<std::int64_t>(left, 0)) +
                           " s of its TTL left, too little for a person to act");
    }
    HeldRequest record;
    if (held.hold_snapshot_of) {
        // A snapshot costs a copy of the context: a slot of the verb's
        // window, as a build that runs (it takes another then).
        const Admission admission = RateLimiter(config_).try_admit(rate_class(*verdict.verb));
        if (!admission.admitted())
            return refusal(FinalState::Denied, ReasonCode::RateLimited, admission.detail);
        auto snapshot = engines_.hold_build(config_, name, *held.hold_snapshot_of);
        if (!snapshot) {
            return refusal(FinalState::Denied, ReasonCode::BuildInputRefused,
                           snapshot.error().message);
        }
        record.snapshot = *snapshot;
    }
    record.request = name;
    record.verb = *verdict.verb;
    record.service = service;
    record.command = held.command;
    record.generation = generation;
    record.requested_at = verdict.requested_at;
    record.window = verdict.window;
    record.held_at = now;
    record.expires_at = verdict.requested_at + config_.limits.ttl_seconds;
    auto written = common::hold_record(fd, record);
    if (!written || !*written) {
        return denied(ReasonCode::AwaitingApproval,
                      "cannot hold it: " +
                          (written ? std::string("the name is taken") : written.error().message));
    }
    // The person is told in the service log, on the desktop where there is
    // one, and in the journal by the audit event: what would run, in the
    // names of docs/ARGV-TABLE.md.
    // The person's copy names the digest (common/held.hpp): an `allow`
    // with it can only ever meet this record.
    const std::string digest = held_short_digest(record);
    const std::string told = "held " + name + " for a person: would run " + record.command +
                             "; `hostbridge allow " + name + " " + digest + "` runs it, " +
                             "`hostbridge deny " + name + " " + digest + "` refuses it";
    audit_.notice("hostbridge " + config_.slug + ": " + told);
    warn(told + "; " + notify_person(config_, fd, record));
    expires_at = record.expires_at;
    Decision out = held;
    out.reason_detail =
        std::string(reason_text(ReasonCode::AwaitingApproval)) + ": " + allow_or_deny(name);
    return out;
}

Result<bool> Drain::settle_held(bool enforce_budget) {
    next_expiry_.reset();
    bool budget_reached = false;
    const int fd = held_fd_.get();
    auto names = list_held(fd);
    if (!names) return make_error("cannot list the held requests: " + names.error().message);
    const std::int64_t now = wall_now();
    for (const std::string& file_name : *names) {
        const auto parsed = common::parse_held_name(file_name);
        if (!parsed) continue;
        const std::string& name = parsed->request;
        switch (parsed->file) {
            case HeldFile::Record:
                break;
            case HeldFile::Taken: {
                // Taken up by a drain that did not finish: it may have run,
                // so it is never run again.
                auto text = read_held_file(fd, file_name);
                auto held =
                    text && *text ? parse_held(**text) : Result<HeldRequest>(make_error(""));
                if (held) {
                    const Decision interrupted =
                        refusal(FinalState::Failed, ReasonCode::Interrupted);
                    if (auto done = finish_held(*held, interrupted); !done) return done.error();
                }
                remove_held(fd, name, HeldFile::Taken);
                continue;
            }
            case HeldFile::Decided:
            case HeldFile::Gone: {
                // The decision a drain took up, kept for the `allow`/`deny`
                // that wrote it, and the tombstone of a hold that ended
                // undecided: until they can matter no more.
                struct stat st {};
                if (::fstatat(fd, file_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    st.st_mtime + decided_keep_seconds(config_.limits) < now) {
                    remove_held(fd, name, parsed->file);
                }
                continue;
            }
            case HeldFile::Decision:
                // A decision for a request that is gone (expired first): moot.
                if (!sys::exists_at(fd, name) &&
                    !sys::exists_at(fd, held_name(name, HeldFile::Taken))) {
                    remove_held(fd, name, HeldFile::Decision);
                }
                continue;
        }
        auto text = read_held_file(fd, name);
        if (!text || !*text) continue;
        auto held = parse_held(**text);
        if (!held) {
            warn("held/" + name + " cannot be read (" + held.error().message +
                 "); moved aside as held/.unreadable-" + name);
            ::renameat(fd, name.c_str(), fd, (".unreadable-" + name).c_str());
            continue;
        }
        if (sys::exists_at(fd, held_name(name, HeldFile::Decided))) {
            // A drain took its decision up and died before it renamed the
            // record (act_on_decision): taken, so failed, never run.
            const Decision interrupted = refusal(FinalState::Failed, ReasonCode::Interrupted);
            if (auto done = finish_held(*held, interrupted); !done) return done.error();
            remove_held(fd, name, HeldFile::Record);
            continue;
        }
        if (sys::exists_at(fd, held_name(name, HeldFile::Decision))) {
            // Left for the next drain, like a request that could outlast
            // the budget (docs/ARCHITECTURE.md, drain step 7).
            if (enforce_budget && over_budget(name)) {
                budget_reached = true;
                continue;
            }
            if (auto acted = act_on_decision(name, *held); !acted) return acted.error();
            continue;
        }
        if (held->expires_at <= now) {
            const Decision expired = refusal(
                FinalState::Expired, ReasonCode::Expired,
                "no person allowed it within " + std::to_string(config_.limits.ttl_seconds) + " s");
            if (auto done = finish_held(*held, expired); !done) return done.error();
            // The name is never held again for another request meanwhile.
            if (auto gone = common::end_undecided(fd, name); !gone) return gone.error();
            continue;
        }
        next_expiry_ = std::min(next_expiry_.value_or(held->expires_at), held->expires_at);
    }
    // The snapshots of holds that ended (run, denied, expired, or left by a
    // crash): only a record or a taken record keeps its own.
    engines_.sweep_held_builds(config_, [&](const std::string& request) {
        return is_request_name(request) &&
               (sys::exists_at(fd, request) ||
                sys::exists_at(fd, held_name(request, HeldFile::Taken)));
    });
    return budget_reached;
}

Result<void> Drain::act_on_decision(const std::string& record_name, const HeldRequest& held) {
    const int fd = held_fd_.get();
    const std::string decision_name = held_name(record_name, HeldFile::Decision);
    auto text = read_held_file(fd, decision_name);
    auto decision = text && *text ? parse_decision(**text)
                                  : Result<HeldDecision>(make_error("it is not a regular file"));
    if (decision && decision->record != held_digest(held)) {
        // Made for an earlier request of this name (it expired while the
        // person looked): it says nothing about this one, which stays held.
        warn("held/" + decision_name + " was made for another request of this name; removed");
        remove_held(fd, record_name, HeldFile::Decision);
        return {};
    }
    if (decision && decision->allow) {
        // Logged before it is taken up: if the log cannot be written, the
        // decision stays for the next drain and nothing is lost.
        AuditRecord allowed = record(AuditEvent::Allowed, held.request, "allowed by a person");
        allowed.verb = held.verb;
        allowed.arg = held.service;
        if (auto logged = audit_.append(allowed, /*sync=*/true); !logged)
            return logged_or_stop(logged, "else ");
    }
    // Taken, durably, before anything is done: a crash from here on fails
    // it, never runs it twice (settle_held).
    if (auto taken = common::take_up(fd, record_name); !taken) return taken;

    Decision outcome;
    if (!decision) {
        outcome = denied(ReasonCode::DeniedByPerson,
                         "the decision could not be read (" + decision.error().message + ")");
    } else if (!decision->allow) {
        outcome = denied(ReasonCode::DeniedByPerson, decision->reason);
    } else {
        // Checked against what is installed now: what the person was shown
        // must be what this drain and bridge.json still say.
        refresh_pins();
        auto fresh = load_config(config_path_);
        const auto index = held.service ? std::find(config_.services.begin(),
                                                    config_.services.end(), *held.service)
                                        : config_.services.end();
        if (!fresh || config_generation(*fresh) != held.generation ||
            config_generation(config_) != held.generation ||
            decision->generation != held.generation ||
            (held.service && index == config_.services.end())) {
            outcome = denied(ReasonCode::ChangedSinceHeld,
                             "a re-install or `hostbridge approve` came between; send it again");
        } else {
            Verdict verdict;
            verdict.outcome = Outcome::Accept;
            verdict.verb = held.verb;
            verdict.arg_index = held.service
                                    ? static_cast<std::uint16_t>(index - config_.services.begin())
                                    : kNoArg;
            verdict.requested_at = held.requested_at;
            verdict.window = held.window;
            DrainContext context{config_, engines_, spool_, audit_, responses_};
            const HeldBuild build{held.request, held.snapshot};
            outcome = decide_and_run(context, Claimed{held.request}, verdict, Approval::Given,
                                     held.snapshot.empty() ? nullptr : &build);
            if (outcome.state == FinalState::Held) outcome = denied(ReasonCode::AwaitingApproval);
        }
    }
    if (auto done = finish_held(held, outcome); !done) return done;
    remove_held(fd, record_name, HeldFile::Taken);
    return {};
}

Result<void> Drain::finish_held(const HeldRequest& held, const Decision& decision) {
    // The request file is in archive/ since it was held; every request
    // merged into it gets the same answer.
    std::vector<std::string> names = held.merged;
    names.insert(names.begin(), held.request);
    for (const std::string& name : names) {
        Finish f = Finish::decided(
            name, held.verb, held.service,
            name == held.request ? std::optional(held.requested_at) : std::nullopt, decision);
        f.to = Finish::To::Nowhere;
        if (auto done = finish(f); !done) return done;
    }
    return {};
}

bool Drain::decision_waiting() const {
    auto names = list_held(held_fd_.get());
    if (!names) return false;
    return std::any_of(names->begin(), names->end(), [&](const std::string& name) {
        const auto parsed = common::parse_held_name(name);
        return parsed && parsed->file == HeldFile::Decision &&
               sys::exists_at(held_fd_.get(), parsed->request);
    });
}

}  // namespace hb::exec
