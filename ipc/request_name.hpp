// The request file name schema (docs/PROTOCOL.md), one copy linked by the
// parser and the executor:
//   ^[0-9]{8}T[0-9]{6}Z-[a-z-]+-[0-9a-f]{16}\.json$
// The executor needs it before any parser runs: to acknowledge (`queued`
// only for on-schema names) and to decide whether a quarantined file earns
// a response. Hand-rolled rather than std::regex: the schema is fixed-width
// at both ends, and std::regex is slow and allocates on every match.
#pragma once

#include <optional>
#include <string_view>

namespace hb {

// True when `verb` is what the schema's verb part may be: [a-z-]+. The
// clients test a VERB with this before they name a request for it.
bool is_request_name_verb(std::string_view verb);

// True when `name` matches the schema exactly.
bool is_request_name(std::string_view name);

// The verb part of an on-schema name ("join-network"), else nullopt.
std::optional<std::string_view> request_name_verb(std::string_view name);

}  // namespace hb
