// The audit log's file names in a state dir (docs/AUDIT-LOG.md): a list of
// segments whose names never change. Segment 1 is audit.jsonl (the first
// event ever written, `installed`, is in it), segment k >= 2 is
// audit-<k, 6 digits or more>.jsonl. Here, below common/, because the host
// request clients (client/request/audit_lookup.hpp) read the log too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"

namespace hb {

inline constexpr std::string_view kAuditLogName = "audit.jsonl";
std::string audit_segment_name(std::uint64_t index);
// The index of a segment name, nothing for any other name.
std::optional<std::uint64_t> audit_segment_index(std::string_view name);
// Before segments, rotation renamed audit.jsonl to .1 .. .8: such files
// are still read (oldest first), never written.
inline constexpr int kAuditLegacyRotatedFiles = 8;
std::string audit_legacy_rotated_name(int index);

// The segment files of a state dir in chain order (legacy rotated files,
// then segments by index), as names relative to the dir. A gap in the
// indices is kept (the verifier reports it).
Result<std::vector<std::string>> audit_log_files(int dir_fd);

}  // namespace hb
