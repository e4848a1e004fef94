// Strict reading of a request body: exactly one JSON object in UTF-8, no
// NUL, no BOM, no duplicate key, nothing after it but one final newline.
// What the object says is returned uninterpreted; the rules about verbs and
// args are validate.cpp's.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "ipc/wire.hpp"

namespace hb::parser {

// The top-level members that matter, as the object stated them.
struct BodyFields {
    std::optional<std::string> verb;          // set when "verb" is a string
    std::optional<std::string> arg;           // set when "arg" is a string
    std::optional<std::string> requested_at;  // set when "requested_at" is a string
    std::optional<std::string> lines;         // set when "lines" is a string (logs only)
    std::optional<std::string> since;         // set when "since" is a string (logs only)
    bool unknown_key = false;                 // a top-level key outside these five
    bool non_string_value = false;            // a top-level value that is not a string
};

struct BodyScan {
    // A quarantine reason (InvalidUtf8 ... DuplicateKey), or None when the
    // body is one well-formed object and `fields` describes it.
    ReasonCode malformed = ReasonCode::None;
    BodyFields fields;
};

// True when the body holds nothing but JSON whitespace (or nothing at all).
bool is_blank(std::span<const std::uint8_t> body);

// Reads a body of at most kMaxBody bytes that is not blank.
BodyScan scan_body(std::span<const std::uint8_t> body);

}  // namespace hb::parser
