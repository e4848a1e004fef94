// parser/log_lines.hpp: which lines a windowed logs answers with, and the
// cursor after them, as the ranges the sandbox answers read back. The engine is emulated as
// podman 4.3 behaves (measured, docs/COMPOSE.md "Following logs"): `--since T` returns the lines
// stamped strictly after T, `--tail N` the last N; lines written in one go share a stamp.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ipc/rfc3339.hpp"
#include "parser/log_lines.hpp"

namespace hb::parser {
namespace {

constexpr std::int64_t kT1 = 1796245045602731173;  // 2026-12-02T20:57:25.602731173Z

std::string stamp(std::int64_t ns) {
    return rfc3339_utc_ns(ns);
}
std::string line(std::int64_t ns, const std::string& text) {
    return stamp(ns) + " " + text + "\n";
}

// A selection as the executor reads it: the ranges' bytes (and the cut
// note), the engine's own lines, the group line.
struct Chosen {
    std::string text;
    LogCursor cursor;
    bool more = false;
    bool continued = false;
    std::string group_first;
    std::string untimed;
};
Chosen choose(const std::string& output, bool cut, const LogWindow& window, std::size_t budget) {
    const LogSelection s = select_lines(output, cut, window, budget);
    Chosen c{selected_text(output, s), s.cursor, s.more, s.continued, {}, {}};
    const LogRange g = s.group_first;
    c.group_first = output.substr(g.start, g.end - g.start);
    for (const LogRange& r : s.untimed) c.untimed += output.substr(r.start, r.end - r.start);
    return c;
}

// Where a tail's view begins (engines/podman/follow_log.cpp): the stamp of
// the first complete line after 0:0, an unfinished one ignored.
std::int64_t oldest_stamp(const std::string& output) {
    return select_lines(output, false, LogWindow{1, 0, 0}, kMaxLogAnswerBytes).cursor.ns;
}

struct Engine {
    std::vector<std::pair<std::int64_t, std::string>> log;  // in the order written

    std::string since(const LogWindow& w) const {  // `logs --timestamps --since` (or none)
        std::string out;
        for (const auto& [ns, text] : log) {
            if (w.since_ns == 0 || ns > w.since_ns - 1) out += line(ns, text);
        }
        return out;
    }
    std::string tail(std::size_t n) const {
        std::string out;
        for (std::size_t i = log.size() > n ? log.size() - n : 0; i < log.size(); ++i) {
            out += line(log[i].first, log[i].second);
        }
        return out;
    }
};

TEST(LogLines, TheEnginesStampIsReadAndWrittenToTheNanosecond) {
    EXPECT_EQ(stamp(kT1), "2026-12-02T20:57:25.602731173Z");
    EXPECT_EQ(rfc3339_utc_ns(kT1 - 1), "2026-12-02T20:57:25.602731172Z");
    EXPECT_EQ(rfc3339_utc_ns(1000000000 - 1), "1970-01-01T00:00:00.999999999Z");
    EXPECT_EQ(line_stamp("2026-12-02T20:57:25.602731173Z hello"), kT1);
    EXPECT_EQ(line_stamp("2026-12-02T21:57:25.602731173+01:00 hello"), kT1);
    EXPECT_EQ(line_stamp("2026-12-02T20:57:25.6027311Z x"), kT1 - 73);  // zeros trimmed
    EXPECT_EQ(line_stamp("WARN[0000] no systemd user session"), 0);
    EXPECT_EQ(line_stamp("2026-12-02T20:57:25.602731173Z"), 0);  // no text after it: no space
    EXPECT_EQ(line_stamp(""), 0);
}

TEST(LogLines, ATailIsTheNewestLinesOfTheViewItsOldestStampBegins) {
    Engine e;
    e.log = {{kT1, "a"}, {kT1, "b"}, {kT1, "c"}, {kT1 + 5, "d"}};
    // follow_log.cpp: `--tail 2` says where the last two begin...
    EXPECT_EQ(oldest_stamp(e.tail(2)), kT1);
    EXPECT_EQ(oldest_stamp("WARN x\n" + e.tail(1)), kT1 + 5);
    EXPECT_EQ(oldest_stamp("WARN x\n"), 0);
    // ... and the lines come from the `--since` view from there.
    const LogWindow tail{2, kNoTime, 0};
    Chosen s = choose(e.since(LogWindow{0, kT1, 0}), false, tail, 16384);
    EXPECT_EQ(s.text, line(kT1, "c") + line(kT1 + 5, "d"));
    EXPECT_EQ(s.cursor, (LogCursor{kT1 + 5, 1}));
    EXPECT_FALSE(s.more);
    // Every line of one stamp: counted from the view's start, all three.
    e.log.pop_back();
    s = choose(e.since(LogWindow{0, kT1, 0}), false, tail, 16384);
    EXPECT_EQ(s.text, line(kT1, "b") + line(kT1, "c"));
    EXPECT_EQ(s.cursor, (LogCursor{kT1, 3}));
    EXPECT_FALSE(s.continued);
}

// A line written in two pieces (the first without a newline): the view
// from before the first piece prints one line under the first stamp; the
// view from the second piece's stamp prints that piece as a line of its
// own, which the next request's K must count.
TEST(LogLines, APieceOfTheLineBeforeALastStampIsCountedInTheNextView) {
    const std::string joined = stamp(kT1) + " abc" + stamp(kT1 + 7) + " eol\n";
    const std::string view_a = joined + line(kT1 + 7, "x") + line(kT1 + 7, "y");
    const Chosen a = choose(view_a, false, LogWindow{2, 0, 0}, 16384);
    EXPECT_EQ(a.text, joined + line(kT1 + 7, "x"));
    EXPECT_EQ(a.cursor, (LogCursor{kT1 + 7, 1}));
    EXPECT_TRUE(a.continued);
    EXPECT_EQ(a.group_first, line(kT1 + 7, "x"));
    // The next view (from kT1 + 7): " eol" is its own line there.
    const std::string view_b = stamp(kT1 + 7) + "  eol\n" + line(kT1 + 7, "x") + line(kT1 + 7, "y");
    const std::uint32_t seen = a.cursor.seen + *pieces_before(view_b, kT1 + 7, a.group_first);
    EXPECT_EQ(seen, 2u);
    EXPECT_FALSE(pieces_before(view_b, kT1 + 7, line(kT1 + 7, "nowhere")));
    const Chosen b = choose(view_b, false, LogWindow{0, kT1 + 7, seen}, 16384);
    EXPECT_EQ(b.text, line(kT1 + 7, "y"));
    // No piece of another stamp inside: nothing to recount.
    EXPECT_FALSE(
        choose(line(kT1, "a") + line(kT1 + 7, "x"), false, LogWindow{0, 0, 0}, 16384).continued);
}

// A line longer than the read limit (a progress bar that never writes a
// newline): its head is answered once, then the view moves past its first
// piece, so the lines after it can still be reached.
TEST(LogLines, ALineLongerThanTheReadLimitCannotStopTheLog) {
    const std::string huge = stamp(kT1) + " " + std::string(100000, '#');  // cut: no newline
    Chosen s = choose(huge, true, LogWindow{0, 0, 0}, 16384);
    EXPECT_NE(s.text.find("[line cut: "), std::string::npos);
    EXPECT_LE(s.text.size(), 16384u);
    EXPECT_EQ(s.cursor, (LogCursor{kT1, 1}));
    EXPECT_TRUE(s.more);
    s = choose(huge, true, LogWindow{0, kT1, 1}, 16384);
    EXPECT_EQ(s.text, "");
    EXPECT_EQ(s.cursor, (LogCursor{kT1 + 1, 0}));
    EXPECT_TRUE(s.more);
}

TEST(LogLines, SinceSkipsExactlyTheLinesAlreadySent) {
    Engine e;
    e.log = {{kT1, "a"}, {kT1, "b"}, {kT1, "c"}, {kT1 + 5, "d"}};
    const LogWindow w{0, kT1, 2};
    const Chosen s = choose(e.since(w), false, w, 16384);
    EXPECT_EQ(s.text, line(kT1, "c") + line(kT1 + 5, "d"));
    EXPECT_EQ(s.cursor, (LogCursor{kT1 + 5, 1}));
    EXPECT_FALSE(s.more);

    // Nothing new: the cursor stays.
    const LogWindow at_end{0, kT1 + 5, 1};
    const Chosen none = choose(e.since(at_end), false, at_end, 16384);
    EXPECT_EQ(none.text, "");
    EXPECT_EQ(none.cursor, (LogCursor{kT1 + 5, 1}));
    EXPECT_FALSE(none.more);
}

TEST(LogLines, OnlyCompleteStampedLinesAreAnswered) {
    const std::string out = "WARN[0000] the engine's own warning\n" + line(kT1, "whole") +
                            stamp(kT1 + 9) + " half, still being writ";
    const Chosen s = choose(out, false, LogWindow{0, 0, 0}, 16384);
    EXPECT_EQ(s.text, line(kT1, "whole"));
    EXPECT_EQ(s.cursor, (LogCursor{kT1, 1}));
    EXPECT_FALSE(s.more);
    EXPECT_EQ(s.untimed, "WARN[0000] the engine's own warning\n");
    // A piece continued after its own stamp is one line, under its first stamp.
    const std::string joined = stamp(kT1) + " partial" + stamp(kT1 + 9) + "  rest\n";
    EXPECT_EQ(choose(joined, false, LogWindow{0, 0, 0}, 16384).text, joined);
}

TEST(LogLines, BudgetAndLinesLeaveTheRestForTheNextRequest) {
    Engine e;
    for (int i = 0; i < 10; ++i) e.log.push_back({kT1 + i / 3, "line " + std::to_string(i)});
    const std::size_t one = line(kT1, "line 0").size();
    Chosen s = choose(e.since(LogWindow{0, 0, 0}), false, LogWindow{0, 0, 0}, 3 * one);
    EXPECT_EQ(s.text, e.tail(10).substr(0, 3 * one));
    EXPECT_EQ(s.cursor, (LogCursor{kT1, 3}));
    EXPECT_TRUE(s.more);
    s = choose(e.since(LogWindow{4, 0, 0}), false, LogWindow{4, 0, 0}, 16384);
    EXPECT_EQ(s.cursor, (LogCursor{kT1 + 1, 1}));
    EXPECT_TRUE(s.more);
    // Read up to the engine's cap: whatever comes after may exist.
    s = choose(e.since(LogWindow{0, 0, 0}), true, LogWindow{0, 0, 0}, 16384);
    EXPECT_TRUE(s.more);
    // The newest that fit, for a tail.
    s = choose(e.tail(10), false, LogWindow{10, kNoTime, 0}, 2 * one);
    EXPECT_EQ(s.text, line(kT1 + 3, "line 9").insert(0, line(kT1 + 2, "line 8")));
    EXPECT_FALSE(s.more);
}

TEST(LogLines, ALineLongerThanTheBudgetIsCutSaysSoAndIsPassed) {
    const std::string big(40000, 'x');
    const std::string out = line(kT1, big) + line(kT1 + 1, "next");
    Chosen s = choose(out, false, LogWindow{0, 0, 0}, 16384);
    EXPECT_LE(s.text.size(), 16384u);
    const std::size_t note = s.text.find(" [line cut: ");
    ASSERT_NE(note, std::string::npos);
    EXPECT_EQ(s.text.substr(note), " [line cut: " + std::to_string(line(kT1, big).size() - note) +
                                       " bytes not shown]\n");
    EXPECT_EQ(s.cursor, (LogCursor{kT1, 1}));
    EXPECT_TRUE(s.more);
    const LogWindow next{0, kT1, 1};
    s = choose(out, false, next, 16384);
    EXPECT_EQ(s.text, line(kT1 + 1, "next"));
}

// The promise of docs/PROTOCOL.md: following a growing log from cursor to
// cursor gives every line exactly once, whatever stamps the lines share and
// however small the budget or `lines`.
TEST(LogLines, FollowingAGrowingLogLosesNothingAndRepeatsNothing) {
    std::mt19937 random(20261203);
    for (int round = 0; round < 200; ++round) {
        Engine e;
        std::string received;
        LogCursor cursor{0, 0};
        std::int64_t now = kT1;
        int written = 0;
        const std::size_t budget = 40 + random() % 200;
        const std::uint16_t lines = static_cast<std::uint16_t>(random() % 4);  // 0: not given
        for (int step = 0; step < 60; ++step) {
            // The service writes a burst: one stamp for the whole write.
            if (random() % 2 == 0) {
                now += 1 + random() % 3;
                const int burst = 1 + static_cast<int>(random() % 5);
                for (int k = 0; k < burst; ++k)
                    e.log.push_back({now, "w" + std::to_string(written++)});
            }
            const LogWindow w{lines, cursor.ns, cursor.seen};
            const Chosen s = choose(e.since(w), false, w, budget);
            received += s.text;
            cursor = s.cursor;
        }
        for (int drain = 0; drain < 1000; ++drain) {  // then read to the end
            const LogWindow w{lines, cursor.ns, cursor.seen};
            const Chosen s = choose(e.since(w), false, w, budget);
            received += s.text;
            cursor = s.cursor;
            if (!s.more) break;
        }
        ASSERT_EQ(received, e.tail(e.log.size())) << "round " << round;
    }
}

// The same with lines written in pieces (a write without a newline, ended
// by a later one), as podman 4.3 prints them: a view from T shows pieces
// stamped from T on, a line begun before T from its first such piece; the
// next K is counted in that view when follow_log.cpp would (`continued`).
TEST(LogLines, FollowingPiecesLosesNothingAndRepeatsNothing) {
    struct Piece {
        std::int64_t ns;
        std::string text;
        bool ends;
    };
    const auto view = [](const std::vector<Piece>& log, std::int64_t since) {
        std::string out;
        for (const Piece& p : log) {
            if (since != 0 && p.ns < since) continue;
            out += stamp(p.ns) + " " + p.text + (p.ends ? "\n" : "");
        }
        return out;
    };
    const auto tokens = [](const std::string& text) {
        std::vector<std::string> out;
        for (std::size_t at = text.find('<'); at != std::string::npos; at = text.find('<', at + 1))
            out.push_back(text.substr(at, text.find('>', at) - at + 1));
        return out;
    };
    std::mt19937 random(20261204);
    for (int round = 0; round < 300; ++round) {
        std::vector<Piece> log;
        std::vector<std::string> received;
        LogCursor cursor{0, 0};
        std::int64_t now = kT1;
        int written = 0;
        const std::size_t budget = 400 + random() % 400;
        const std::uint16_t lines = static_cast<std::uint16_t>(random() % 4);
        int open_pieces = 0;  // pieces of the unfinished last line
        bool writing = true;
        const auto write = [&] {  // one read of the engine: one stamp
            now += 1 + random() % 3;
            const int pieces = 1 + static_cast<int>(random() % 4);
            for (int k = 0; k < pieces; ++k) {
                const bool ends = open_pieces >= 2 || random() % 10 < 7;
                log.push_back({now, "<w" + std::to_string(written++) + ">", ends});
                open_pieces = ends ? 0 : open_pieces + 1;
            }
        };
        const auto ask = [&] {
            const LogWindow w{lines, cursor.ns, cursor.seen};
            Chosen s = choose(view(log, cursor.ns), false, w, budget);
            // The service may write between the two reads (measured on the
            // real engine: a line unfinished in the first was whole in the
            // second).
            if (writing && random() % 2 == 0) write();
            if (s.continued) {
                const std::string next = view(log, s.cursor.ns);
                s.cursor.seen += *pieces_before(next, s.cursor.ns, s.group_first);
            }
            for (const std::string& t : tokens(s.text)) received.push_back(t);
            cursor = s.cursor;
            return s.more;
        };
        for (int step = 0; step < 80; ++step) {
            if (random() % 2 == 0) write();
            ask();
        }
        writing = false;
        if (open_pieces > 0) log.push_back({now + 1, "<end>", true});
        for (int drain = 0; drain < 2000 && ask(); ++drain) {
        }
        std::vector<std::string> all;
        for (const Piece& p : log) all.push_back(p.text);
        std::size_t first = 0;
        while (first < received.size() && first < all.size() && received[first] == all[first])
            ++first;
        ASSERT_EQ(received, all) << "round " << round << ", first difference at " << first << ": "
                                 << (first < received.size() ? received[first] : "(end)") << " for "
                                 << (first < all.size() ? all[first] : "(end)");
    }
}

}  // namespace
}  // namespace hb::parser
