// The build-input screen's vocabulary and its two fixed-size messages.
//
// The executor starts `hostbridge-parser --screen` (locked down exactly as
// the request parser, parser/main.cpp) and sends one ScreenRequest per file
// with the file's fd attached; the screen answers one ScreenAnswer: a
// reason, a flag and a line number, never agent text. The executor
// bounds-checks every field before it believes it (executor/screen_client.cpp).
//
//   ScreenRequest (8 bytes):  0 u32 magic "HBS1"   4 u32 seq
//   ScreenAnswer (16 bytes):  0 u32 magic   4 u32 seq   8 u32 line
//                            12 u8 reason  13 u8 flag  14 u16 zero
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "ipc/result.hpp"

namespace hb {

// A Containerfile is read whole; anything larger is refused unread.
inline constexpr std::size_t kMaxContainerfileBytes = 1 << 20;

// The screen's vocabulary, read by parser/containerfile_screen.cpp (which
// decides) and by the executor (which bounds-checks and prints).

// Why a Containerfile is refused. Wire values fixed (they cross a socket as
// one byte); 0 = accepted. Append only.
enum class ScreenReason : std::uint8_t {
    None = 0,
    TooLarge = 1,  // over kMaxContainerfileBytes
    // NUL, \r (so CRLF too), another C0 or C1 control but \t and \n, DEL, a
    // Unicode space other than ' ' and \t, or invalid UTF-8.
    BadBytes = 2,
    UnknownInstruction = 3,  // not one of the 18 instructions (ASCII case-insensitive)
    RunFlagNotMount = 4,     // RUN takes only --mount
    MountNotCache = 5,       // type other than cache, or none (buildah's default is bind)
    // A --mount key other than type, target, sharing (id= climbs out: CVE-2024-9675).
    MountKeyNotAllowed = 6,
    MountTargetNotAbsolute = 7,  // target= missing, empty or relative
    MountSharingValue = 8,       // sharing not shared|private|locked
    DollarInFlag = 9,            // ARG/ENV are substituted inside flags
    RemoteSource = 10,           // ADD of a URL or git source (fetched on the host's network)
    Heredoc = 11,                // <<WORD: buildah 1.28 parses its body lines as instructions
    FlagNotAllowed = 12,         // a flag this screen does not know for that instruction
    // Quotes, backslashes, backticks, non-ASCII or an empty value in a flag
    // word, no =value, a --mount value that does not split cleanly.
    OddFlagSyntax = 13,
    NoFrom = 14,            // an instruction other than ARG before the first FROM
    LineTooLong = 15,       // a physical line over kMaxContainerfileLineBytes
    BadDirective = 16,      // `# escape=` naming neither \ nor `, or repeated on line 2
    UnclearAddSource = 17,  // $, quotes or backslashes in ADD's sources (they could spell a URL)
    BadOnbuild = 18,        // ONBUILD of nothing, of ONBUILD/FROM/MAINTAINER, or ending in '\'
    // FROM or COPY --from naming a transport that reads the host (oci:, dir:,
    // docker-archive:...), or with $, quotes, backticks or backslashes anywhere.
    ImageTransport = 19,
    // No FROM at all: empty, only comments and blank lines, or only ARGs
    // (the builder fails with "no contents" or ErrNoFROM).
    NoStage = 20,
    // A --mount that passes every check above, a clean type=cache included:
    // buildah keeps the cache on the host and follows links a step plants in
    // it, so no mount of a build step is confined (SECURITY.md, "Two postures").
    MountRefused = 21,
};
inline constexpr ScreenReason kLastScreenReason = ScreenReason::MountRefused;

// Which flag or --mount key a refusal is about. Wire values are the order
// (None = 0); append only.
enum class ScreenFlag : std::uint8_t {
    None = 0,
    Mount,
    Network,
    Security,
    From,
    Chown,
    Chmod,
    Link,
    Platform,
    Keep,  // --keep-git-dir
    Interval,
    Timeout,
    StartPeriod,
    Retries,
    MountType,
    MountTarget,
    MountSharing,
    MountId,
    MountSource,  // source= and src=
    MountFrom,
    MountRw,        // rw and readwrite
    MountReadonly,  // readonly and ro
    MountMode,
    MountUid,
    MountGid,
    MountSize,
    MountRequired,
    MountOther,  // any other key, dst= and destination= included
    Other,       // any other flag
};
inline constexpr ScreenFlag kLastScreenFlag = ScreenFlag::Other;

struct ScreenVerdict {
    ScreenReason reason = ScreenReason::None;  // None: accepted
    // 1-based physical line where the refused instruction starts (for BadBytes
    // and LineTooLong: the line of the offending byte); 0 when accepted or
    // for TooLarge.
    std::uint32_t line = 0;
    ScreenFlag flag = ScreenFlag::None;  // which flag or mount key, when the reason is about one

    bool operator==(const ScreenVerdict&) const = default;
};

// "--mount", "id=", ... for messages; "" for None.
std::string_view screen_flag_name(ScreenFlag flag);
// A short fixed sentence, e.g. "RUN --mount must say type=cache ...".
std::string_view screen_reason_text(ScreenReason reason);

inline constexpr std::uint32_t kScreenMagic = 0x48425331;  // "HBS1"
inline constexpr std::size_t kScreenRequestSize = 8;
inline constexpr std::size_t kScreenAnswerSize = 16;
// Lines past this cannot come from a file of kMaxContainerfileBytes.
inline constexpr std::uint32_t kMaxScreenLine = kMaxContainerfileBytes + 1;

std::array<std::uint8_t, kScreenRequestSize> encode_screen_request(std::uint32_t seq);
Result<std::uint32_t> decode_screen_request(std::span<const std::uint8_t> bytes);

struct ScreenAnswer {
    std::uint32_t seq = 0;
    ScreenVerdict verdict;
};
std::array<std::uint8_t, kScreenAnswerSize> encode_screen_answer(const ScreenAnswer& answer);
// Refuses a wrong size or magic, an enum value outside its range, a line
// past kMaxScreenLine, a refusal without a line where one is required, and
// an acceptance that carries a flag or a line.
Result<ScreenAnswer> decode_screen_answer(std::span<const std::uint8_t> bytes);

}  // namespace hb
