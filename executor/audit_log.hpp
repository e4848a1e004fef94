// The authoritative audit log: append-only, hash-chained JSON lines in the
// host state dir, off the shared mount. Format: architecture.md, "Audit log".
#pragma once

#include <sys/types.h>
#include <unistd.h>

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
std::optional<AuditEvent> audit_event_from_name(std::string_view name);

inline constexpr std::string_view kAuditLogName = "audit.jsonl";
// Rotation: at this size the log becomes audit.jsonl.1 (.1 -> .2 ... -> .8,
// the oldest dropped) and the chain runs on in a fresh file.
inline constexpr std::uint64_t kAuditRotateBytes = 64ULL << 20;
inline constexpr int kAuditRotatedFiles = 8;

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
};

class AuditLog {
  public:
    // Opens (creating if needed, mode 0600) <state_dir>/audit.jsonl with
    // O_RDWR|O_APPEND|O_NOFOLLOW|O_CLOEXEC. Fails if it cannot be opened for
    // writing.
    // The state dir must exist (install creates it).
    static Result<AuditLog> open(const std::string& state_dir);
    // The same with another rotation threshold (tests).
    static Result<AuditLog> open(const std::string& state_dir, std::uint64_t rotate_bytes);

    // Appends one line under an exclusive flock on the log file: reads the
    // last line for seq/prev, repairs a torn tail with a `recovered` event,
    // rotates at 64 MiB (audit.jsonl.1 .. .8, the chain runs on). With
    // `sync`, fdatasync before returning (the `started` event needs this).
    Result<void> append(const AuditRecord& record, bool sync = false);

    // The last `max_bytes` of the current log file, cut at a line start
    // (for the best-effort mirror in diagnostics/). Complete lines only: a
    // torn last line is left out. Empty when there is no log yet.
    Result<std::string> tail(std::size_t max_bytes) const;

  private:
    AuditLog(std::string state_dir, UniqueFd dir_fd, UniqueFd fd, std::uint64_t rotate_bytes)
        : dir_(std::move(state_dir)),
          dir_fd_(std::move(dir_fd)),
          fd_(std::move(fd)),
          rotate_bytes_(rotate_bytes),
          owner_pid_(::getpid()) {}
    Result<void> lock_current();
    Result<void> rotate();
    std::string dir_;
    UniqueFd dir_fd_;  // the state dir: every name below is resolved in it
    UniqueFd fd_;      // the current audit.jsonl (reopened after a rotation)
    std::uint64_t rotate_bytes_ = kAuditRotateBytes;
    // flock belongs to the open file description, which a fork shares: a
    // child reopens the log before its first append so that the lock
    // excludes its parent too.
    pid_t owner_pid_;
};

struct AuditVerifyReport {
    std::uint64_t lines = 0;               // records checked (torn fragments not counted)
    std::uint64_t torn_fragments = 0;      // accepted: each directly before a `recovered`
    std::optional<std::string> first_bad;  // "audit.jsonl line N: why", when broken
};
// Checks the whole chain across rotated files, oldest first (.8 .. .1, then
// audit.jsonl): key order and types, canonical text, seq +1, prev, hash.
// The chain must start at seq 1 with a zero prev unless its oldest file is
// audit.jsonl.8 (older history dropped by rotation). An unterminated last
// line is reported as bad until the next append recovers it. I/O failures
// are errors; a broken chain is a report with first_bad set.
Result<AuditVerifyReport> verify_audit_log(const std::string& state_dir);

}  // namespace hb::exec
