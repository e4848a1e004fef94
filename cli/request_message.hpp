// What an agent client puts into the spool: the shape checks on VERB and
// ARG, the request's name and its body (docs/PROTOCOL.md, "Request files").
// Shapes only: which verbs and services are allowed is the host's call.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace hb::cli {

inline constexpr std::size_t kMaxVerbBytes = 64;
inline constexpr std::size_t kMaxArgBytes = 64;

// A verb is lowercase letters and dashes, starting with a letter, as the
// request name schema demands; at most 64 bytes.
Result<void> check_verb_shape(std::string_view verb);
// ^[a-z][a-z0-9_-]*$, at most 64 bytes.
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

// Builds the request for an already shape-checked verb, arg and window,
// stamped now, with a fresh 8-byte random nonce. Fails only when the kernel
// has no randomness to give.
Result<RequestMessage> make_request(std::string_view verb, const std::optional<std::string>& arg,
                                    const LogWindow& window = {});

}  // namespace hb::cli
