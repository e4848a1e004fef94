// The audit log's format as both sides read it: the writer (audit_log.cpp,
// run by every drain) and the verifier (admin/audit/audit_verify.cpp, run by
// `hostbridge audit --verify`). One definition, linked into both.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::common::audit_format {

inline constexpr std::string_view kZeroHash =
    "0000000000000000000000000000000000000000000000000000000000000000";
inline constexpr std::array<std::string_view, 11> kKeys = {
    "seq",    "ts",        "event",       "request", "verb", "arg",
    "reason", "exit_code", "duration_ms", "prev",    "hash"};
// Optional keys, each present only when set, in this order between
// "duration_ms" and "prev" (docs/AUDIT-LOG.md).
inline constexpr std::array<std::string_view, 2> kOptionalKeys = {"actor", "detail"};
// A longer line is corruption on read, so a bad line can never make a
// reader hold the whole file in memory.
inline constexpr std::size_t kMaxReadLine = 1024 * 1024;
inline constexpr std::size_t kChunk = 64 * 1024;

// Compact, keys in insertion order, UTF-8 unescaped; invalid UTF-8 becomes
// U+FFFD instead of throwing, so any bytes we are given still log.
std::string dump(const nlohmann::ordered_json& value);
bool is_lower_hex64(const nlohmann::ordered_json& value);
// The `reason` of the `recovered` event written for a torn fragment.
std::string torn_reason(std::uint64_t bytes);
UniqueFd open_log_for_reading(int dir_fd, const std::string& name);
// The newest segment, open for reading and holding a shared lock: no
// append is half-written and no new segment starts while it is held. An
// invalid fd when there is no log yet.
Result<UniqueFd> lock_current_shared(int dir_fd, std::string* name_out = nullptr);

}  // namespace hb::common::audit_format
