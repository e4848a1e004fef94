// The request file name schema (docs/PROTOCOL.md, "Request files"):
//   ^[0-9]{8}T[0-9]{6}Z-[a-z-]+-[0-9a-f]{16}\.json$
#pragma once

#include <optional>
#include <string_view>

namespace hb::parser {

// The verb part of a name that matches the schema exactly, else nullopt.
// The nonce has a fixed length, so the split is unambiguous even though the
// verb may itself contain '-'.
std::optional<std::string_view> request_name_verb(std::string_view basename);

}  // namespace hb::parser
