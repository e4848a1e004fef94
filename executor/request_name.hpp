// The request file name schema (docs/PROTOCOL.md), checked on the trusted side:
//   ^[0-9]{8}T[0-9]{6}Z-[a-z-]+-[0-9a-f]{16}\.json$
// The executor needs it before any parser runs: to acknowledge (`queued`
// only for on-schema names) and to decide whether a quarantined file earns
// a response. It deliberately does not link the parser's copy.
#pragma once

#include <optional>
#include <string_view>

namespace hb::exec {

// True when `name` matches the schema exactly.
bool is_request_name(std::string_view name);

// The verb part of an on-schema name ("join-network"), else nullopt.
std::optional<std::string_view> request_name_verb(std::string_view name);

}  // namespace hb::exec
