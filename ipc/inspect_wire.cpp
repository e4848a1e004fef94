// The container-facts wire's shared half: the names of its enums and the
// container id's hex form. The executor's half is ipc/inspect_wire_executor.cpp,
// the parser's ipc/inspect_wire_parser.cpp.
#include "ipc/inspect_wire.hpp"

#include <algorithm>

#include "ipc/enum_names.hpp"

namespace hb {
namespace {

constexpr auto kStateNames = dense_names<kLastContainerState>(
    {"unknown", "created", "configured", "running", "paused", "restarting", "removing", "stopping",
     "stopped", "exited", "dead"},
    "unknown");
constexpr auto kHealthNames = dense_names<kLastContainerHealth>(
    {"none", "starting", "healthy", "unhealthy", "unknown"}, "unknown");
constexpr auto kStatusTexts = dense_names<kLastInspectStatus>(
    {"ok", "the engine's answer is too large", "the engine's answer is not JSON",
     "the engine's answer does not have the shape of `container inspect`"},
    "unknown status");

}  // namespace

std::string_view container_state_name(ContainerState state) {
    return name_of(kStateNames, state);
}
std::string_view container_health_name(ContainerHealth health) {
    return name_of(kHealthNames, health);
}
std::string_view inspect_status_text(InspectStatus status) {
    return name_of(kStatusTexts, status);
}

std::string hex_id(const std::array<std::uint8_t, 32>& id) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(64);
    for (const std::uint8_t b : id) {
        out.push_back(kHex[b >> 4]);
        out.push_back(kHex[b & 0xF]);
    }
    return out;
}

bool parse_hex_id(std::string_view text, std::array<std::uint8_t, 32>& out) {
    if (text.size() != 64) return false;
    const auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < 32; ++i) {
        const int hi = nibble(text[2 * i]);
        const int lo = nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<std::uint8_t>((hi << 4) | lo);
    }
    return true;
}

}  // namespace hb
