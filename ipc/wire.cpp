// Encode/decode of the three fixed-size messages. Explicit little-endian byte
// layout (never a memcpy of a struct), and decoders that accept exactly the
// bytes the encoder produces: every padding byte must be zero, every enum in
// range, every combination consistent. So encode(decode(x)) == x whenever
// decode succeeds (the wire fuzzer checks this).
//
// Layouts (offsets in bytes, all integers little-endian):
//
//   Startup (kStartupSize = 4176)
//     0  u32 magic     4  u16 version    6  u16 service count (0..64)
//     8  u64 buildable mask (bit i: services[i] is buildable)
//    16  64 slots of { u8 length (1..64), 64 bytes name, zero padded };
//        unused slots are all zero
//
//   Request (kRequestSize = 267)
//     0  u32 magic     4  u16 version    6  u16 basename length (1..255)
//     8  u32 seq      12  255 bytes basename, zero padded
//
//   Verdict (kVerdictSize = 40)
//     0  u32 magic     4  u16 version    6  u8 outcome    7  u8 verb (0: none)
//     8  u32 seq      12  u16 arg index  14  u16 reason  16  i64 requested_at
//    24  u16 lines (0: none)  26  u16 zero  28  u32 since_seen
//    32  i64 since_ns (INT64_MIN: none)
#include <algorithm>
#include <cstring>

#include "ipc/le_bytes.hpp"
#include "ipc/wire.hpp"

namespace hb {
namespace {

using le::get_u16, le::get_u32, le::get_u64, le::put_u16, le::put_u32, le::put_u64;

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

// Smallest and largest epoch a `YYYY-MM-DDTHH:MM:SSZ` time can denote
// (0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z).
constexpr std::int64_t kMinEpoch = -62167219200;
constexpr std::int64_t kMaxEpoch = 253402300799;

constexpr std::size_t kSlotSize = 1 + kMaxServiceName;

}  // namespace

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

// ---------------------------------------------------------------- Startup

namespace {

// The invariants of a Startup, shared by encoder and decoder.
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

}  // namespace

std::vector<std::uint8_t> encode_startup(const Startup& startup) {
    // An invalid Startup encodes to nothing: send_message refuses an empty
    // message and the parser's decoder rejects it, so a bug fails closed.
    auto mask = buildable_mask(startup);
    if (!mask) return {};
    std::vector<std::uint8_t> out(kStartupSize, 0);
    put_header(out.data());
    put_u16(out.data() + 6, static_cast<std::uint16_t>(startup.services.size()));
    put_u64(out.data() + 8, *mask);
    for (std::size_t i = 0; i < startup.services.size(); ++i) {
        std::uint8_t* slot = out.data() + 16 + i * kSlotSize;
        const std::string& name = startup.services[i];
        slot[0] = static_cast<std::uint8_t>(name.size());
        std::memcpy(slot + 1, name.data(), name.size());
    }
    return out;
}

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

// ---------------------------------------------------------------- Request

std::vector<std::uint8_t> encode_request(const Request& request) {
    // Like encode_startup: an unencodable request becomes the empty message.
    if (request.basename.empty() || request.basename.size() > kMaxBasename) return {};
    std::vector<std::uint8_t> out(kRequestSize, 0);
    put_header(out.data());
    put_u16(out.data() + 6, static_cast<std::uint16_t>(request.basename.size()));
    put_u32(out.data() + 8, request.seq);
    std::memcpy(out.data() + 12, request.basename.data(), request.basename.size());
    return out;
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

// ---------------------------------------------------------------- Verdict

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

bool is_valid_log_window(const LogWindow& w) {
    if (w.lines > kMaxLogLines) return false;
    if (w.since_ns == kNoTime) return w.since_seen == 0;
    return w.since_ns >= 0 && w.since_seen <= kMaxCursorSeen;
}

Result<Verdict> decode_verdict(std::span<const std::uint8_t> bytes, std::size_t service_count) {
    if (auto h = check_header(bytes, kVerdictSize, "verdict"); !h) return h.error();
    const std::uint8_t* p = bytes.data();
    Verdict v;
    v.seq = get_u32(p + 8);

    const std::uint8_t outcome = p[6];
    if (outcome < static_cast<std::uint8_t>(Outcome::Accept) ||
        outcome > static_cast<std::uint8_t>(Outcome::Quarantine)) {
        return make_error("verdict: outcome out of range");
    }
    v.outcome = static_cast<Outcome>(outcome);

    const std::uint8_t verb = p[7];
    if (verb > static_cast<std::uint8_t>(kLastVerb)) {
        return make_error("verdict: verb out of range");
    }
    if (verb != 0) v.verb = static_cast<Verb>(verb);

    v.arg_index = get_u16(p + 12);
    v.reason = static_cast<ReasonCode>(get_u16(p + 14));
    v.requested_at = static_cast<std::int64_t>(get_u64(p + 16));
    v.window.lines = get_u16(p + 24);
    v.window.since_seen = get_u32(p + 28);
    v.window.since_ns = static_cast<std::int64_t>(get_u64(p + 32));
    if (get_u16(p + 26) != 0) return make_error("verdict: padding not zero");
    if (!is_valid_log_window(v.window)) return make_error("verdict: log window out of range");
    // A window comes only with an accepted logs request.
    if (v.window.given() && (v.outcome != Outcome::Accept || v.verb != Verb::Logs)) {
        return make_error("verdict: log window on something other than an accepted logs");
    }

    // Reason: a known parser code for this outcome (this also rejects
    // values outside the enum).
    if (!reason_valid_for_parser(v.reason, v.outcome)) {
        return make_error("verdict: reason not valid for the outcome");
    }
    if (v.requested_at != kNoTime && (v.requested_at < kMinEpoch || v.requested_at > kMaxEpoch)) {
        return make_error("verdict: requested_at out of range");
    }

    // Arg: only with a verb that takes one, and inside the enumeration.
    const bool has_arg = v.arg_index != kNoArg;
    if (has_arg) {
        if (!v.verb) return make_error("verdict: arg without a verb");
        if (verb_arg_kind(*v.verb) == ArgKind::None) {
            return make_error("verdict: arg on a verb that takes none");
        }
        if (v.arg_index >= service_count) return make_error("verdict: arg index out of range");
    }

    switch (v.outcome) {
        case Outcome::Accept:
            if (!v.verb) return make_error("verdict: accept without a verb");
            if ((verb_arg_kind(*v.verb) != ArgKind::None) != has_arg) {
                return make_error("verdict: accept with a missing arg");
            }
            if (v.requested_at == kNoTime) return make_error("verdict: accept without a time");
            break;
        case Outcome::Quarantine:
            // Quarantine happens before anything in the body is recognised.
            if (v.verb || has_arg || v.requested_at != kNoTime) {
                return make_error("verdict: quarantine with content");
            }
            break;
        case Outcome::Deny:
            switch (v.reason) {
                case ReasonCode::EmptyBody:
                    if (v.verb || v.requested_at != kNoTime) {
                        return make_error("verdict: empty body with content");
                    }
                    break;
                case ReasonCode::MissingVerb:
                case ReasonCode::UnknownVerb:
                    if (v.verb) return make_error("verdict: unknown verb with a verb");
                    break;
                case ReasonCode::VerbMismatch:
                    if (!v.verb) return make_error("verdict: verb mismatch without a verb");
                    break;
                case ReasonCode::ArgNotBuildable:
                    if (v.verb != Verb::Rebuild) {
                        return make_error("verdict: not-buildable on a verb other than rebuild");
                    }
                    [[fallthrough]];
                case ReasonCode::ArgRequired:
                case ReasonCode::ArgShape:
                case ReasonCode::ArgNotAService:
                    if (!v.verb || verb_arg_kind(*v.verb) == ArgKind::None || has_arg) {
                        return make_error("verdict: arg refusal inconsistent with verb/arg");
                    }
                    break;
                case ReasonCode::ArgForbidden:
                    if (!v.verb || verb_arg_kind(*v.verb) != ArgKind::None) {
                        return make_error("verdict: arg refusal inconsistent with verb");
                    }
                    break;
                case ReasonCode::MissingRequestedAt:
                case ReasonCode::BadRequestedAt:
                    if (v.requested_at != kNoTime) {
                        return make_error("verdict: time refusal with a time");
                    }
                    break;
                default:
                    break;  // UnknownKey, NotAString, HardcodedDeny: any content
            }
            break;
    }
    return v;
}

}  // namespace hb
