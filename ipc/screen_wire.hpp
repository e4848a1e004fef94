// The build-input screen's vocabulary and its two fixed-size messages.
//
// The executor starts `hostbridge-parser --screen` (locked down exactly as
// the request parser, parser/main.cpp) and sends one ScreenRequest per file
// with the file's fd attached; the screen answers one ScreenAnswer: a
// reason, a flag and a line number, never agent text. The executor
// bounds-checks every field before it believes it (engines/build_input/screen_client.cpp).
// The request carries the images a FROM or COPY --from may name, host
// text from bridge.json, canonical (ipc/image_ref.hpp), sorted and unique.
//
//   ScreenRequest (<= kScreenRequestMax bytes):
//                            0 u32 magic "HBS2"   4 u32 seq   8 u8 image count
//                            9 per image: u8 length (1..255), bytes
//   ScreenAnswer (16 bytes):  0 u32 magic   4 u32 seq   8 u32 line
//                            12 u8 reason  13 u8 flag  14 u16 zero
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/image_ref.hpp"
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
    Heredoc = 11,  // <<WORD: buildah 1.28 reads its body lines as instructions, BuildKit does not
    FlagNotAllowed = 12,  // a flag this screen does not know for that instruction
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
    // FROM or COPY --from naming none of: an earlier stage (its AS name or
    // index), scratch, an image the request allows (ipc/image_ref.hpp), e.g.
    // a person's private image whose files the build log would show.
    ImageNotAllowed = 22,
    // FROM that is not `FROM [--platform=P] IMAGE [AS NAME]`, or a stage name
    // with $, quotes, backticks or backslashes.
    BadFrom = 23,
    // BuildKit only: a `# syntax=` comment, which would run the image it
    // names as the Dockerfile frontend (a local image too).
    FrontendDirective = 24,
};
inline constexpr ScreenReason kLastScreenReason = ScreenReason::FrontendDirective;

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

// "HBS2" since the request carries images; the answer keeps its layout.
inline constexpr std::uint32_t kScreenMagic = 0x48425332;
// A person's base images (bridge.json allows 64) and the services' tags.
inline constexpr std::size_t kMaxScreenImages = 128;
inline constexpr std::size_t kScreenRequestMax = 9 + kMaxScreenImages * (1 + kMaxImageRefBytes);
inline constexpr std::size_t kScreenAnswerSize = 16;
// Lines past this cannot come from a file of kMaxContainerfileBytes.
inline constexpr std::uint32_t kMaxScreenLine = kMaxContainerfileBytes + 1;

struct ScreenRequest {
    std::uint32_t seq = 0;
    std::vector<std::string> images;  // canonical, sorted, unique

    bool operator==(const ScreenRequest&) const = default;
};
// The one rule both ends hold the list to: it is a set, in one spelling.
// Refuses more than kMaxScreenImages images, and one that is empty, longer
// than kMaxImageRefBytes, not canonical, out of order or repeated.
Result<void> check_screen_images(const std::vector<std::string>& images);
// Refuses what check_screen_images refuses.
Result<std::vector<std::uint8_t>> encode_screen_request(const ScreenRequest& request);
// Refuses a wrong magic, a short or long message, a count past
// kMaxScreenImages, an empty or non-canonical image, images out of order or
// repeated, and bytes after the last image.
Result<ScreenRequest> decode_screen_request(std::span<const std::uint8_t> bytes);

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
