// The audit log as the admin tool reads it (`hostbridge audit`, `list`,
// `doctor`): segments by state dir path, event names, and `--verify`, the
// hash chain checked. The format it reads is common/audit_format.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/audit_log.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

std::optional<common::AuditEvent> audit_event_from_name(std::string_view name);
Result<std::vector<std::string>> audit_log_files(const std::string& state_dir);

// What a journal entry says the log held: seq -> hash.
using AuditAnchors = std::vector<std::pair<std::uint64_t, std::string>>;

struct AuditVerifyReport {
    std::uint64_t lines = 0;               // records checked (torn fragments not counted)
    std::uint64_t torn_fragments = 0;      // accepted: each directly before a `recovered`
    std::optional<std::string> first_bad;  // "audit.jsonl line N: why", when broken
    std::uint64_t segments = 0;            // files read
    std::uint64_t bytes = 0;               // their total size
    std::uint64_t first_seq = 0;           // where the chain starts (1, or after a prune)
    std::uint64_t last_seq = 0;
    std::string first_event;            // the first line's event (`installed` on a real install)
    std::uint64_t anchors_checked = 0;  // journal anchors found in the log with their hash
};
// Checks the whole chain across segments, oldest first: key order and
// types, canonical text, seq +1, prev, hash. The chain starts at seq 1 with
// a zero prev, or where a `pruned` event says it now starts. A missing
// segment (a gap in the indices), an empty or cut segment, and an
// unterminated last line are reported, naming the file. With `anchors`,
// each (seq, hash) must be in the log, and none may lie past its end. I/O
// failures are errors; a broken chain is a report with first_bad set.
Result<AuditVerifyReport> verify_audit_log(const std::string& state_dir,
                                           const AuditAnchors* anchors = nullptr);

}  // namespace hb::admin
