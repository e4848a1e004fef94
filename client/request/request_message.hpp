// What an agent client puts into the spool: the shape checks on VERB and
// ARG, the request's name and its body (docs/PROTOCOL.md, "Request files").
// Shapes only: which verbs and services are allowed is the host's call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ipc/result.hpp"
#include "ipc/wire.hpp"

namespace hb::client {

inline constexpr std::size_t kMaxVerbBytes = 64;
inline constexpr std::size_t kMaxArgBytes = kMaxServiceName;

// The host's own tests, linked from ipc/ (docs/agent-clients.md, "Shapes"):
// a verb is what a request name may carry (ipc/request_name.hpp), starting
// with a letter since a dash reads as an option, at most 64 bytes; an arg is
// what the protocol allows (ipc/wire.hpp's is_valid_arg_shape).
Result<void> check_verb_shape(std::string_view verb);
Result<void> check_arg_shape(std::string_view arg);

// The log window of a `logs` request (docs/PROTOCOL.md, `lines` and
// `since`), checked by the host's own rules so that a typo fails in the
// client, before it takes a rate-limit slot. The errors are the host's
// reason texts.
// ^[1-9][0-9]{0,3}$, at most 1000.
Result<void> check_lines(std::string_view lines);
// NS:K as a logs answer's `cursor`: each decimal without a leading zero
// ("0" allowed), NS at most INT64_MAX, K at most 1000000.
Result<void> check_since(std::string_view since);

struct LogWindow {
    std::optional<std::string> lines;  // checked with check_lines
    std::optional<std::string> since;  // checked with check_since
    [[nodiscard]] bool any() const { return lines.has_value() || since.has_value(); }
};

struct RequestMessage {
    std::string name;  // <ts>-<verb>-<nonce>.json
    std::string body;  // one JSON object and a final newline
};

// Builds the request for a verb, arg and window of the shapes above (each
// checked again, failing with the same sentence), stamped now, with a fresh
// 8-byte random nonce; fails too when the kernel has no randomness to give.
Result<RequestMessage> make_request(std::string_view verb, const std::optional<std::string>& arg,
                                    const LogWindow& window = {});

}  // namespace hb::client
