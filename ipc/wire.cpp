// The wire's shared half: the shapes of names both processes check, and the
// layout helpers both halves use (ipc/wire_layout.hpp).
#include <algorithm>
#include <string>

#include "ipc/wire.hpp"
#include "ipc/wire_layout.hpp"

namespace hb {

namespace {
bool is_lower_or_digit(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}
bool is_alnum(char c) {
    return is_lower_or_digit(c) || (c >= 'A' && c <= 'Z');
}
}  // namespace

bool is_valid_arg_shape(std::string_view arg) {
    if (arg.empty() || arg.size() > kMaxServiceName) return false;
    if (arg[0] < 'a' || arg[0] > 'z') return false;
    return std::all_of(arg.begin() + 1, arg.end(),
                       [](char c) { return is_lower_or_digit(c) || c == '_' || c == '-'; });
}

bool is_valid_slug(std::string_view slug) {
    if (slug.empty() || slug.size() > 63 || !is_lower_or_digit(slug[0])) return false;
    return std::all_of(slug.begin(), slug.end(),
                       [](char c) { return is_lower_or_digit(c) || c == '-'; });
}

bool is_valid_container_name(std::string_view name) {
    if (name.empty() || name.size() > kMaxContainerName || !is_alnum(name[0])) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; });
}

bool is_valid_log_window(const LogWindow& w) {
    if (w.lines > kMaxLogLines) return false;
    if (w.since_ns == kNoTime) return w.since_seen == 0;
    return w.since_ns >= 0 && w.since_seen <= kMaxCursorSeen;
}

namespace wire_layout {

using le::get_u16, le::get_u32, le::put_u16, le::put_u32;

void put_header(std::uint8_t* p) {
    put_u32(p, kWireMagic);
    put_u16(p + 4, kWireVersion);
}

Result<void> check_header(std::span<const std::uint8_t> bytes, std::size_t size, const char* what) {
    if (bytes.size() != size) {
        return make_error(std::string(what) + ": wrong size " + std::to_string(bytes.size()) +
                          ", expected " + std::to_string(size));
    }
    if (get_u32(bytes.data()) != kWireMagic) return make_error(std::string(what) + ": bad magic");
    if (get_u16(bytes.data() + 4) != kWireVersion) {
        return make_error(std::string(what) + ": unsupported version");
    }
    return {};
}

bool all_zero(const std::uint8_t* p, std::size_t n) {
    return std::all_of(p, p + n, [](std::uint8_t b) { return b == 0; });
}

Result<std::uint64_t> buildable_mask(const Startup& s) {
    if (s.services.size() > kMaxServices) return make_error("startup: more than 64 services");
    for (std::size_t i = 0; i < s.services.size(); ++i) {
        if (!is_valid_arg_shape(s.services[i])) {
            return make_error("startup: invalid service name at index " + std::to_string(i));
        }
        if (i > 0 && !(s.services[i - 1] < s.services[i])) {
            return make_error("startup: services not sorted and unique");
        }
    }
    std::uint64_t mask = 0;
    for (std::size_t i = 0; i < s.buildable.size(); ++i) {
        if (i > 0 && !(s.buildable[i - 1] < s.buildable[i])) {
            return make_error("startup: buildable not sorted and unique");
        }
        auto it = std::lower_bound(s.services.begin(), s.services.end(), s.buildable[i]);
        if (it == s.services.end() || *it != s.buildable[i]) {
            return make_error("startup: buildable service is not a service");
        }
        mask |= std::uint64_t{1} << (it - s.services.begin());
    }
    return mask;
}

}  // namespace wire_layout

}  // namespace hb
