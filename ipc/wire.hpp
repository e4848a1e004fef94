// The whole vocabulary shared by the parser and the executor, and the three
// fixed-size messages that cross the socketpair between them.
//
// Executor -> parser: one StartupMessage (right after the parser locked
// itself down), then for each request one RequestMessage with the request's
// fd attached (SCM_RIGHTS). Parser -> executor: one VerdictMessage per
// request. No free text ever crosses back: a verdict is a handful of small
// integers that the executor bounds-checks before it believes any of them.
//
// The socket is SOCK_SEQPACKET, so every message arrives whole or not at all.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"
#include "ipc/verbs.hpp"

namespace hb {

// The shape of an arg and of a service name: ^[a-z][a-z0-9_-]*$, at most
// kMaxServiceName (64) bytes.
bool is_valid_arg_shape(std::string_view arg);

// The project slug, carried by every host-global name so that two projects
// never share a bridge: ^[a-z0-9][a-z0-9-]{0,62}$.
bool is_valid_slug(std::string_view slug);

// Container and network names as podman and docker accept them, at most
// kMaxContainerName bytes; the first character being alphanumeric also
// keeps them from reading as an option.
inline constexpr std::size_t kMaxContainerName = 255;
bool is_valid_container_name(std::string_view name);

// What the parser decided about one request.
enum class Outcome : std::uint8_t {
    Accept = 1,      // well-formed, allowed verb, arg in its enumeration
    Deny = 2,        // well-formed but breaks a rule: answered `denied`, archived
    Quarantine = 3,  // too malformed to classify: moved to quarantine/
};

// One code per refusal, on either side of the socket. Human text lives in
// exactly one table (reason_text in reasons.cpp). Wire values are fixed.
enum class ReasonCode : std::uint16_t {
    None = 0,
    // --- parser: quarantine (malformed) ---
    NameSchema = 1,     // basename does not match the schema
    BodyTooLarge = 2,   // over 4096 bytes
    InvalidUtf8 = 3,    // body is not valid UTF-8
    NulByte = 4,        // a NUL byte in the body
    ByteOrderMark = 5,  // leading UTF-8 BOM
    JsonSyntax = 6,     // not well-formed JSON
    TrailingBytes = 7,  // bytes after the object (beyond one final newline)
    NotAnObject = 8,    // top-level value is not an object
    DuplicateKey = 9,   // a key appears twice
    // --- parser: deny (well-formed, refused) ---
    EmptyBody = 20,  // "empty request body"
    UnknownKey = 21,
    MissingVerb = 22,
    MissingRequestedAt = 23,
    NotAString = 24,     // a value is not a string
    VerbMismatch = 25,   // verb in name != verb in body
    HardcodedDeny = 26,  // reset-db, exec, shell*
    UnknownVerb = 27,
    ArgRequired = 28,
    ArgForbidden = 29,
    ArgShape = 30,
    ArgNotAService = 31,
    ArgNotBuildable = 32,
    BadRequestedAt = 33,
    OptionForbidden = 34,  // `lines` or `since` on a verb other than logs
    BadLines = 35,
    BadSince = 36,
    // --- executor ---
    NotRegularFile = 40,   // quarantine: FIFO, symlink, device, directory...
    TooManyLinks = 41,     // quarantine: hard link
    Unreadable = 42,       // quarantine: the host cannot read it
    ParserFailure = 43,    // parser crashed, hung or answered garbage
    NameAlreadyUsed = 44,  // replay: name already in archive/
    Expired = 45,          // older than the TTL
    InFuture = 46,         // more than the skew in the future
    PolicyDeny = 47,       // MODE_<verb>=deny, or missing/unknown
    JoinNetworkNotConfigured = 48,
    NotSupportedByCompose = 49,
    IntegrityGate = 50,       // detail: which file, what changed
    RateLimited = 51,         // detail: retry in N s
    Timeout = 52,             // detail: after N s
    SpawnFailed = 53,         // could not start the command
    Interrupted = 54,         // found in processing/ after a crashed drain
    AuditUnavailable = 55,    // the audit log cannot be written: fail closed
    Stuck = 56,               // could not be moved out of requests/
    DryRun = 57,              // MODE_<verb>=dry-run: detail says what would have run
    AwaitingApproval = 58,    // MODE_<verb>=ask: held for a person (state pending)
    DeniedByPerson = 59,      // `hostbridge deny`
    TooManyHeld = 60,         // the held requests are at their limit
    ChangedSinceHeld = 61,    // a re-install or approve since it was held
    BuildNotConfigured = 62,  // bridge.json records no snapshot build for the service
    BuildInputRefused = 63,   // detail: the snapshot or the Containerfile screen said why
    WindowNotSupported = 64,  // `lines`/`since` on an install whose logs cannot take them
    UntestedCompose = 65,     // docker compose v2: no test runs its rows (not in Debian 12)
};

// The fixed text of a reason code, e.g. "empty request body". Codes that
// carry a detail (rate limit, timeout, integrity gate) are formatted by the
// executor around this text.
std::string_view reason_text(ReasonCode code);
// True for every code the parser may legitimately put in a verdict with the
// given outcome. The executor rejects any other combination as garbage.
bool reason_valid_for_parser(ReasonCode code, Outcome outcome);

inline constexpr std::uint32_t kWireMagic = 0x48425231;  // "HBR1"
inline constexpr std::uint16_t kWireVersion = 2;
inline constexpr std::size_t kMaxServices = 64;
inline constexpr std::size_t kMaxServiceName = 64;
inline constexpr std::size_t kMaxBasename = 255;
inline constexpr std::size_t kMaxBody = 4096;
inline constexpr std::uint16_t kNoArg = 0xFFFF;
inline constexpr std::int64_t kNoTime = INT64_MIN;

// Executor -> parser, once, after lockdown: the two enumerations of this
// install. `buildable` is a subset of `services`, sent as a bit mask over
// the sorted service list.
struct Startup {
    std::vector<std::string> services;   // sorted, unique, each a valid arg
    std::vector<std::string> buildable;  // sorted, unique, subset of services
};
inline constexpr std::size_t kStartupSize = 16 + kMaxServices * (1 + kMaxServiceName);
std::vector<std::uint8_t> encode_startup(const Startup& startup);
Result<Startup> decode_startup(std::span<const std::uint8_t> bytes);

// Executor -> parser, per request; the request's fd travels beside it.
struct Request {
    std::uint32_t seq = 0;
    std::string basename;  // raw bytes from the directory entry, 1..255 bytes
};
inline constexpr std::size_t kRequestSize = 12 + kMaxBasename;
std::vector<std::uint8_t> encode_request(const Request& request);
Result<Request> decode_request(std::span<const std::uint8_t> bytes);

// `logs` only: which of the service's log lines the agent asks for
// (docs/PROTOCOL.md, "Following logs"). Nothing given: the fixed row.
inline constexpr std::uint16_t kMaxLogLines = 1000;
inline constexpr std::uint32_t kMaxCursorSeen = 1000000;
struct LogWindow {
    std::uint16_t lines = 0;          // 1..kMaxLogLines, or 0: not given
    std::int64_t since_ns = kNoTime;  // the cursor's instant (ns since the epoch, >= 0), or kNoTime
    std::uint32_t since_seen = 0;     // lines at that instant already returned; 0 without since
    [[nodiscard]] bool given() const { return lines != 0 || since_ns != kNoTime; }
    bool operator==(const LogWindow&) const = default;
};
// A window's own consistency (ranges, `seen` only with `since`), checked by
// the decoder and by the held record's reader alike.
bool is_valid_log_window(const LogWindow& window);

// Parser -> executor, per request. Everything the executor will ever learn
// about a request's content.
struct Verdict {
    std::uint32_t seq = 0;  // echoes Request::seq
    Outcome outcome = Outcome::Quarantine;
    std::optional<Verb> verb;          // set only for a verb of the table
    std::uint16_t arg_index = kNoArg;  // index into services, or kNoArg
    ReasonCode reason = ReasonCode::None;
    std::int64_t requested_at = kNoTime;  // seconds since the epoch, or kNoTime
    LogWindow window;                     // given only on an accepted `logs`
};
inline constexpr std::size_t kVerdictSize = 40;
std::array<std::uint8_t, kVerdictSize> encode_verdict(const Verdict& verdict);
// Strict: wrong size, magic, version, an out-of-range enum, an arg index
// outside [0, service_count) or an inconsistent combination is an error.
Result<Verdict> decode_verdict(std::span<const std::uint8_t> bytes, std::size_t service_count);

}  // namespace hb
