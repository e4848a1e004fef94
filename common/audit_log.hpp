// The authoritative audit log: append-only, hash-chained JSON lines in the
// host state dir, off the shared mount. Format: docs/AUDIT-LOG.md.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipc/audit_segments.hpp"
#include "ipc/enum_names.hpp"
#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/wire.hpp"

namespace hb::common {

enum class AuditEvent {
    Installed,
    Approved,
    Queued,
    Quarantined,
    Denied,
    Expired,
    Started,
    Succeeded,
    Failed,
    Interrupted,
    Stuck,
    Recovered,
    Summary,  // agent-caused events over the budget of one window (docs/AUDIT-LOG.md)
    Pruned,   // an admin removed old segments (`hostbridge audit --prune-before`)
    Held,     // waits for a person (policy `ask`), or merged into one that does
    Allowed,  // a person allowed a held request (`hostbridge allow`)
    Granted,  // a person granted a verb for a while (`hostbridge allow --for`, common/grant.hpp)
    Revoked,  // a person ended grants (`hostbridge revoke`)
};
// The word for each event in the log, read back by the verifier.
inline constexpr auto kAuditEventNames = dense_names<AuditEvent::Revoked>(
    {"installed", "approved", "queued", "quarantined", "denied", "expired", "started", "succeeded",
     "failed", "interrupted", "stuck", "recovered", "summary", "pruned", "held", "allowed",
     "granted", "revoked"},
    "unknown");
std::string_view audit_event_name(AuditEvent event);

using hb::audit_legacy_rotated_name;
using hb::audit_log_files;
using hb::audit_segment_index;
using hb::audit_segment_name;
using hb::kAuditLegacyRotatedFiles;
using hb::kAuditLogName;
// The log is a list of segments whose names never change
// (ipc/audit_segments.hpp); at kAuditRotateBytes the writer starts the next
// one; nothing is renamed or dropped.
inline constexpr std::uint64_t kAuditRotateBytes = 64ULL << 20;

// The budget of agent-caused events (docs/AUDIT-LOG.md, "Budget"): what the
// agent can make the drain log without a command running, per window of
// wall-clock time; over it, events are counted into one `summary` event.
inline constexpr std::string_view kAuditBudgetName = "audit-budget.json";
struct AuditBudget {
    std::uint64_t bytes = 256 * 1024;
    std::int64_t window_seconds = 600;
};
// The summary keeps the SHA-256 of this many quarantined files.
inline constexpr std::size_t kAuditSummaryHashes = 8;

// The journald socket that `append` sends each new (seq, hash) to.
inline constexpr const char* kJournalSocket = "/run/systemd/journal/socket";

struct AuditRecord {
    AuditEvent event = AuditEvent::Denied;
    // Raw name bytes. Written with every byte outside printable ASCII, and
    // the backslash itself, as \xHH, so the escaping cannot be forged.
    std::optional<std::string> request;
    std::optional<Verb> verb;
    std::optional<std::string> arg;
    std::optional<std::string> reason;
    std::optional<int> exit_code;
    std::optional<std::int64_t> duration_ms;
    // Who caused it ("agent", "executor", "admin"; docs/AUDIT-LOG.md).
    // Written only when set, before `prev`.
    std::optional<std::string> actor;
    // Structured facts of a `summary` or `pruned` event; written only when
    // set, after `actor`.
    std::optional<nlohmann::ordered_json> detail;
};

class AuditLog {
  public:
    // Opens (creating if needed, mode 0600) the newest segment in
    // <state_dir> with O_RDWR|O_APPEND|O_NOFOLLOW|O_CLOEXEC. Fails if it
    // cannot be opened for writing.
    // The state dir must exist (install creates it).
    static Result<AuditLog> open(const std::string& state_dir);
    // The same with another rotation threshold (tests).
    static Result<AuditLog> open(const std::string& state_dir, std::uint64_t rotate_bytes);

    // Appends one line under an exclusive flock on the newest segment:
    // reads the last line for seq/prev, repairs a torn tail with a
    // `recovered` event, starts a new segment at the rotation threshold.
    // Also writes a due `summary` first, and remembers a `started` request
    // as running. With `sync`, fdatasync before returning (the `started`
    // event needs this).
    Result<void> append(const AuditRecord& record, bool sync = false);

    // For events the agent can cause without a command running: logged
    // like `append` while the window's budget lasts, counted into the
    // window's `summary` after that. An event of a request whose `started`
    // was logged (it ran) is always logged.
    Result<void> append_agent(const AuditRecord& record);

    // Writes the pending `summary` if its window has ended (a drain calls
    // this when it ends, so a flood's summary does not wait for the next
    // event).
    Result<void> flush_due_summary();

    void set_budget(AuditBudget budget) {
        budget.window_seconds = std::max<std::int64_t>(budget.window_seconds, 1);
        budget_ = budget;
    }
    // A line for the person in the journal (PRIORITY notice, identifier
    // `hostbridge`), where one runs: a request held for them. Best effort.
    void notice(const std::string& message);

    // Off: no datagram to the journal (tests of the log alone).
    void set_journal_anchor(bool on) { journal_ = on; }
    // Another socket than kJournalSocket (tests receive the datagrams).
    void set_journal_socket(std::string path) { journal_socket_ = std::move(path); }

    // The last `max_bytes` of the newest segment, cut at a line start
    // (for the best-effort mirror in diagnostics/). Complete lines only: a
    // torn last line is left out. Empty when there is no log yet.
    Result<std::string> tail(std::size_t max_bytes) const;

    // The name of the newest segment (the one appends go to).
    [[nodiscard]] std::string current_segment() const { return audit_segment_name(segment_); }

  private:
    AuditLog(std::string state_dir, UniqueFd dir_fd, UniqueFd fd, std::uint64_t segment,
             std::uint64_t rotate_bytes)
        : dir_(std::move(state_dir)),
          dir_fd_(std::move(dir_fd)),
          fd_(std::move(fd)),
          segment_(segment),
          rotate_bytes_(rotate_bytes),
          owner_pid_(::getpid()) {}
    enum class Mode { Always, Agent, FlushOnly };
    Result<void> write(const AuditRecord* record, Mode mode, bool sync);
    Result<void> lock_current();
    Result<void> rotate();
    void anchor(std::uint64_t seq, const std::string& hash);
    void send_to_journal(const std::string& fields);
    std::string dir_;
    UniqueFd dir_fd_;  // the state dir: every name below is resolved in it
    UniqueFd fd_;      // the newest segment (reopened when a newer one appears)
    std::uint64_t segment_ = 1;
    std::uint64_t rotate_bytes_ = kAuditRotateBytes;
    AuditBudget budget_;
    bool journal_ = true;
    std::string journal_socket_ = kJournalSocket;
    UniqueFd journal_fd_;
    // flock belongs to the open file description, which a fork shares: a
    // child reopens the log before its first append so that the lock
    // excludes its parent too.
    pid_t owner_pid_;
};

}  // namespace hb::common
