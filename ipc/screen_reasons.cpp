// The one table of the screen's words (ipc/screen_wire.hpp): what the
// executor prints around a refusal, "Containerfile line N: --mount: ...".
#include <string_view>

#include "ipc/enum_names.hpp"
#include "ipc/screen_wire.hpp"

namespace hb {
namespace {

constexpr auto kReasonTexts = dense_names<kLastScreenReason>(
    {
        "accepted",
        "the Containerfile is larger than 1 MiB",
        "a NUL, a carriage return (CRLF line ends too), another control character, a Unicode "
        "space other than space and tab, or invalid UTF-8",
        "not an instruction this builder knows",
        "RUN takes only --mount",
        "RUN --mount must say type=cache (without a type, buildah binds the build context)",
        "RUN --mount=type=cache takes only target= and sharing= (id= and source= reach host "
        "directories)",
        "RUN --mount=type=cache needs target= with an absolute path",
        "sharing= must be shared, private or locked",
        "no $ in a flag: buildah substitutes ARG and ENV values inside flags",
        "ADD of a URL or git source is fetched on the host's network",
        "heredocs are refused: buildah reads their lines as instructions, BuildKit does not",
        "a flag this instruction does not take here",
        "a flag must be --name=value without quotes, backslashes, backticks or non-ASCII, and a "
        "--mount value key=value options split by commas",
        "an instruction other than ARG before the first FROM",
        "a line longer than 65535 bytes: buildah stops reading the file there without a word",
        "the escape directive must be the first line, once, and name \\ or `",
        "ADD sources must be plain: no $, quotes or backslashes (they could spell a URL)",
        "ONBUILD must wrap one instruction other than ONBUILD, FROM or MAINTAINER, and not end "
        "in a backslash",
        "FROM and COPY --from take a registry image or a stage: no transport such as oci:, dir: "
        "or docker-archive: (they read the host), and no $, quotes, backticks or backslashes",
        "no FROM: the file is empty, or holds only comments, blank lines or ARGs",
        "RUN --mount is refused, type=cache too: buildah keeps the cache on the host and "
        "follows links a build step plants in it",
        "FROM and COPY --from may name only an earlier stage, scratch, an image this install "
        "builds or a base image the person listed (hostbridge install --base-image REF; "
        "docs/BUILDS.md)",
        "FROM must be FROM [--platform=P] IMAGE [AS NAME], a plain stage name",
        "no syntax directive: BuildKit runs the image it names as its frontend",
    },
    "unknown reason");

constexpr auto kFlagWords = dense_names<kLastScreenFlag>(
    {
        "(none)",         "--mount",   "--network",  "--security",       "--from",     "--chown",
        "--chmod",        "--link",    "--platform", "--keep-git-dir",   "--interval", "--timeout",
        "--start-period", "--retries", "type=",      "target=",          "sharing=",   "id=",
        "source=",        "from=",     "rw",         "readonly",         "mode=",      "uid=",
        "gid=",           "size=",     "required",   "a --mount option", "a flag",
    },
    "unknown flag");

}  // namespace

std::string_view screen_flag_name(ScreenFlag flag) {
    if (flag == ScreenFlag::None) return {};
    return name_of(kFlagWords, flag);
}

std::string_view screen_reason_text(ScreenReason reason) {
    return name_of(kReasonTexts, reason);
}

}  // namespace hb
