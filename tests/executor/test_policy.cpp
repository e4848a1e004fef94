#include "executor/policy.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "admin/config_write.hpp"
#include "ipc/verbs.hpp"
#include "temp_tree.hpp"

namespace hb::exec {
namespace {

std::string all_auto_except(Verb skipped, const std::string& replacement = "") {
    std::string text;
    for (Verb verb : kAllVerbs) {
        if (verb == skipped) {
            text += replacement;
        } else {
            text += std::string(verb_info(verb).policy_key) + "=auto\n";
        }
    }
    return text;
}

bool any_warning_contains(const Policy& p, const std::string& needle) {
    return std::any_of(p.warnings.begin(), p.warnings.end(),
                       [&](const std::string& w) { return w.find(needle) != std::string::npos; });
}

void expect_only_denied(const Policy& p, Verb denied) {
    for (Verb verb : kAllVerbs) {
        EXPECT_EQ(p.mode(verb), verb == denied ? Mode::Deny : Mode::Auto) << verb_name(verb);
    }
}

TEST(Policy, SeededDefaultAllowsEveryVerbWithoutWarnings) {
    const Policy p = parse_policy(default_policy_text());
    for (Verb verb : kAllVerbs) EXPECT_EQ(p.mode(verb), Mode::Auto) << verb_name(verb);
    EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
    const std::string_view text = default_policy_text();
    EXPECT_NE(text.find("init resets seed data"), std::string_view::npos);
    EXPECT_NE(text.find("no \"confirm\" mode"), std::string_view::npos);
    EXPECT_NE(text.find("never sourced"), std::string_view::npos);
}

TEST(Policy, ExplicitDeny) {
    const Policy p = parse_policy(all_auto_except(Verb::Rebuild, "MODE_rebuild=deny\n"));
    expect_only_denied(p, Verb::Rebuild);
    EXPECT_TRUE(p.warnings.empty());
    EXPECT_EQ(p.deny_detail(Verb::Rebuild), "MODE_rebuild=deny in policy.conf");
}

TEST(Policy, MissingVerbIsDeniedWithAWarning) {
    const Policy p = parse_policy(all_auto_except(Verb::JoinNetwork));
    expect_only_denied(p, Verb::JoinNetwork);
    EXPECT_TRUE(any_warning_contains(p, "MODE_join-network is missing"));
    EXPECT_EQ(p.deny_detail(Verb::JoinNetwork), "MODE_join-network is missing from policy.conf");
}

TEST(Policy, EmptyFileDeniesEverything) {
    const Policy p = parse_policy("");
    for (Verb verb : kAllVerbs) EXPECT_EQ(p.mode(verb), Mode::Deny);
    EXPECT_EQ(p.warnings.size(), kAllVerbs.size());
}

TEST(Policy, UnknownModesDeny) {
    for (const std::string value : {"ask", "confirm", "AUTO", "Auto", "\"auto\"", "'auto'",
                                    "auto=1", "", "auto#x", "yes", "1", "auto;true"}) {
        const Policy p = parse_policy(all_auto_except(Verb::Up, "MODE_up=" + value + "\n"));
        SCOPED_TRACE(value);
        expect_only_denied(p, Verb::Up);
        EXPECT_TRUE(any_warning_contains(p, "line 5: unknown mode"));
        EXPECT_EQ(p.deny_detail(Verb::Up), "MODE_up has an unknown mode in policy.conf");
    }
}

TEST(Policy, NeverSourced) {
    test::TempTree t;
    const std::string marker = t.path("was-sourced");
    for (const std::string& line :
         {"MODE_up=$(touch${IFS}" + marker + ")", "MODE_up=`touch${IFS}" + marker + "`",
          "MODE_up=auto;touch${IFS}" + marker, "MODE_up=$(touch " + marker + ")"}) {
        const Policy p = parse_policy(all_auto_except(Verb::Up, line + "\n"));
        expect_only_denied(p, Verb::Up);
    }
    EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(Policy, DuplicateKeyDeniesEvenWhenBothSayAuto) {
    for (const std::string dup :
         {"MODE_logs=auto\nMODE_logs=auto\n", "MODE_logs=deny\nMODE_logs=auto\n",
          "MODE_logs=auto\nMODE_logs=deny\n"}) {
        const Policy p = parse_policy(all_auto_except(Verb::Logs, dup));
        expect_only_denied(p, Verb::Logs);
        EXPECT_TRUE(any_warning_contains(p, "MODE_logs appears again"));
        EXPECT_EQ(p.deny_detail(Verb::Logs), "MODE_logs appears more than once in policy.conf");
    }
}

TEST(Policy, WhitespaceAroundEqualsIsRejectedStrictly) {
    for (const std::string line : {"MODE_down = auto", "MODE_down =auto", "MODE_down= auto",
                                   "export MODE_down=auto", "MODE_down=auto # comment"}) {
        const Policy p = parse_policy(all_auto_except(Verb::Down, line + "\n"));
        SCOPED_TRACE(line);
        expect_only_denied(p, Verb::Down);
        EXPECT_TRUE(any_warning_contains(p, "whitespace inside KEY=value"));
    }
}

TEST(Policy, BlanksAtLineEndsCommentsAndCrlfAreFine) {
    std::string text = "# a comment\n\n   \n\t# indented comment\n";
    for (Verb verb : kAllVerbs)
        text += "  " + std::string(verb_info(verb).policy_key) + "=auto \r\n";
    const Policy p = parse_policy(text);
    for (Verb verb : kAllVerbs) EXPECT_EQ(p.mode(verb), Mode::Auto);
    EXPECT_TRUE(p.warnings.empty());
}

TEST(Policy, LastLineWithoutNewline) {
    std::string text = all_auto_except(Verb::JoinNetwork, "") + "MODE_join-network=deny";
    const Policy p = parse_policy(text);
    expect_only_denied(p, Verb::JoinNetwork);
    EXPECT_TRUE(p.warnings.empty());
}

TEST(Policy, UnknownKeysAndMalformedLinesWarnAndChangeNothing) {
    std::string text = all_auto_except(Verb::Ping, "MODE_ping=auto\n");
    text += "MODE_exec=auto\nMODE_reset-db=auto\nMODE_shell=auto\nMODE_=auto\nmode_up=deny\n";
    text += "FOO=bar\njust words\n=auto\nMODE_UP=deny\n";
    text += std::string("MODE_up\0x=deny\n", 15);
    const Policy p = parse_policy(text);
    for (Verb verb : kAllVerbs) EXPECT_EQ(p.mode(verb), Mode::Auto) << verb_name(verb);
    EXPECT_TRUE(any_warning_contains(p, "unknown verb in key \"MODE_exec\""));
    EXPECT_TRUE(any_warning_contains(p, "unknown verb in key \"MODE_reset-db\""));
    EXPECT_TRUE(any_warning_contains(p, "unknown key \"FOO\""));
    EXPECT_TRUE(any_warning_contains(p, "not KEY=value, ignored: \"just words\""));
    EXPECT_TRUE(any_warning_contains(p, "unknown key \"mode_up\""));
    EXPECT_TRUE(any_warning_contains(p, "\"MODE_up\\x00x\""));  // control bytes escaped
    EXPECT_EQ(p.warnings.size(), 10u);
}

TEST(Policy, WarningsNameTheFileAndLine) {
    const Policy p = parse_policy("# x\nMODE_up=maybe\n", "my.conf");
    EXPECT_TRUE(any_warning_contains(p, "my.conf line 2: unknown mode \"maybe\""));
}

// --- load_policy: the file itself ----------------------------------------

TEST(PolicyFile, LoadsARegularFile) {
    test::TempTree t;
    t.write("policy.conf", all_auto_except(Verb::Init, "MODE_init=deny\n"));
    const Policy p = load_policy(t.path("policy.conf"));
    expect_only_denied(p, Verb::Init);
    EXPECT_TRUE(p.warnings.empty());
}

void expect_all_denied_unavailable(const Policy& p, const std::string& needle) {
    for (Verb verb : kAllVerbs) EXPECT_EQ(p.mode(verb), Mode::Deny) << verb_name(verb);
    for (const VerbMode& vm : p.verbs) EXPECT_EQ(vm.source, ModeSource::FileUnavailable);
    EXPECT_TRUE(any_warning_contains(p, needle)) << (p.warnings.empty() ? "" : p.warnings[0]);
    EXPECT_EQ(p.deny_detail(Verb::Ping), "policy.conf could not be read");
}

TEST(PolicyFile, MissingFileDeniesEverything) {
    test::TempTree t;
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "cannot be opened");
}

TEST(PolicyFile, SymlinkIsRefused) {
    test::TempTree t;
    t.write("real.conf", std::string(default_policy_text()));
    std::filesystem::create_symlink(t.path("real.conf"), t.path("policy.conf"));
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "is a symlink");
}

TEST(PolicyFile, FifoIsRefusedWithoutBlocking) {
    test::TempTree t;
    ASSERT_EQ(::mkfifo(t.path("policy.conf").c_str(), 0600), 0);
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "not a regular file");
}

TEST(PolicyFile, DirectoryIsRefused) {
    test::TempTree t;
    std::filesystem::create_directory(t.path("policy.conf"));
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "not a regular file");
}

TEST(PolicyFile, OversizedFileIsRefused) {
    test::TempTree t;
    t.write("policy.conf", std::string(default_policy_text()) + std::string(70000, '#'));
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "larger than 64 KiB");
}

TEST(PolicyFile, UnreadableFileIsRefused) {
    if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file anyway";
    test::TempTree t;
    t.write("policy.conf", std::string(default_policy_text()));
    ::chmod(t.path("policy.conf").c_str(), 0);
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "cannot be opened");
}

TEST(PolicyFile, EditsTakeEffectOnTheNextLoad) {
    test::TempTree t;
    t.write("policy.conf", std::string(default_policy_text()));
    EXPECT_EQ(load_policy(t.path("policy.conf")).mode(Verb::Restart), Mode::Auto);
    t.write("policy.conf", all_auto_except(Verb::Restart, "MODE_restart=deny\n"));
    EXPECT_EQ(load_policy(t.path("policy.conf")).mode(Verb::Restart), Mode::Deny);
}

}  // namespace
}  // namespace hb::exec
