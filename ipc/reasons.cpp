// The one table of human text for reason codes, and which codes the parser
// may put in a verdict. Everything else in hostbridge refers to reasons by
// their code only.
#include "ipc/enum_names.hpp"
#include "ipc/wire.hpp"

namespace hb {

namespace {

constexpr NameTable<ReasonCode, 53> kReasonTexts = {
    {{
        {ReasonCode::None, ""},
        {ReasonCode::NameSchema, "request name does not match the schema"},
        {ReasonCode::BodyTooLarge, "request body is larger than 4096 bytes"},
        {ReasonCode::InvalidUtf8, "request body is not valid UTF-8"},
        {ReasonCode::NulByte, "request body contains a NUL byte"},
        {ReasonCode::ByteOrderMark, "request body starts with a byte-order mark"},
        {ReasonCode::JsonSyntax, "request body is not well-formed JSON"},
        {ReasonCode::TrailingBytes, "request body has bytes after the JSON object"},
        {ReasonCode::NotAnObject, "request body is not a JSON object"},
        {ReasonCode::DuplicateKey, "request body has a duplicate key"},
        {ReasonCode::EmptyBody, "empty request body"},
        {ReasonCode::UnknownKey, "request has an unknown key"},
        {ReasonCode::MissingVerb, "request has no verb"},
        {ReasonCode::MissingRequestedAt, "request has no requested_at"},
        {ReasonCode::NotAString, "a request value is not a string"},
        {ReasonCode::VerbMismatch, "verb in the name does not match the body"},
        {ReasonCode::HardcodedDeny, "verb is never allowed"},
        {ReasonCode::UnknownVerb, "unknown verb"},
        {ReasonCode::ArgRequired, "verb needs an arg"},
        {ReasonCode::ArgForbidden, "verb takes no arg"},
        {ReasonCode::ArgShape, "arg has an invalid shape"},
        {ReasonCode::ArgNotAService, "arg is not a known service"},
        {ReasonCode::ArgNotBuildable, "arg is not a buildable service"},
        {ReasonCode::BadRequestedAt, "requested_at is not a valid UTC time"},
        {ReasonCode::OptionForbidden, "lines and since are for logs only"},
        {ReasonCode::BadLines, "lines must be a number from 1 to 1000"},
        {ReasonCode::BadSince, "since must be a cursor that a logs answer returned"},
        {ReasonCode::NotRegularFile, "request is not a regular file"},
        {ReasonCode::TooManyLinks, "request file has more than one link"},
        {ReasonCode::Unreadable, "request file cannot be read"},
        {ReasonCode::ParserFailure, "parser failure"},
        {ReasonCode::NameAlreadyUsed, "request name already used"},
        {ReasonCode::Expired, "request expired"},
        {ReasonCode::InFuture, "requested_at is too far in the future"},
        {ReasonCode::PolicyDeny, "verb is denied by policy"},
        {ReasonCode::JoinNetworkNotConfigured, "join-network is not configured"},
        {ReasonCode::NotSupportedByCompose, "not supported by the compose backend"},
        {ReasonCode::IntegrityGate, "integrity gate"},
        {ReasonCode::RateLimited, "rate limited"},
        {ReasonCode::Timeout, "timeout"},
        {ReasonCode::SpawnFailed, "command could not be started"},
        {ReasonCode::Interrupted, "interrupted"},
        {ReasonCode::AuditUnavailable, "audit log cannot be written"},
        {ReasonCode::Stuck, "request could not be moved out of requests/"},
        {ReasonCode::DryRun, "dry run"},
        {ReasonCode::AwaitingApproval, "waiting for a person's approval on the host"},
        {ReasonCode::DeniedByPerson, "denied by a person on the host"},
        {ReasonCode::TooManyHeld, "too many requests are waiting for a person's approval"},
        {ReasonCode::ChangedSinceHeld, "the install changed since the request was held"},
        {ReasonCode::BuildNotConfigured,
         "this install records no snapshot build for the service: run `hostbridge upgrade` "
         "or install again"},
        {ReasonCode::BuildInputRefused, "build input refused"},
        {ReasonCode::WindowNotSupported,
         "this install's logs takes no lines or since (docs/COMPOSE.md, \"Following logs\")"},
        {ReasonCode::UntestedCompose,
         "not supported yet on docker compose: only through a docker engine user, and never "
         "down or join-network, which no test runs there (docs/DOCKER.md)"},
    }},
    "unknown reason"};

// Each code once: the codes are sparse, so no count checks the table.
constexpr bool each_code_once() {
    for (std::size_t i = 0; i < kReasonTexts.rows.size(); ++i) {
        for (std::size_t k = 0; k < i; ++k) {
            if (kReasonTexts.rows[k].value == kReasonTexts.rows[i].value) return false;
        }
    }
    return true;
}
static_assert(each_code_once());

}  // namespace

std::string_view reason_text(ReasonCode code) {
    return name_of(kReasonTexts, code);
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
        case ReasonCode::OptionForbidden:
        case ReasonCode::BadLines:
        case ReasonCode::BadSince:
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
        case ReasonCode::AwaitingApproval:
        case ReasonCode::DeniedByPerson:
        case ReasonCode::TooManyHeld:
        case ReasonCode::ChangedSinceHeld:
        case ReasonCode::BuildNotConfigured:
        case ReasonCode::BuildInputRefused:
        case ReasonCode::WindowNotSupported:
        case ReasonCode::UntestedCompose:
            return false;
    }
    return false;  // a value outside the enum
}

}  // namespace hb
