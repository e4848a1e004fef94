// The parser's half of the wire (ipc/wire_layout.hpp): it decodes the
// Startup and each Request, and encodes its Verdict.
#include <cstring>

#include "ipc/wire.hpp"
#include "ipc/wire_layout.hpp"

namespace hb {

using le::get_u16, le::get_u32, le::get_u64, le::put_u16, le::put_u32, le::put_u64;
using wire_layout::all_zero, wire_layout::buildable_mask, wire_layout::check_header,
    wire_layout::kSlotSize, wire_layout::put_header;

Result<Startup> decode_startup(std::span<const std::uint8_t> bytes) {
    if (auto h = check_header(bytes, kStartupSize, "startup"); !h) return h.error();
    const std::uint8_t* p = bytes.data();
    const std::size_t count = get_u16(p + 6);
    if (count > kMaxServices) return make_error("startup: more than 64 services");
    const std::uint64_t mask = get_u64(p + 8);
    if (count < 64 && (mask >> count) != 0) {
        return make_error("startup: buildable bit beyond the service count");
    }
    Startup s;
    s.services.reserve(count);
    for (std::size_t i = 0; i < kMaxServices; ++i) {
        const std::uint8_t* slot = p + 16 + i * kSlotSize;
        if (i >= count) {
            if (!all_zero(slot, kSlotSize)) return make_error("startup: unused slot not zero");
            continue;
        }
        const std::size_t len = slot[0];
        if (len == 0 || len > kMaxServiceName) {
            return make_error("startup: bad service name length at index " + std::to_string(i));
        }
        if (!all_zero(slot + 1 + len, kMaxServiceName - len)) {
            return make_error("startup: service name padding not zero");
        }
        s.services.emplace_back(reinterpret_cast<const char*>(slot + 1), len);
    }
    for (std::size_t i = 0; i < count; ++i) {
        if ((mask >> i) & 1U) s.buildable.push_back(s.services[i]);
    }
    // Shapes, order, uniqueness: the same checks the encoder applies.
    if (auto m = buildable_mask(s); !m) return m.error();
    return s;
}

Result<Request> decode_request(std::span<const std::uint8_t> bytes) {
    if (auto h = check_header(bytes, kRequestSize, "request"); !h) return h.error();
    const std::uint8_t* p = bytes.data();
    const std::size_t len = get_u16(p + 6);
    if (len == 0 || len > kMaxBasename) return make_error("request: bad basename length");
    if (!all_zero(p + 12 + len, kMaxBasename - len)) {
        return make_error("request: basename padding not zero");
    }
    Request r;
    r.seq = get_u32(p + 8);
    r.basename.assign(reinterpret_cast<const char*>(p + 12), len);
    // A directory entry's name never holds NUL or '/'; one that does is not
    // from our executor.
    if (r.basename.find('\0') != std::string::npos || r.basename.find('/') != std::string::npos) {
        return make_error("request: basename contains NUL or '/'");
    }
    return r;
}

std::array<std::uint8_t, kVerdictSize> encode_verdict(const Verdict& v) {
    std::array<std::uint8_t, kVerdictSize> out{};
    put_header(out.data());
    out[6] = static_cast<std::uint8_t>(v.outcome);
    out[7] = v.verb ? static_cast<std::uint8_t>(*v.verb) : 0;
    put_u32(out.data() + 8, v.seq);
    put_u16(out.data() + 12, v.arg_index);
    put_u16(out.data() + 14, static_cast<std::uint16_t>(v.reason));
    put_u64(out.data() + 16, static_cast<std::uint64_t>(v.requested_at));
    put_u16(out.data() + 24, v.window.lines);
    put_u32(out.data() + 28, v.window.since_seen);
    put_u64(out.data() + 32, static_cast<std::uint64_t>(v.window.since_ns));
    return out;
}

}  // namespace hb
