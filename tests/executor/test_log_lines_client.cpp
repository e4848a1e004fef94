// engines/podman/log_lines_client.hpp with the real sandboxed parser: a
// windowed `logs`' lines as the executor reads them from the ranges the
// sandbox answered are byte for byte the pure choice's
// (tests/parser/test_log_lines.cpp), and a hostile answer is refused.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <random>
#include <string>

#include "engines/podman/log_lines_client.hpp"
#include "ipc/rfc3339.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"
#include "parser/log_lines.hpp"

namespace hb::exec {
namespace {

constexpr std::int64_t kT1 = 1796245045602731173;

std::string line(std::int64_t ns, const std::string& text) {
    return rfc3339_utc_ns(ns) + " " + text + "\n";
}

// The engine's output in a memfd, as follow_log.cpp leaves it.
struct File {
    UniqueFd fd{::memfd_create("test-log", MFD_CLOEXEC)};
    LogView view;
    File(const std::string& bytes, bool cut) {
        EXPECT_TRUE(sys::write_all(fd.get(), bytes));
        view = LogView{fd.get(), bytes.size(), cut};
    }
};

void expect_same(const std::string& output, bool cut, const LogWindow& window, std::size_t budget) {
    SCOPED_TRACE(output.substr(0, 200));
    File file(output, cut);
    auto got = select_in_sandbox(HB_PARSER_BIN, file.view, window, budget);
    ASSERT_TRUE(got) << got.error().message;
    const parser::LogSelection want = parser::select_lines(output, cut, window, budget);
    EXPECT_EQ(got->text, parser::selected_text(output, want));
    EXPECT_EQ(got->cursor, want.cursor);
    EXPECT_EQ(got->more, want.more);
    EXPECT_EQ(got->continued, want.continued);
    EXPECT_EQ(got->group, want.group_first);
    std::string untimed;
    for (const LogRange& r : want.untimed) untimed += output.substr(r.start, r.end - r.start);
    EXPECT_EQ(got->untimed, untimed);
}

TEST(LogLinesClient, TheSandboxedChoiceIsThePureOne) {
    const std::string joined = rfc3339_utc_ns(kT1) + " abc" + rfc3339_utc_ns(kT1 + 7) + " eol\n";
    const std::string pieces = joined + line(kT1 + 7, "x") + line(kT1 + 7, "y");
    const std::string warned = "WARN[0000] the engine's own\n" + line(kT1, "a") + "WARN again\n" +
                               line(kT1 + 1, "b") + line(kT1 + 2, "c");
    const std::string huge = rfc3339_utc_ns(kT1) + " " + std::string(100000, '#');
    const std::string big = line(kT1, std::string(40000, 'x')) + line(kT1 + 1, "next");
    expect_same(pieces, false, LogWindow{2, 0, 0}, kMaxLogAnswerBytes);
    expect_same(warned, false, LogWindow{0, 0, 0}, kMaxLogAnswerBytes);
    expect_same(warned, false, LogWindow{2, kNoTime, 0}, kMaxLogAnswerBytes);
    expect_same(warned, false, LogWindow{0, kT1, 1}, 40);
    expect_same(huge, true, LogWindow{0, 0, 0}, kMaxLogAnswerBytes);
    expect_same(huge, true, LogWindow{0, kT1, 1}, kMaxLogAnswerBytes);
    expect_same(big, false, LogWindow{0, 0, 0}, kMaxLogAnswerBytes);
    expect_same(big, false, LogWindow{1, kNoTime, 0}, 100);
    expect_same("", false, LogWindow{0, kT1, 3}, kMaxLogAnswerBytes);
    // Random logs of shared stamps and engine lines, from random cursors.
    std::mt19937 random(20261207);
    for (int round = 0; round < 20; ++round) {
        std::string out;
        std::int64_t now = kT1;
        for (int i = 0; i < 200; ++i) {
            now += random() % 3;
            out += random() % 20 == 0 ? "WARN x\n" : line(now, "w" + std::to_string(i));
        }
        const LogWindow w{static_cast<std::uint16_t>(random() % 30),
                          random() % 2 ? kNoTime : kT1 + static_cast<std::int64_t>(random() % 50),
                          0};
        expect_same(out, random() % 2 == 0,
                    w.lines == 0 && w.since_ns == kNoTime ? LogWindow{1, kNoTime, 0} : w,
                    40 + random() % 2000);
    }
}

TEST(LogLinesClient, PiecesAreCountedInTheSandbox) {
    const std::string joined = rfc3339_utc_ns(kT1) + " abc" + rfc3339_utc_ns(kT1 + 7) + " eol\n";
    File a(joined + line(kT1 + 7, "x") + line(kT1 + 7, "y"), false);
    auto s = select_in_sandbox(HB_PARSER_BIN, a.view, LogWindow{2, 0, 0});
    ASSERT_TRUE(s) << s.error().message;
    ASSERT_TRUE(s->continued);
    File b(rfc3339_utc_ns(kT1 + 7) + "  eol\n" + line(kT1 + 7, "x") + line(kT1 + 7, "y"), false);
    auto pieces = pieces_in_sandbox(HB_PARSER_BIN, a.view, s->group, b.view, kT1 + 7);
    ASSERT_TRUE(pieces) << pieces.error().message;
    EXPECT_EQ(*pieces, std::optional<std::uint32_t>(1));
    File other(line(kT1 + 7, "elsewhere"), false);
    pieces = pieces_in_sandbox(HB_PARSER_BIN, a.view, s->group, other.view, kT1 + 7);
    ASSERT_TRUE(pieces) << pieces.error().message;
    EXPECT_FALSE(*pieces);
}

// A reader that was taken over answers what it likes: a range past the
// file's end, a cursor that moves back, bytes that are no answer. Each
// fails the request with a sentence; nothing is read from the file.
TEST(LogLinesClient, AHostileAnswerIsRefused) {
    File file(line(kT1, "a") + line(kT1 + 1, "b"), false);
    const std::string dir = HB_FAKE_PARSER_DIR;
    const LogWindow w{0, kT1, 1};
    for (const char* mode : {"logpast", "logback", "garbage"}) {
        SCOPED_TRACE(mode);
        auto got = select_in_sandbox(dir + "/fake-parser-" + mode, file.view, w);
        ASSERT_FALSE(got);
        EXPECT_NE(got.error().message.find("log-line reader"), std::string::npos)
            << got.error().message;
    }
}

}  // namespace
}  // namespace hb::exec
