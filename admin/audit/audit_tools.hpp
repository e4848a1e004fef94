// The admin side of the audit log beyond reading it: removing old segments
// with a `pruned` event, and the journal's witness of what the log held.
// docs/AUDIT-LOG.md describes both.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "admin/audit/audit_verify.hpp"
#include "common/audit_log.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

struct PruneOutcome {
    std::vector<std::string> removed;  // segment names, oldest first
    std::uint64_t first_seq = 0;       // where the chain now starts
};
// Removes the sealed segments (never the newest) whose last event is older
// than `before` (YYYY-MM-DD, UTC midnight), oldest first and only while
// they are contiguous from the start. Writes the `pruned` event that anchors
// the new start before removing anything; refuses a chain that does not
// verify. Nothing to remove is an outcome with no names.
Result<PruneOutcome> prune_audit_log(const std::string& state_dir, const std::string& before);

// `--since TIME` as the audit log's own `ts` form ("2026-12-03T00:00:00.000Z"),
// so events compare as strings: `today` (UTC midnight), YYYY-MM-DD (UTC
// midnight), YYYY-MM-DDTHH:MM:SSZ, or N s, m, h or d ago ("90m", "7d"),
// counted from `now`. An error says which forms it takes.
Result<std::string> since_cutoff(const std::string& text, std::time_t now);

struct JournalAnchors {
    admin::AuditAnchors anchors;  // from entries the installed executor sent
    std::uint64_t ignored = 0;    // entries another process sent (same user, other program)
};
// Reads, with journalctl -o json (fixed argv), the entries about this
// state dir, and keeps those whose trusted fields (set by journald, not by
// the sender) name our uid and `executor` (its real path).
Result<JournalAnchors> read_journal_anchors(const std::string& state_dir,
                                            const std::string& executor);
// Entries of journalctl -o json output, one JSON object a line (tests feed
// this directly).
JournalAnchors parse_journal_anchors(const std::string& json_lines, const std::string& uid,
                                     const std::string& executor_real_path);

}  // namespace hb::admin
