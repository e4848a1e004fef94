// Shared helpers for the parser tests: the enumerations of a sample install
// and builders for request names and bodies.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ipc/wire.hpp"
#include "parser/validate.hpp"

namespace hb::parser::testing {

// services sorted: api(0) db(1) web(2) worker(3); buildable: api, web.
inline const Startup& enums() {
    static const Startup s{{"api", "db", "web", "worker"}, {"api", "web"}};
    return s;
}

inline constexpr std::string_view kTime = "2026-11-29T08:00:00Z";
inline constexpr std::int64_t kEpoch = 1795939200;  // kTime

inline std::string name_for(std::string_view verb) {
    return "20261129T080000Z-" + std::string(verb) + "-0123456789abcdef.json";
}

inline std::string body_for(std::string_view verb, std::string_view arg = {},
                            std::string_view at = kTime) {
    std::string b = "{\"verb\":\"" + std::string(verb) + "\"";
    if (!arg.empty()) b += ",\"arg\":\"" + std::string(arg) + "\"";
    b += ",\"requested_at\":\"" + std::string(at) + "\"}\n";
    return b;
}

inline Verdict check(std::string_view name, std::string_view body) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(body.data());
    return validate(name, std::span<const std::uint8_t>(p, body.size()), enums());
}

// Validates a body under the name whose verb is `name_verb`.
inline Verdict check_body(std::string_view name_verb, std::string_view body) {
    return check(name_for(name_verb), body);
}

}  // namespace hb::parser::testing
