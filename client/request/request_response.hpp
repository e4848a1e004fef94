// Reading the host's answer to one request (docs/PROTOCOL.md, "Response files").
// The client needs state, reason, exit_code, output and expires_at; and
// after a windowed logs request, cursor and more.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ipc/result.hpp"

namespace hb::client {

enum class ResponseState {
    Queued,
    Pending,  // held for a person's approval on the host (policy `ask`)
    Running,
    Done,
    Failed,
    Denied,
    Expired,
    Other,  // a state this client does not know: treated as not yet final
};

[[nodiscard]] bool is_terminal(ResponseState state);
[[nodiscard]] std::string_view state_name(ResponseState state);
// A state as the host wrote it, for a person: a known state name as
// itself, anything else marked and escaped (display::word), so a forged
// state can neither act on a terminal nor read as a state or a sentence.
[[nodiscard]] std::string shown_state(std::string_view text);

struct Response {
    ResponseState state = ResponseState::Other;
    std::string state_text;  // as the host wrote it
    std::optional<std::string> reason;
    std::optional<std::int64_t> exit_code;
    std::optional<std::string> output;
    // `pending` only: when the host stops holding the request, as written
    // and as a time. Absent, of another type or malformed: both unset (the
    // client then waits as for `running`, docs/agent-clients.md).
    std::optional<std::string> expires_at_text;
    std::optional<std::chrono::sys_seconds> expires_at;
    // After up, restart and rebuild: how each service settled, as the host
    // wrote it (docs/PROTOCOL.md); absent when not an array.
    std::optional<nlohmann::json> services;
    // A windowed logs answer (docs/PROTOCOL.md, `cursor` and `more`): where
    // to go on from, and whether lines after it were left out. Unset when
    // null, absent or of another type.
    std::optional<std::string> cursor;
    std::optional<bool> more;
};

// "2026-11-29T08:10:00Z" (the `requested_at` format), or nullopt.
std::optional<std::chrono::sys_seconds> parse_utc(std::string_view text);

// Any valid JSON object with a string "state"; fields of the wrong type are
// an error rather than a guess.
Result<Response> parse_response(std::string_view text);

}  // namespace hb::client
