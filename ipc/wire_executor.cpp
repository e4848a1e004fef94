// The executor's half of the wire (ipc/wire_layout.hpp): it encodes the
// Startup and each Request, and decodes, strictly, each Verdict.
#include <cstring>

#include "ipc/wire.hpp"
#include "ipc/wire_layout.hpp"

namespace hb {

using le::get_u16, le::get_u32, le::get_u64, le::put_u16, le::put_u32, le::put_u64;
using wire_layout::all_zero, wire_layout::buildable_mask, wire_layout::check_header,
    wire_layout::kSlotSize, wire_layout::put_header;

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
    if (v.requested_at != kNoTime &&
        (v.requested_at < wire_layout::kMinEpoch || v.requested_at > wire_layout::kMaxEpoch)) {
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
