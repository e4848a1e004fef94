// The authoritative audit log: append-only, hash-chained JSON lines in the
// host state dir, off the shared mount. Format: architecture.md, "Audit log".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

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
};
std::string_view audit_event_name(AuditEvent event);

struct AuditRecord {
    AuditEvent event = AuditEvent::Denied;
    std::optional<std::string> request;  // raw name bytes; escaped as \xHH when written
    std::optional<Verb> verb;
    std::optional<std::string> arg;
    std::optional<std::string> reason;
    std::optional<int> exit_code;
    std::optional<std::int64_t> duration_ms;
};

class AuditLog {
public:
    // Opens (creating if needed, mode 0600) <state_dir>/audit.jsonl with
    // O_APPEND|O_NOFOLLOW|O_CLOEXEC. Fails if it cannot be opened for writing.
    static Result<AuditLog> open(const std::string& state_dir);

    // Appends one line under an exclusive flock on the log file: reads the
    // last line for seq/prev, repairs a torn tail with a `recovered` event,
    // rotates at 64 MiB (audit.jsonl.1 .. .8, the chain runs on). With
    // `sync`, fdatasync before returning (the `started` event needs this).
    Result<void> append(const AuditRecord& record, bool sync = false);

    // The last `max_bytes` of the current log file, cut at a line start
    // (for the best-effort mirror in diagnostics/).
    Result<std::string> tail(std::size_t max_bytes) const;

private:
    AuditLog(std::string state_dir, UniqueFd fd) : dir_(std::move(state_dir)), fd_(std::move(fd)) {}
    std::string dir_;
    UniqueFd fd_;
};

struct AuditVerifyReport {
    std::uint64_t lines = 0;
    std::uint64_t torn_fragments = 0;  // accepted: each directly before a `recovered`
    std::optional<std::string> first_bad;  // "audit.jsonl line N: why", when broken
};
// Checks the whole chain across rotated files, oldest first.
Result<AuditVerifyReport> verify_audit_log(const std::string& state_dir);

}  // namespace hb::exec
