// The red team's round 4 screen cases (data/screen-cases/, the files
// exactly as they wrote them): each file's verdict, reason, line and flag,
// pinned in one table. The red team's re-screen-diff.sh required the cases
// of kRedTeamMustRefuse refused; 24-cache-nested, accepted then, was the
// round's escape (a clean type=cache planting a link for the next mount)
// and is refused since every RUN --mount is. What the accepted ones do on
// the real builder is tests/e2e/screen_cases.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/image_ref.hpp"
#include "parser/containerfile_screen.hpp"

namespace hb::parser {

namespace {

using R = ScreenReason;
using F = ScreenFlag;

struct ScreenCase {
    std::string_view file;
    ScreenVerdict want;
};

// Accepted rows are {R::None, 0, F::None}. Why each verdict, briefly:
constexpr ScreenCase kScreenCases[] = {
    // `# escape=`` makes the backtick the continuation: the two flags are one RUN.
    {"01-escape-backtick", {R::MountRefused, 3, F::Mount}},
    // The backtick is inside the --mount value, not at the line's end.
    {"02-syntax-then-escape", {R::OddFlagSyntax, 4, F::Mount}},
    // The BOM is skipped, as buildah does; the bind mount is what is refused.
    {"03-bom", {R::MountNotCache, 2, F::MountType}},
    {"04-crlf", {R::BadBytes, 1, F::None}},
    // A comment and a blank line inside the continuation do not end it.
    {"05-cont-comment", {R::MountRefused, 2, F::Mount}},
    {"06-lower", {R::MountRefused, 2, F::Mount}},
    {"07-json", {R::MountRefused, 2, F::Mount}},
    {"08-split-opt", {R::MountRefused, 2, F::Mount}},
    {"09-argsubst", {R::DollarInFlag, 3, F::Mount}},
    {"10-heredoc", {R::Heredoc, 2, F::None}},
    {"11-from-stage", {R::MountNotCache, 4, F::MountType}},
    {"12-cachefrom", {R::MountKeyNotAllowed, 2, F::MountFrom}},
    {"13-secret", {R::MountNotCache, 2, F::MountType}},
    {"14-ssh", {R::MountNotCache, 2, F::MountType}},
    {"15-nethost", {R::RunFlagNotMount, 2, F::Network}},
    // ONBUILD's trigger is screened as the instruction it names.
    {"16-onbuild", {R::MountNotCache, 2, F::MountType}},
    {"17-copyfrom-oci", {R::ImageTransport, 2, F::From}},
    {"18-add-url", {R::RemoteSource, 2, F::None}},
    // A second type= that says bind is refused as the bind it is.
    {"19-typecache-twice", {R::MountNotCache, 2, F::MountType}},
    {"20-dst", {R::MountKeyNotAllowed, 2, F::MountOther}},
    // `--` is a flag word with no name and no value.
    {"21-flag-dashdash", {R::OddFlagSyntax, 2, F::Other}},
    {"22-tab-flags", {R::MountRefused, 2, F::Mount}},
    // With ` as the escape, the trigger ends in a `\` that continues nothing.
    {"23-onbuild-escape", {R::BadOnbuild, 3, F::None}},
    {"24-cache-nested", {R::MountRefused, 2, F::Mount}},
    {"25-cache-root", {R::MountRefused, 2, F::Mount}},
    // An image on the host the install did not list (round 4 printed a
    // token baked into another project's): refused, naming the line.
    {"26-copy-from-image", {R::ImageNotAllowed, 2, F::From}},
    {"27-from-any", {R::ImageNotAllowed, 1, F::None}},
    {"28-volume-run", {R::None, 0, F::None}},
    // `# escape=` past line 1 is a comment, here inside a continuation.
    {"29-escape-in-cont", {R::MountRefused, 2, F::Mount}},
    {"30-lockedshare", {R::MountRefused, 2, F::Mount}},
    {"31-copy-chown", {R::None, 0, F::None}},
    {"32-add-archive", {R::None, 0, F::None}},
    {"33-healthcheck", {R::None, 0, F::None}},
    {"34-shell", {R::None, 0, F::None}},
    {"35-from-platform", {R::None, 0, F::None}},
    // --link: a flag the screen does not know for COPY.
    {"36-copy-link", {R::FlagNotAllowed, 2, F::Link}},
    // The RUN --mount line is a continuation of MAINTAINER (37) and LABEL,
    // across a blank line (38): words, not an instruction, to buildah too
    // (tests/e2e/screen_cases.sh shows no mount is made).
    {"37-maintainer-cont", {R::None, 0, F::None}},
    {"38-empty-cont-then-instr", {R::None, 0, F::None}},
};

// re-screen-diff.sh's MUST_REFUSE, and the round's escape.
constexpr std::string_view kRedTeamMustRefuse[] = {"01", "02", "03", "04", "05", "09", "10", "11",
                                                   "12", "13", "14", "15", "16", "17", "18", "19",
                                                   "20", "21", "22", "23", "36", "24"};

const std::string kCasesDir = std::string(HB_TEST_DATA) + "/screen-cases";

ScreenVerdict screen_case_file(std::string_view name) {
    std::ifstream in(kCasesDir + "/" + std::string(name), std::ios::binary);
    EXPECT_TRUE(in) << "cannot read " << kCasesDir << "/" << name;
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    // The red team's base image, as the person would list it
    // (`install --base-image`); any other image a case names is refused.
    static const std::vector<std::string> kAllowed = {"localhost/rabase:latest"};
    return screen_containerfile(bytes, kAllowed);
}

std::string show(const ScreenVerdict& v) {
    return "{reason " + std::to_string(static_cast<int>(v.reason)) + ", line " +
           std::to_string(v.line) + ", flag " + std::to_string(static_cast<int>(v.flag)) + " (" +
           std::string(screen_flag_name(v.flag)) + ")}";
}

TEST(ScreenCases, EachCaseHasItsVerdict) {
    for (const ScreenCase& c : kScreenCases) {
        const ScreenVerdict got = screen_case_file(c.file);
        EXPECT_EQ(got, c.want) << c.file << ": got " << show(got) << ", want " << show(c.want);
    }
}

// A case added to the directory without a row would go unchecked.
TEST(ScreenCases, TheTableListsEveryFileOnce) {
    std::set<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(kCasesDir))
        files.insert(entry.path().filename().string());
    std::set<std::string> rows;
    for (const ScreenCase& c : kScreenCases)
        EXPECT_TRUE(rows.insert(std::string(c.file)).second) << "two rows for " << c.file;
    EXPECT_EQ(files, rows);
    EXPECT_EQ(rows.size(), 38u);
}

// Held apart from the table, so that a row edited to "accepted" cannot
// quietly let one of them through.
TEST(ScreenCases, EveryCaseTheRedTeamRequiredRefusedIsRefused) {
    for (std::string_view number : kRedTeamMustRefuse) {
        const auto* row = std::find_if(
            std::begin(kScreenCases), std::end(kScreenCases),
            [&](const ScreenCase& c) { return c.file.substr(0, 3) == std::string(number) + "-"; });
        ASSERT_NE(row, std::end(kScreenCases)) << "no case " << number;
        const ScreenVerdict got = screen_case_file(row->file);
        EXPECT_NE(got.reason, R::None) << row->file << " is accepted";
        EXPECT_NE(got.line, 0u) << row->file;
    }
}

}  // namespace

}  // namespace hb::parser
