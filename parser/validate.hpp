// The parser's whole judgement of one request, as a pure function: no I/O,
// no clock, no globals. Everything docs/PROTOCOL.md says about a request's name
// and body is decided here; expiry and future skew are the executor's (it
// has the clock), so only the requested_at epoch is reported.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ipc/wire.hpp"

namespace hb::parser {

// Judges one request: its directory-entry name and at most kMaxBody + 1
// bytes of its body (one more than allowed, so "too large" is visible).
// `enums` carries the service and buildable enumerations of this install,
// sorted and unique as decode_startup guarantees (lookups are binary searches).
// Verdict::seq is left 0; the caller fills it in.
Verdict validate(std::string_view basename, std::span<const std::uint8_t> body,
                 const Startup& enums);

}  // namespace hb::parser
