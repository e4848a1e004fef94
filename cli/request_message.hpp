// What an agent client puts into the spool: the shape checks on VERB and
// ARG, the request's name and its body (docs/PROTOCOL.md, "Request files").
// Shapes only: which verbs and services are allowed is the host's call.
#pragma once

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

struct RequestMessage {
    std::string name;  // <ts>-<verb>-<nonce>.json
    std::string body;  // one JSON object and a final newline
};

// Builds the request for an already shape-checked verb and arg, stamped
// now, with a fresh 8-byte random nonce. Fails only when the kernel has no
// randomness to give.
Result<RequestMessage> make_request(std::string_view verb, const std::optional<std::string>& arg);

}  // namespace hb::cli
