#include "executor/drain.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <string_view>
#include <tuple>
#include <unordered_set>

#include "executor/drain_finish.hpp"
#include "executor/evidence.hpp"
#include "ipc/request_name.hpp"
#include "ipc/sys.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {

using common::AuditBudget;
using common::AuditEvent;
using common::AuditLog;
using common::AuditRecord;
using common::open_held_dir;

namespace {

constexpr std::string_view kStuckPrefix = ".stuck-";
constexpr const char* kLockName = "drain.lock";
constexpr const char* kMirrorName = "audit.jsonl";
constexpr std::size_t kMirrorBytes = 1 << 20;
// Pruning lists two directories; `watch` does it at most this often.
constexpr auto kPruneInterval = std::chrono::minutes(1);
constexpr std::time_t kDay = 24 * 60 * 60;
// How long the claim loop works before it looks at requests/ again, and
// at least ten times what the last look took: listing a directory of a
// million planted entries must not become most of the drain's work.
constexpr auto kLookEvery = std::chrono::milliseconds(100);
constexpr int kLookShare = 10;

bool is_stuck_name(std::string_view name) {
    return name.starts_with(kStuckPrefix);
}

Result<void> check_parser_binary(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return make_error(sys::errno_text("parser " + path));
    if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
        return make_error("parser " + path + " is not an executable file");
    }
    return {};
}

// The single-flight lock lives in the host state dir, never in the spool.
// Nothing else in the executor opens this file: closing any descriptor of
// it would drop the record lock (ipc/sys.hpp, try_record_lock).
Result<UniqueFd> open_lock(const std::string& state_dir) {
    const std::string path = state_dir + "/" + kLockName;
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return make_error(sys::errno_text("cannot open the lock file " + path));
    return fd;
}

std::string reason_string(ReasonCode code) {
    return std::string(reason_text(code));
}

}  // namespace

Drain::Drain(std::string config_path, const Engines& engines, Config config, Spool spool,
             AuditLog audit, UniqueFd lock_fd, UniqueFd held_fd)
    : config_path_(std::move(config_path)),
      engines_(engines),
      config_(std::move(config)),
      spool_(std::move(spool)),
      audit_(std::move(audit)),
      lock_fd_(std::move(lock_fd)),
      held_fd_(std::move(held_fd)),
      responses_(spool_, FileMode{config_.file_mode, config_.agent_gid}),
      parser_(config_.parser, Startup{config_.services, config_.buildable}),
      started_(std::chrono::steady_clock::now()) {}

// bridge.json's defaults are the log's own (docs/AUDIT-LOG.md, "Budget").
static_assert(AuditBudget{}.bytes == static_cast<std::uint64_t>(AuditBudgetSettings{}.bytes) &&
              AuditBudget{}.window_seconds == AuditBudgetSettings{}.seconds);

Result<std::unique_ptr<Drain>> Drain::prepare(const DrainOptions& options) {
    if (options.engines == nullptr) return make_error("no engines to ask (main.cpp's registry)");
    const bool root = ::geteuid() == 0;
    if (root && !options.allow_root) {
        return make_error("refusing to run as root without --allow-root");
    }
    auto config = load_config(options.config_path);
    if (!config) return config.error();  // names the file and the key
    if (root && !config->allow_root) {
        return make_error("refusing to run as root: " + options.config_path +
                          " does not set allow_root");
    }
    if (auto parser = check_parser_binary(config->parser); !parser) return parser.error();
    auto spool = Spool::open(config->project_dir, config->spool_dir);
    if (!spool) return spool.error();
    auto audit = AuditLog::open(config->state_dir);
    if (!audit) {
        return make_error("the audit log in " + config->state_dir +
                          " cannot be written: " + audit.error().message);
    }
    audit->set_budget({.bytes = static_cast<std::uint64_t>(config->audit_budget.bytes),
                       .window_seconds = config->audit_budget.seconds});
    auto lock = open_lock(config->state_dir);
    if (!lock) return lock.error();
    auto held = open_held_dir(config->state_dir);
    if (!held) return held.error();
    return std::unique_ptr<Drain>(new Drain(options.config_path, *options.engines,
                                            std::move(*config), std::move(*spool),
                                            std::move(*audit), std::move(*lock), std::move(*held)));
}

void Drain::refresh_pins() {
    auto fresh = load_config(config_path_);
    if (!fresh) {
        warn("cannot re-read the pins, keeping those loaded at start: " + fresh.error().message);
        return;
    }
    // Pins of another project (a forced re-install) are not ours to take.
    if (fresh->project_dir != config_.project_dir) return;
    // Everything `approve` writes: the pins, the rendered compose files'
    // pins and the checkout paths they name (executor/run_tree.hpp).
    config_.tcb = std::move(fresh->tcb);
    config_.rendered = std::move(fresh->rendered);
    config_.checkout_paths = std::move(fresh->checkout_paths);
    // And what `up` compares its containers with (docs/COMPOSE.md,
    // "Applying an approved edit").
    if (config_.settle && fresh->settle)
        config_.settle->definitions = std::move(fresh->settle->definitions);
}

void Drain::warn(const std::string& message) {
    std::fprintf(stderr, "hostbridge-executor: %s\n", message.c_str());
}

CycleEnd Drain::cycle(const std::function<bool()>& stop, bool enforce_budget) {
    failure_.clear();
    CycleEnd end = CycleEnd::Drained;
    bool held = false;
    for (;;) {
        // Step 3, before the lock: several drains may start at once and
        // each acknowledges what it sees (up to kAcknowledgeAtMost),
        // whichever wins.
        auto listed = acknowledge();
        if (!listed) {
            failure_ = listed.error().message;
            end = CycleEnd::Failed;
            break;
        }
        // Step 4. A record lock, not flock(2): a child forked here (the
        // parser, a command) never holds it, so a killed drain's lock is
        // free the moment it dies (tests/executor/test_drain_crash.cpp).
        if (!sys::try_record_lock(lock_fd_.get())) {
            end = errno == EAGAIN || errno == EACCES ? CycleEnd::Busy : CycleEnd::Failed;
            if (end == CycleEnd::Failed) failure_ = "cannot take the drain lock";
            break;
        }
        held = true;
        {
            const sys::RecordLockGuard hold(lock_fd_.get());
            // Steps 5 and 6; held requests first, so an allow does not wait
            // behind a burst of new requests.
            if (auto recovered = recover(); !recovered) {
                failure_ = recovered.error().message;
                end = CycleEnd::Failed;
            } else if (auto settled = settle_held(enforce_budget); !settled) {
                failure_ = settled.error().message;
                end = CycleEnd::Failed;
            } else if (*settled) {
                end = CycleEnd::BudgetReached;
            } else {
                end = claim_loop(stop, enforce_budget, *listed);
            }
        }
        // Step 7: unlocked, look once more.
        if (end != CycleEnd::Drained || !pending()) break;
    }
    if (held) {
        if (end == CycleEnd::Drained) prune_if_due();
        mirror_due_ = true;
    }
    // A flood's summary is written once its window is over, by whichever
    // drain comes next (docs/AUDIT-LOG.md, "Budget").
    if (auto flushed = audit_.flush_due_summary(); !flushed) {
        warn("cannot write the audit summary: " + flushed.error().message);
    }
    return end;
}

Result<std::vector<std::string>> Drain::acknowledge() {
    auto names = spool_.list(SpoolDir::Requests);
    if (!names) return names.error();
    const std::time_t now = wall_now();
    std::size_t acknowledged = 0;
    for (const std::string& name : *names) {
        if (acknowledged == kAcknowledgeAtMost) break;
        // Only on-schema names get responses; a name already in archive/ is
        // a replay, and its response belongs to the original.
        if (!is_request_name(name) || responses_.has_response(name) ||
            spool_.contains(SpoolDir::Archive, name)) {
            continue;
        }
        auto published = responses_.acknowledge(name, now);
        if (!published) {
            warn("cannot acknowledge " + name + ": " + published.error().message);
            continue;
        }
        if (!*published) continue;  // another drain answered first
        ++acknowledged;
        if (auto logged = logged_or_stop(
                audit_.append_agent(record(AuditEvent::Queued, name, std::nullopt)), "");
            !logged) {
            return logged.error();
        }
    }
    return names;
}

Result<void> Drain::recover() {
    auto names = spool_.list(SpoolDir::Processing);
    if (!names) return names.error();
    for (const std::string& name : *names) {
        auto inspected = spool_.inspect(SpoolDir::Processing, name);
        if (!inspected) continue;  // gone meanwhile
        const struct stat& st = inspected->st;
        // It may have run: it is never run again, whatever it is.
        const bool on_schema = is_request_name(name);
        const bool replay = on_schema && spool_.contains(SpoolDir::Archive, name);
        const bool plain = on_schema && !replay && S_ISREG(st.st_mode) && st.st_nlink == 1;
        Finish f = Finish::of(name, AuditEvent::Interrupted, reason_string(ReasonCode::Interrupted),
                              plain ? Finish::To::Archive : Finish::To::Quarantine);
        if (on_schema && !replay) {
            f.respond(ResponseState::Failed, *f.record.reason);
            // A crash between holding it and archiving it: answered
            // `failed` now, so it must not be allowed (and run) later.
            ::unlinkat(held_fd_.get(), name.c_str(), 0);
        }
        if (!plain) {
            UniqueFd read_fd;
            if (auto opened = spool_.open_for_reading(SpoolDir::Processing, name, *inspected)) {
                read_fd = std::move(*opened);
            }
            *f.record.reason += std::string("; ") + (replay ? "request name already used; " : "") +
                                describe_evidence(st, read_fd.get());
        }
        if (auto finished = finish(f); !finished) return finished.error();
    }
    return {};
}

CycleEnd Drain::claim_loop(const std::function<bool()>& stop, bool enforce_budget,
                           const std::vector<std::string>& listed) {
    // The agent dates the names, so a backlog dated to sort first must not
    // keep a request published after the drain started waiting for all of
    // it (docs/EXECUTOR-DRAIN.md, "One drain cycle"): requests/ is looked at
    // again at once and every kLookEvery, and what no look saw before joins
    // `fresh`, look by look, each in name order. `fresh` and the backlog
    // take turns, so neither can hold the other back for long.
    std::unordered_set<std::string> seen;
    std::deque<std::string> backlog;
    std::deque<std::string> fresh;
    const auto take = [&](const std::vector<std::string>& names, std::deque<std::string>& into) {
        for (const std::string& name : names) {
            if (!is_stuck_name(name) && seen.insert(name).second) into.push_back(name);
        }
    };
    take(listed, backlog);
    std::optional<std::chrono::steady_clock::time_point> looked;
    std::chrono::steady_clock::duration look_took{};
    bool fresh_turn = true;
    for (;;) {
        const bool idle = backlog.empty() && fresh.empty();
        const auto now = std::chrono::steady_clock::now();
        if (!looked || idle ||
            now - *looked >=
                std::max<std::chrono::steady_clock::duration>(kLookEvery, kLookShare * look_took)) {
            auto names = spool_.list(SpoolDir::Requests);
            if (!names) {
                failure_ = names.error().message;
                return CycleEnd::Failed;
            }
            look_took = std::chrono::steady_clock::now() - now;
            // The .stuck-* batches (thousands of renames) only at the first
            // look and when nothing else is left, never between requests.
            if (!looked || idle) {
                if (auto moved = quarantine_stuck(*names); !moved) {
                    failure_ = moved.error().message;
                    return CycleEnd::Failed;
                }
            }
            take(*names, fresh);
            looked = std::chrono::steady_clock::now();
            if (backlog.empty() && fresh.empty()) return CycleEnd::Drained;
        }
        fresh_turn = !fresh.empty() && (fresh_turn || backlog.empty());
        std::deque<std::string>& from = fresh_turn ? fresh : backlog;
        const std::string name = std::move(from.front());
        from.pop_front();
        fresh_turn = !fresh_turn;
        if (skip_.contains(name)) continue;
        if (stop && stop()) return CycleEnd::Stopped;
        if (enforce_budget && over_budget(name)) return CycleEnd::BudgetReached;
        if (auto handled = handle(name); !handled) {
            failure_ = handled.error().message;
            return CycleEnd::Failed;
        }
    }
}

Result<void> Drain::handle(const std::string& name) {
    // Claim: RENAME_NOREPLACE, so nothing already in processing/ is lost.
    const int err = spool_.move(SpoolDir::Requests, SpoolDir::Processing, name, true);
    if (err == ENOENT) return {};  // lost the race: it is gone
    if (err == EEXIST) {
        // processing/ already holds this name (planted there): a replay.
        auto inspected = spool_.inspect(SpoolDir::Requests, name);
        return finish(Finish::of(name, AuditEvent::Denied,
                                 reason_string(ReasonCode::NameAlreadyUsed) +
                                     (inspected ? "; " + describe_evidence(inspected->st, -1) : ""),
                                 Finish::To::Quarantine, SpoolDir::Requests));
    }
    if (err != 0) return mark_stuck(name, err);
    return handle_claimed(name);
}

Result<void> Drain::handle_claimed(const std::string& name) {
    const bool on_schema = is_request_name(name);
    auto inspected = spool_.inspect(SpoolDir::Processing, name);
    if (!inspected) {
        // Only the agent could have taken it out of processing/ meanwhile.
        Finish f =
            Finish::of(name, AuditEvent::Denied,
                       reason_string(ReasonCode::Unreadable) + "; " + inspected.error().message,
                       Finish::To::Nowhere);
        if (on_schema) f.respond(ResponseState::Denied, reason_string(ReasonCode::Unreadable));
        return finish(f);
    }
    const struct stat& st = inspected->st;
    // Only a regular file is ever opened for reading; a FIFO or a device
    // never is, and the reopen goes to the very inode just inspected.
    UniqueFd read_fd;
    std::string read_error;
    if (S_ISREG(st.st_mode)) {
        auto opened = spool_.open_for_reading(SpoolDir::Processing, name, *inspected);
        if (opened) {
            read_fd = std::move(*opened);
        } else {
            read_error = opened.error().message;
        }
    }
    const auto evidence = [&] { return describe_evidence(st, read_fd.get()); };

    if (!on_schema) return quarantine(name, ReasonCode::NameSchema, evidence(), false);
    if (spool_.contains(SpoolDir::Archive, name)) {
        // No response: that name's response is the original's.
        return finish(Finish::of(name, AuditEvent::Denied,
                                 reason_string(ReasonCode::NameAlreadyUsed) + "; " + evidence(),
                                 Finish::To::Quarantine));
    }
    if (!S_ISREG(st.st_mode)) return quarantine(name, ReasonCode::NotRegularFile, evidence(), true);
    if (!read_fd)
        return quarantine(name, ReasonCode::Unreadable, evidence() + "; " + read_error, true);
    if (st.st_nlink > 1) return quarantine(name, ReasonCode::TooManyLinks, evidence(), true);
    if (st.st_size > static_cast<off_t>(kMaxBody))
        return quarantine(name, ReasonCode::BodyTooLarge, evidence(), true);

    auto verdict = parser_.classify(read_fd.get(), name);
    if (!verdict) {
        warn("parser failure on " + name + ": " + verdict.error().message);
        const std::string text = reason_string(ReasonCode::ParserFailure);
        return finish(
            Finish::of(name, AuditEvent::Denied, text).respond(ResponseState::Denied, text));
    }
    switch (verdict->outcome) {
        case Outcome::Quarantine:
            return quarantine(name, verdict->reason, evidence(), true);
        case Outcome::Deny: {
            const std::string text = reason_string(verdict->reason);
            Finish f = Finish::of(name, AuditEvent::Denied, text);
            f.respond(ResponseState::Denied, text);
            f.record.verb = f.response->verb = verdict->verb;
            if (verdict->arg_index != kNoArg) {
                f.record.arg = f.response->arg = config_.services.at(verdict->arg_index);
            }
            if (verdict->requested_at != kNoTime) f.response->requested_at = verdict->requested_at;
            return finish(f);
        }
        case Outcome::Accept:
            return handle_accepted(name, *verdict);
    }
    return {};
}

Result<void> Drain::handle_accepted(const std::string& name, const Verdict& verdict) {
    // Only a verb that runs a command meets the integrity gate; ping never
    // needs the pins, so it does not pay for re-reading bridge.json.
    if (verdict.verb && verb_info(*verdict.verb).runs_command) refresh_pins();
    DrainContext context{config_, engines_, spool_, audit_, responses_};
    Decision decision = decide_and_run(context, Claimed{name}, verdict);
    std::optional<std::int64_t> expires_at;
    if (decision.state == FinalState::Held) decision = hold(name, verdict, decision, expires_at);
    std::optional<std::string> arg;
    if (verdict.arg_index != kNoArg) arg = config_.services.at(verdict.arg_index);
    Finish f = Finish::decided(name, verdict.verb, arg, verdict.requested_at, decision);
    f.response->expires_at = expires_at;
    return finish(f);
}

Result<void> Drain::quarantine(const std::string& name, ReasonCode code,
                               const std::string& evidence, bool respond) {
    const std::string text = reason_string(code);
    Finish f =
        Finish::of(name, AuditEvent::Quarantined, text + "; " + evidence, Finish::To::Quarantine);
    if (respond) f.respond(ResponseState::Denied, text);
    return finish(f);
}

Result<void> Drain::finish(const Finish& f) {
    // Within the agent's budget, unless the request ran (the log knows).
    auto audited = audit_.append_agent(f.record);
    if (f.response) {
        if (auto published = responses_.publish(*f.response); !published) {
            warn("cannot publish the response of " + f.name + ": " + published.error().message);
        }
    }
    switch (f.to) {
        case Finish::To::Archive: {
            const int err = spool_.move(f.from, SpoolDir::Archive, f.name, true);
            if (err == EEXIST) {
                // Something took that name in archive/ meanwhile: keep both.
                if (auto kept = spool_.quarantine(f.from, f.name); !kept) {
                    warn("cannot quarantine a request: " + kept.error().message);
                }
            } else if (err != 0 && err != ENOENT) {
                warn(sys::errno_text("cannot archive a request", err));
            }
            break;
        }
        case Finish::To::Quarantine:
            if (auto kept = spool_.quarantine(f.from, f.name); !kept) {
                warn("cannot quarantine a request: " + kept.error().message);
                // Still in requests/: never claimed again by this process,
                // so the claim loop always ends.
                if (f.from == SpoolDir::Requests) skip_.insert(f.name);
            }
            break;
        case Finish::To::Nowhere:
            break;
    }
    return logged_or_stop(audited, "else ");
}

Result<void> Drain::mark_stuck(const std::string& name, int err) {
    AuditRecord r =
        record(AuditEvent::Stuck, name,
               std::string(reason_text(ReasonCode::Stuck)) + " (" + std::strerror(err) + ")");
    if (auto marked = spool_.mark_stuck(name); marked) {
        *r.reason += "; renamed within requests/ with the prefix .stuck-";
    } else {
        skip_.insert(name);
        *r.reason += "; left in place: " + marked.error().message;
    }
    return logged_or_stop(audit_.append_agent(r), "else ");
}

Result<void> Drain::quarantine_stuck(const std::vector<std::string>& names) {
    // .stuck-* entries are never handled as requests, and the agent can
    // plant them by the hundred thousand: every drain would list them again
    // (issue 12). Each listing moves up to kStuckBatch of them to
    // quarantine/, with one audit record per batch; one that cannot move
    // (it cannot leave requests/ at all) is skipped for this process.
    std::size_t moved = 0;
    std::string first;
    for (const std::string& name : names) {
        if (moved == kStuckBatch) break;
        if (!is_stuck_name(name) || skip_.contains(name)) continue;
        if (auto kept = spool_.quarantine(SpoolDir::Requests, name); !kept) {
            skip_.insert(name);
            continue;
        }
        if (moved++ == 0) first = name;
    }
    if (moved == 0) return {};
    AuditRecord r;
    r.event = AuditEvent::Quarantined;
    // The name is the agent's: escaped as the log escapes `request`
    // (docs/AUDIT-LOG.md), so the stored reason holds no byte a reader of
    // the log (the admin tool, jq, an older hostbridge) could show raw.
    r.reason = std::to_string(moved) +
               " .stuck-* entries moved from requests/ to quarantine/ in one batch (first: " +
               sys::escape_unprintable(first) + ")";
    return logged_or_stop(audit_.append(r), "else ");
}

bool Drain::pending() const {
    if (decision_waiting()) return true;
    auto names = spool_.list(SpoolDir::Requests);
    if (!names) return false;
    for (const std::string& name : *names) {
        if (!is_stuck_name(name) && !skip_.contains(name)) return true;
    }
    return false;
}

bool Drain::over_budget(const std::string& name) const {
    // The name's verb is the body's (the parser denies a mismatch), and a
    // denied request is quick; ping runs nothing.
    const auto text = request_name_verb(name);
    const auto verb = text ? verb_from_name(*text) : std::nullopt;
    const int cost = (verb && *verb != Verb::Ping) ? config_.timeouts.for_verb(*verb) : 0;
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::steady_clock::now() - started_);
    return elapsed.count() + cost > config_.drain.time_budget_seconds;
}

void Drain::prune_if_due() {
    const auto now = std::chrono::steady_clock::now();
    if (last_prune_ && now - *last_prune_ < kPruneInterval) return;
    last_prune_ = now;
    const std::time_t wall = wall_now();
    // In tmp/ only what a crashed drain left under its own prefix.
    for (const auto& [dir, days, prefix] :
         {std::tuple(SpoolDir::Archive, config_.retention.archive_days, std::string_view()),
          std::tuple(SpoolDir::Responses, config_.retention.responses_days, std::string_view()),
          std::tuple(SpoolDir::Tmp, 1, kTempPrefix)}) {
        if (auto pruned = spool_.prune(dir, wall - days * kDay, prefix); !pruned)
            warn("cannot prune " + std::string(spool_dir_name(dir)) +
                 "/: " + pruned.error().message);
    }
}

void Drain::mirror_audit_log() {
    if (!mirror_due_) return;
    mirror_due_ = false;
    // Best effort: the authoritative log is the one in the state dir.
    auto tail = audit_.tail(kMirrorBytes);
    if (!tail) return;
    // Already current (same size, written after the log last changed): a
    // drain that found nothing to do creates no file at all.
    struct stat log_st {};
    struct stat mirror_st {};
    const std::string log_path = config_.state_dir + "/" + audit_.current_segment();
    if (::stat(log_path.c_str(), &log_st) == 0 &&
        ::fstatat(spool_.fd(SpoolDir::Diagnostics), kMirrorName, &mirror_st, AT_SYMLINK_NOFOLLOW) ==
            0 &&
        S_ISREG(mirror_st.st_mode) && static_cast<std::size_t>(mirror_st.st_size) == tail->size() &&
        (mirror_st.st_mtim.tv_sec > log_st.st_mtim.tv_sec ||
         (mirror_st.st_mtim.tv_sec == log_st.st_mtim.tv_sec &&
          mirror_st.st_mtim.tv_nsec >= log_st.st_mtim.tv_nsec))) {
        return;
    }
    (void)spool_.publish(SpoolDir::Diagnostics, kMirrorName, *tail, Publish::Replace,
                         FileMode{config_.file_mode, config_.agent_gid});
}

}  // namespace hb::exec
