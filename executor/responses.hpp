// Response files: what the agent polls in responses/. The JSON shape is
// docs/PROTOCOL.md "Response files", every field on every response; this is the
// one place where a response becomes text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "executor/spool.hpp"
#include "ipc/result.hpp"
#include "ipc/sys.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

// Pending: held for a person (policy `ask`), not terminal (docs/PROTOCOL.md).
enum class ResponseState { Queued, Running, Done, Failed, Denied, Expired, Pending };
std::string_view response_state_name(ResponseState state);  // "queued"

struct Response {
    ResponseState state = ResponseState::Queued;
    std::string request;  // the request's basename (on-schema, so plain ASCII)
    std::optional<Verb> verb;
    std::optional<std::string> arg;
    std::optional<std::int64_t> requested_at;  // seconds since the epoch
    std::int64_t updated_at = 0;               // seconds since the epoch
    std::optional<int> exit_code;
    std::optional<std::string> reason;
    std::optional<std::string> output;       // raw bytes; trimmed and repaired when rendered
    std::optional<std::string> log;          // "archive/<name>.log"
    std::optional<std::int64_t> expires_at;  // Pending only: when the hold ends
    // After a settle step: per service (engines/podman/settle.hpp settle_json).
    std::optional<nlohmann::ordered_json> services;
    // A windowed logs: the cursor after its lines, and whether more wait.
    std::optional<std::string> cursor;
    std::optional<bool> more;
};

inline constexpr std::size_t kMaxOutputBytes = 16384;

// The JSON text of a response (keys in protocol order, one final newline).
std::string render_response(const Response& response);

// The last `max_bytes` of `bytes`, starting on a UTF-8 character boundary,
// with every byte that is not part of a valid UTF-8 sequence replaced by
// U+FFFD, so the text is always valid JSON.
std::string utf8_tail(std::string_view bytes, std::size_t max_bytes = kMaxOutputBytes);

// "2026-11-29T08:00:00Z" (ipc/sys.hpp).
using sys::format_utc;

// responses/<request>.response.json
std::string response_file_name(std::string_view request);

// Publishes responses atomically into the pinned responses/ dir.
class ResponseWriter {
  public:
    ResponseWriter(const Spool& spool, FileMode mode) : spool_(spool), mode_(mode) {}

    // Replaces whatever response the request had (the last state is final).
    Result<void> publish(const Response& response) const;
    // `queued`, only where the request has no response yet (RENAME_NOREPLACE):
    // true when this call published it, false when one already existed.
    Result<bool> acknowledge(const std::string& request, std::time_t now) const;
    // True when the request already has a response of any state.
    [[nodiscard]] bool has_response(const std::string& request) const;

  private:
    const Spool& spool_;
    FileMode mode_;
};

}  // namespace hb::exec
