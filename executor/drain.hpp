// The drain: steps 1-7 of docs/ARCHITECTURE.md "The drain, step by step", and
// nothing else. Deciding and running an accepted request is one call into
// decide.hpp; waiting for more work is the caller's (main.cpp, wakeup.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "common/held.hpp"
#include "executor/decide.hpp"
#include "executor/parser_client.hpp"
#include "executor/responses.hpp"
#include "executor/spool.hpp"
#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {

struct DrainOptions {
    std::string config_path;
    // What the drain asks of the engines: the registry's, handed over by
    // main.cpp (the core links no engine room).
    const Engines* engines = nullptr;
    bool allow_root = false;  // --allow-root
};

enum class CycleEnd {
    Drained,        // requests/ is empty (but for stuck entries)
    Busy,           // another drain holds the lock: it will do the work
    BudgetReached,  // the next request could outlast drain.time_budget_seconds
    Stopped,        // SIGTERM/SIGINT, acted on between requests
    Failed,         // cannot go on safely (the audit log cannot be written): failure()
};

// .stuck-* entries quarantine_stuck moves out of requests/ per listing.
inline constexpr std::size_t kStuckBatch = 8192;
// `queued` acknowledgements a cycle publishes before the lock: each is a
// file and an audit event, and a flood's would keep every answer waiting.
inline constexpr std::size_t kAcknowledgeAtMost = 256;

class Drain {
  public:
    // Step 1 and 2, and every other check that must pass before the spool is
    // touched: --allow-root, bridge.json, the parser binary, the pinned
    // spool, the audit log, the lock file. The error is one sentence.
    static Result<std::unique_ptr<Drain>> prepare(const DrainOptions& options);

    // Steps 3-7 once: acknowledge, lock (busy: return), recover, claim and
    // handle requests until requests/ is empty, unlock, look again, prune.
    // `stop` is asked between requests. With `enforce_budget`, a request
    // whose verb timeout could carry the drain past
    // drain.time_budget_seconds is left for the next drain.
    CycleEnd cycle(const std::function<bool()>& stop, bool enforce_budget);

    // The best-effort mirror of the audit log's last MiB in diagnostics/,
    // written when a cycle that held the lock has not been mirrored yet.
    // Separate from cycle() so `watch` can write it when idle, off the
    // path between a request and its answer.
    [[nodiscard]] bool mirror_due() const { return mirror_due_; }
    void mirror_audit_log();

    [[nodiscard]] const Spool& spool() const { return spool_; }
    [[nodiscard]] const Config& config() const { return config_; }
    [[nodiscard]] const std::string& failure() const { return failure_; }
    // <state_dir>/held, where `hostbridge allow|deny` publish decisions.
    [[nodiscard]] int held_fd() const { return held_fd_.get(); }
    // When the first request still held for a person expires (wall clock),
    // as of the last cycle: `watch` wakes then to answer it `expired`.
    [[nodiscard]] std::optional<std::int64_t> next_expiry() const { return next_expiry_; }
    // When the drain started (for the time budget).
    [[nodiscard]] std::chrono::steady_clock::time_point started() const { return started_; }

  private:
    Drain(std::string config_path, const Engines& engines, Config config, Spool spool,
          common::AuditLog audit, UniqueFd lock_fd, UniqueFd held_fd);

    struct Finish;  // one outcome: audit record, response, where the file goes
    // Step 3: the listing of requests/, its first kAcknowledgeAtMost
    // unanswered names acknowledged (drain.cpp).
    Result<std::vector<std::string>> acknowledge();
    Result<void> recover();
    // Step 6, from the names acknowledge() listed.
    CycleEnd claim_loop(const std::function<bool()>& stop, bool enforce_budget,
                        const std::vector<std::string>& listed);
    Result<void> handle(const std::string& name);
    Result<void> handle_claimed(const std::string& name);
    Result<void> handle_accepted(const std::string& name, const Verdict& verdict);
    // Held for a person (executor/drain_held.cpp): writes the record, or
    // merges into one for the same thing; the decision to record, with the
    // pending sentence, or a denial.
    Decision hold(const std::string& name, const Verdict& verdict, const Decision& held,
                  std::optional<std::int64_t>& expires_at);
    // Under the lock: answers what a person decided, expires what waited
    // too long, fails what a crashed drain had taken up.
    // With `enforce_budget`, a decision whose command could outlast the
    // budget is left for the next drain: true then.
    Result<bool> settle_held(bool enforce_budget);
    Result<void> act_on_decision(const std::string& record_name, const common::HeldRequest& held);
    Result<void> finish_held(const common::HeldRequest& held, const Decision& decision);
    [[nodiscard]] bool decision_waiting() const;
    // A claimed request (in processing/) quarantined for `code`.
    Result<void> quarantine(const std::string& name, ReasonCode code, const std::string& evidence,
                            bool respond);
    Result<void> finish(const Finish& outcome);
    Result<void> mark_stuck(const std::string& name, int err);
    Result<void> quarantine_stuck(const std::vector<std::string>& names);
    [[nodiscard]] bool pending() const;
    [[nodiscard]] bool over_budget(const std::string& name) const;
    void prune_if_due();
    void warn(const std::string& message);
    // `hostbridge approve` re-pins bridge.json while a lingering drain or a
    // watch runs: the gate must check the pins as approved now, not as they
    // were when this process started (a refusal would outlive the approval).
    void refresh_pins();

    std::string config_path_;
    const Engines& engines_;
    Config config_;
    Spool spool_;
    common::AuditLog audit_;
    UniqueFd lock_fd_;
    UniqueFd held_fd_;
    std::optional<std::int64_t> next_expiry_;
    ResponseWriter responses_;
    ParserClient parser_;
    std::chrono::steady_clock::time_point started_;
    std::optional<std::chrono::steady_clock::time_point> last_prune_;
    std::set<std::string> skip_;  // entries that could not even be marked stuck
    bool mirror_due_ = false;
    std::string failure_;
};

}  // namespace hb::exec
