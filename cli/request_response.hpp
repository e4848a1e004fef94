// Reading the host's answer to one request (docs/PROTOCOL.md, "Response files").
// The client needs four fields: state, reason, exit_code and output.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace hb::cli {

enum class ResponseState {
    Queued,
    Running,
    Done,
    Failed,
    Denied,
    Expired,
    Other,  // a state this client does not know: treated as not yet final
};

[[nodiscard]] bool is_terminal(ResponseState state);
[[nodiscard]] std::string_view state_name(ResponseState state);

struct Response {
    ResponseState state = ResponseState::Other;
    std::string state_text;  // as the host wrote it
    std::optional<std::string> reason;
    std::optional<std::int64_t> exit_code;
    std::optional<std::string> output;
};

// Any valid JSON object with a string "state"; fields of the wrong type are
// an error rather than a guess.
Result<Response> parse_response(std::string_view text);

}  // namespace hb::cli
