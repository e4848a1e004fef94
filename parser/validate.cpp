// The order of the rules is part of the contract: it decides which reason a
// request that breaks several rules gets. Quarantine (unclassifiable) comes
// before any refusal, and refusals follow docs/PROTOCOL.md's tables top down.
#include "parser/validate.hpp"

#include <algorithm>

#include "ipc/log_cursor.hpp"
#include "ipc/request_name.hpp"
#include "parser/body_json.hpp"
#include "parser/requested_at.hpp"

namespace hb::parser {
namespace {

// Never allowed, whatever the policy file says (docs/PROTOCOL.md, "Verbs").
bool is_hardcoded_deny(std::string_view verb) {
    return verb == "reset-db" || verb == "exec" || verb.starts_with("shell");
}

Verdict quarantine(ReasonCode reason) {
    Verdict v;
    v.outcome = Outcome::Quarantine;
    v.reason = reason;
    return v;
}

// The index into `services` of an arg that is a member of the verb's
// enumeration, else kNoArg.
std::uint16_t arg_index(ArgKind kind, const std::string& arg, const Startup& enums) {
    auto it = std::lower_bound(enums.services.begin(), enums.services.end(), arg);
    if (it == enums.services.end() || *it != arg) return kNoArg;
    if (kind == ArgKind::Buildable &&
        !std::binary_search(enums.buildable.begin(), enums.buildable.end(), arg)) {
        return kNoArg;
    }
    return static_cast<std::uint16_t>(it - enums.services.begin());
}

// The first rule a well-formed body breaks, or None.
ReasonCode first_refusal(std::string_view name_verb, const BodyFields& f, const Verdict& v,
                         const Startup& enums) {
    if (f.unknown_key) return ReasonCode::UnknownKey;
    if (f.non_string_value) return ReasonCode::NotAString;
    if (!f.verb) return ReasonCode::MissingVerb;
    if (!f.requested_at) return ReasonCode::MissingRequestedAt;

    // The hardcoded deny list comes first of the verb rules, and applies to
    // the verb in the name as well as in the body: an attempt at `exec` is
    // recorded as that, never masked as a mere name/body mismatch or an
    // unknown verb.
    if (is_hardcoded_deny(*f.verb) || is_hardcoded_deny(name_verb)) {
        return ReasonCode::HardcodedDeny;
    }
    if (!v.verb) return ReasonCode::UnknownVerb;
    // After the allowlist, so a mismatch is only reported between two verbs
    // the bridge knows (an unknown body verb says "unknown verb").
    if (name_verb != *f.verb) return ReasonCode::VerbMismatch;

    const ArgKind kind = verb_arg_kind(*v.verb);
    if (kind == ArgKind::None) {
        if (f.arg) return ReasonCode::ArgForbidden;
    } else {
        if (!f.arg) return ReasonCode::ArgRequired;
        if (!is_valid_arg_shape(*f.arg)) return ReasonCode::ArgShape;
        if (v.arg_index == kNoArg) {
            const bool is_service =
                std::binary_search(enums.services.begin(), enums.services.end(), *f.arg);
            return kind == ArgKind::Buildable && is_service ? ReasonCode::ArgNotBuildable
                                                            : ReasonCode::ArgNotAService;
        }
    }
    // The window keys: logs only, each exactly as docs/PROTOCOL.md spells it.
    if ((f.lines || f.since) && *v.verb != Verb::Logs) return ReasonCode::OptionForbidden;
    if (f.lines && !parse_lines(*f.lines)) return ReasonCode::BadLines;
    if (f.since && !parse_cursor(*f.since)) return ReasonCode::BadSince;
    if (v.requested_at == kNoTime) return ReasonCode::BadRequestedAt;
    return ReasonCode::None;
}

}  // namespace

Verdict validate(std::string_view basename, std::span<const std::uint8_t> body,
                 const Startup& enums) {
    const std::optional<std::string_view> name_verb = request_name_verb(basename);
    if (!name_verb) return quarantine(ReasonCode::NameSchema);
    if (body.size() > kMaxBody) return quarantine(ReasonCode::BodyTooLarge);

    Verdict v;
    v.outcome = Outcome::Deny;
    // A body of only whitespace ("\n" from `echo "$(jq ...)"`) is the same
    // client bug as an empty file and gets the same clear answer; it carries
    // nothing worth keeping as evidence.
    if (is_blank(body)) {
        v.reason = ReasonCode::EmptyBody;
        return v;
    }

    BodyScan scan = scan_body(body);
    if (scan.malformed != ReasonCode::None) return quarantine(scan.malformed);
    const BodyFields& f = scan.fields;

    // What the body names is reported whatever rule it breaks, each field on
    // its own: the verb if it is one of the table, the arg if it is a member
    // of that verb's enumeration, the time if it parses.
    if (f.verb) v.verb = verb_from_name(*f.verb);
    if (v.verb && f.arg && verb_arg_kind(*v.verb) != ArgKind::None) {
        v.arg_index = arg_index(verb_arg_kind(*v.verb), *f.arg, enums);
    }
    if (f.requested_at) v.requested_at = parse_requested_at(*f.requested_at);

    v.reason = first_refusal(*name_verb, f, v, enums);
    if (v.reason != ReasonCode::None) return v;
    v.outcome = Outcome::Accept;
    // Only an accepted logs request carries a window (ipc/wire_executor.cpp checks).
    if (f.lines) v.window.lines = *parse_lines(*f.lines);
    if (f.since) {
        const LogCursor since = *parse_cursor(*f.since);
        v.window.since_ns = since.ns;
        v.window.since_seen = since.seen;
    }
    return v;
}

}  // namespace hb::parser
