// The one table of human text for reason codes, and which codes the parser
// may put in a verdict. Everything else in hostbridge refers to reasons by
// their code only.
#include "ipc/wire.hpp"

namespace hb {

std::string_view reason_text(ReasonCode code) {
    switch (code) {
        case ReasonCode::None:
            return "";
        case ReasonCode::NameSchema:
            return "request name does not match the schema";
        case ReasonCode::BodyTooLarge:
            return "request body is larger than 4096 bytes";
        case ReasonCode::InvalidUtf8:
            return "request body is not valid UTF-8";
        case ReasonCode::NulByte:
            return "request body contains a NUL byte";
        case ReasonCode::ByteOrderMark:
            return "request body starts with a byte-order mark";
        case ReasonCode::JsonSyntax:
            return "request body is not well-formed JSON";
        case ReasonCode::TrailingBytes:
            return "request body has bytes after the JSON object";
        case ReasonCode::NotAnObject:
            return "request body is not a JSON object";
        case ReasonCode::DuplicateKey:
            return "request body has a duplicate key";
        case ReasonCode::EmptyBody:
            return "empty request body";
        case ReasonCode::UnknownKey:
            return "request has an unknown key";
        case ReasonCode::MissingVerb:
            return "request has no verb";
        case ReasonCode::MissingRequestedAt:
            return "request has no requested_at";
        case ReasonCode::NotAString:
            return "a request value is not a string";
        case ReasonCode::VerbMismatch:
            return "verb in the name does not match the body";
        case ReasonCode::HardcodedDeny:
            return "verb is never allowed";
        case ReasonCode::UnknownVerb:
            return "unknown verb";
        case ReasonCode::ArgRequired:
            return "verb needs an arg";
        case ReasonCode::ArgForbidden:
            return "verb takes no arg";
        case ReasonCode::ArgShape:
            return "arg has an invalid shape";
        case ReasonCode::ArgNotAService:
            return "arg is not a known service";
        case ReasonCode::ArgNotBuildable:
            return "arg is not a buildable service";
        case ReasonCode::BadRequestedAt:
            return "requested_at is not a valid UTC time";
        case ReasonCode::NotRegularFile:
            return "request is not a regular file";
        case ReasonCode::TooManyLinks:
            return "request file has more than one link";
        case ReasonCode::Unreadable:
            return "request file cannot be read";
        case ReasonCode::ParserFailure:
            return "parser failure";
        case ReasonCode::NameAlreadyUsed:
            return "request name already used";
        case ReasonCode::Expired:
            return "request expired";
        case ReasonCode::InFuture:
            return "requested_at is too far in the future";
        case ReasonCode::PolicyDeny:
            return "verb is denied by policy";
        case ReasonCode::JoinNetworkNotConfigured:
            return "join-network is not configured";
        case ReasonCode::NotSupportedByCompose:
            return "not supported by the compose backend";
        case ReasonCode::IntegrityGate:
            return "integrity gate";
        case ReasonCode::RateLimited:
            return "rate limited";
        case ReasonCode::Timeout:
            return "timeout";
        case ReasonCode::SpawnFailed:
            return "command could not be started";
        case ReasonCode::Interrupted:
            return "interrupted";
        case ReasonCode::AuditUnavailable:
            return "audit log cannot be written";
        case ReasonCode::Stuck:
            return "request could not be moved out of requests/";
        case ReasonCode::DryRun:
            return "dry run";
    }
    return "unknown reason";  // only for a value outside the enum
}

bool reason_valid_for_parser(ReasonCode code, Outcome outcome) {
    switch (code) {
        case ReasonCode::None:
            return outcome == Outcome::Accept;
        case ReasonCode::NameSchema:
        case ReasonCode::BodyTooLarge:
        case ReasonCode::InvalidUtf8:
        case ReasonCode::NulByte:
        case ReasonCode::ByteOrderMark:
        case ReasonCode::JsonSyntax:
        case ReasonCode::TrailingBytes:
        case ReasonCode::NotAnObject:
        case ReasonCode::DuplicateKey:
            return outcome == Outcome::Quarantine;
        case ReasonCode::EmptyBody:
        case ReasonCode::UnknownKey:
        case ReasonCode::MissingVerb:
        case ReasonCode::MissingRequestedAt:
        case ReasonCode::NotAString:
        case ReasonCode::VerbMismatch:
        case ReasonCode::HardcodedDeny:
        case ReasonCode::UnknownVerb:
        case ReasonCode::ArgRequired:
        case ReasonCode::ArgForbidden:
        case ReasonCode::ArgShape:
        case ReasonCode::ArgNotAService:
        case ReasonCode::ArgNotBuildable:
        case ReasonCode::BadRequestedAt:
            return outcome == Outcome::Deny;
        // Executor-only codes never come from the parser. Listed, not
        // defaulted, so a new code forces a decision here (-Wswitch).
        case ReasonCode::NotRegularFile:
        case ReasonCode::TooManyLinks:
        case ReasonCode::Unreadable:
        case ReasonCode::ParserFailure:
        case ReasonCode::NameAlreadyUsed:
        case ReasonCode::Expired:
        case ReasonCode::InFuture:
        case ReasonCode::PolicyDeny:
        case ReasonCode::JoinNetworkNotConfigured:
        case ReasonCode::NotSupportedByCompose:
        case ReasonCode::IntegrityGate:
        case ReasonCode::RateLimited:
        case ReasonCode::Timeout:
        case ReasonCode::SpawnFailed:
        case ReasonCode::Interrupted:
        case ReasonCode::AuditUnavailable:
        case ReasonCode::Stuck:
        case ReasonCode::DryRun:
            return false;
    }
    return false;  // a value outside the enum
}

}  // namespace hb
