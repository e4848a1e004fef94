#include "common/policy.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>
#include <vector>

#include "admin/install/config_write.hpp"
#include "ipc/verbs.hpp"
#include "tests/support/files.hpp"

namespace hb::exec {

using admin::default_policy_text;
using common::load_policy;
using common::Mode;
using common::mode_name;
using common::ModeSource;
using common::parse_policy;
using common::Policy;
using common::VerbMode;

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

// A line this executor cannot read: every verb that runs a command is
// denied, with that line as the reason; ping is still answered.
void expect_every_command_denied(const Policy& p, const std::string& why) {
    for (Verb verb : kAllVerbs) {
        if (verb == Verb::Ping) {
            EXPECT_EQ(p.mode(verb), Mode::Auto);
            continue;
        }
        EXPECT_EQ(p.mode(verb), Mode::Deny) << verb_name(verb);
        EXPECT_EQ(p.rule(verb).source, ModeSource::NotUnderstood) << verb_name(verb);
        EXPECT_NE(p.deny_detail(verb).find(why), std::string::npos) << p.deny_detail(verb);
        EXPECT_NE(p.deny_detail(verb).find("every command is denied until it is fixed"),
                  std::string::npos);
    }
    EXPECT_TRUE(any_warning_contains(p, why)) << (p.warnings.empty() ? "" : p.warnings[0]);
}

const std::vector<std::string> kServices = {"api", "db", "worker"};

// Every verb but up and rebuild, which have the engine read the agent's
// build inputs as the host user (SECURITY.md), and down and init, which
// stop the application or destroy its data: those wait for a person.
TEST(Policy, SeededDefaultAllowsEveryVerbButUpRebuildDownAndInitWithoutWarnings) {
    const Policy p = parse_policy(default_policy_text());
    for (Verb verb : kAllVerbs) {
        const bool held =
            verb == Verb::Up || verb == Verb::Rebuild || verb == Verb::Down || verb == Verb::Init;
        EXPECT_EQ(p.mode(verb), held ? Mode::Ask : Mode::Auto) << verb_name(verb);
    }
    EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
    // A string: a view of the returned temporary would dangle (ASan caught it).
    const std::string text = default_policy_text();
    EXPECT_NE(text.find("init resets seed data"), std::string::npos);
    EXPECT_NE(text.find("MODE_<verb>.<service>"), std::string::npos);
    EXPECT_NE(text.find("dry-run"), std::string::npos);
    EXPECT_NE(text.find("never sourced"), std::string::npos);
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

// A mode a newer executor may understand (confirm) or a typo: this one cannot
// tell what it was meant to stop, so it stops every command.
TEST(Policy, AnUnknownModeDeniesEveryCommand) {
    for (const std::string value : {"Ask", "confirm", "AUTO", "Auto", "\"auto\"", "'auto'",
                                    "auto=1", "", "auto#x", "yes", "1", "auto;true", "dry_run"}) {
        const Policy p = parse_policy(all_auto_except(Verb::Up, "MODE_up=" + value + "\n"));
        SCOPED_TRACE(value);
        expect_every_command_denied(p, "line 5: unknown mode");
    }
}

TEST(Policy, NeverSourced) {
    test::TempDir t;
    const std::string marker = t.path("was-sourced");
    for (const std::string& line :
         {"MODE_up=$(touch${IFS}" + marker + ")", "MODE_up=`touch${IFS}" + marker + "`",
          "MODE_up=auto;touch${IFS}" + marker, "MODE_up=$(touch " + marker + ")"}) {
        const Policy p = parse_policy(all_auto_except(Verb::Up, line + "\n"));
        EXPECT_EQ(p.mode(Verb::Up), Mode::Deny);
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
        expect_every_command_denied(p, "whitespace inside KEY=value");
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

// Each of these alone is a line this executor cannot read: it may be a
// rule for a newer one, or a typo of a rule meant to deny.
TEST(Policy, UnknownKeysAndMalformedLinesDenyEveryCommand) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"MODE_exec=auto", "unknown verb in key \"MODE_exec\""},
        {"MODE_reset-db=auto", "unknown verb in key \"MODE_reset-db\""},
        {"MODE_=auto", "unknown verb in key \"MODE_\""},
        {"MODE_UP=deny", "unknown verb in key \"MODE_UP\""},
        {"mode_up=deny", "unknown key \"mode_up\""},
        {"FOO=bar", "unknown key \"FOO\""},
        {"just words", "not KEY=value: \"just words\""},
        {"=auto", "unknown key \"\""},
        {std::string("MODE_up\0x=deny", 14), "\"MODE_up\\x00x\""},  // control bytes escaped
        {"MODE_restart.nosuch=deny", "key \"MODE_restart.nosuch\" names no service"},
        {"MODE_restart.=deny", "names no service"},
        {"MODE_up.api=deny", "key \"MODE_up.api\": up takes no service"},
        {"MODE_restart.api.x=deny", "names no service"},
    };
    for (const auto& [line, why] : cases) {
        SCOPED_TRACE(line);
        const std::string text = all_auto_except(Verb::Ping, "MODE_ping=auto\n") + line + "\n";
        expect_every_command_denied(parse_policy(text, kServices), why);
    }
}

TEST(Policy, WarningsNameTheFileAndLine) {
    const Policy p = parse_policy("# x\nMODE_up=maybe\n", {}, "my.conf");
    EXPECT_TRUE(any_warning_contains(p, "my.conf line 2: unknown mode \"maybe\""));
}

// --- per-service rules -----------------------------------------------------

TEST(Policy, TheMoreSpecificKeyWinsEitherWay) {
    std::string text = all_auto_except(Verb::Restart, "MODE_restart=auto\n");
    text += "MODE_restart.db=deny\nMODE_logs.db=dry-run\n";
    text = text.replace(text.find("MODE_rebuild=auto"), 17, "MODE_rebuild=deny");
    text += "MODE_rebuild.api=auto\n";
    const Policy p = parse_policy(text, kServices);
    EXPECT_TRUE(p.warnings.empty()) << p.warnings.front();
    EXPECT_EQ(p.mode(Verb::Restart, "api"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Restart, "db"), Mode::Deny);
    EXPECT_EQ(p.deny_detail(Verb::Restart, "db"), "MODE_restart.db=deny in policy.conf");
    EXPECT_EQ(p.mode(Verb::Logs, "db"), Mode::DryRun);
    EXPECT_EQ(p.mode(Verb::Logs, "api"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Rebuild, "api"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Rebuild, "worker"), Mode::Deny);
    EXPECT_EQ(p.deny_detail(Verb::Rebuild, "worker"), "MODE_rebuild=deny in policy.conf");
}

TEST(Policy, AServiceRuleStandsWhereTheVerbsOwnKeyIsMissing) {
    const Policy p = parse_policy(all_auto_except(Verb::Logs, "MODE_logs.api=auto\n"), kServices);
    EXPECT_EQ(p.mode(Verb::Logs, "api"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Logs, "db"), Mode::Deny);
    EXPECT_EQ(p.deny_detail(Verb::Logs, "db"), "MODE_logs is missing from policy.conf");
}

TEST(Policy, ADuplicateServiceRuleDeniesThatServiceOnly) {
    std::string text = all_auto_except(Verb::Ping, "MODE_ping=auto\n");
    text += "MODE_restart.db=auto\nMODE_restart.db=auto\n";
    const Policy p = parse_policy(text, kServices);
    EXPECT_EQ(p.mode(Verb::Restart, "db"), Mode::Deny);
    EXPECT_EQ(p.deny_detail(Verb::Restart, "db"),
              "MODE_restart.db appears more than once in policy.conf");
    EXPECT_EQ(p.mode(Verb::Restart, "api"), Mode::Auto);
    EXPECT_TRUE(any_warning_contains(p, "MODE_restart.db appears again"));
}

TEST(Policy, AWarningThatDeniesAVerbNamesTheServicesWithARuleOfTheirOwn) {
    std::string text = all_auto_except(Verb::Restart, "MODE_restart=deny\nMODE_restart=deny\n");
    text += "MODE_restart.api=auto\n";
    const Policy p = parse_policy(text, kServices);
    EXPECT_EQ(p.mode(Verb::Restart, "api"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Restart, "db"), Mode::Deny);
    EXPECT_TRUE(any_warning_contains(
        p, "MODE_restart appears again: restart is denied, but for api (a rule of their own)"));
    const Policy missing =
        parse_policy(all_auto_except(Verb::Logs, "MODE_logs.db=dry-run\n"), kServices);
    EXPECT_TRUE(any_warning_contains(
        missing, "MODE_logs is missing: logs is denied, but for db (a rule of their own)"));
}

TEST(Policy, DryRunIsAModeOfItsOwn) {
    const Policy p = parse_policy(all_auto_except(Verb::Down, "MODE_down=dry-run\n"));
    EXPECT_EQ(p.mode(Verb::Down), Mode::DryRun);
    EXPECT_TRUE(p.warnings.empty());
    EXPECT_EQ(mode_name(Mode::DryRun), "dry-run");
}

// --- load_policy: the file itself ----------------------------------------

TEST(PolicyFile, LoadsARegularFile) {
    test::TempDir t;
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
    test::TempDir t;
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "cannot be opened");
}

TEST(PolicyFile, SymlinkIsRefused) {
    test::TempDir t;
    t.write("real.conf", std::string(default_policy_text()));
    std::filesystem::create_symlink(t.path("real.conf"), t.path("policy.conf"));
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "is a symlink");
}

TEST(PolicyFile, FifoIsRefusedWithoutBlocking) {
    test::TempDir t;
    ASSERT_EQ(::mkfifo(t.path("policy.conf").c_str(), 0600), 0);
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "not a regular file");
}

TEST(PolicyFile, DirectoryIsRefused) {
    test::TempDir t;
    std::filesystem::create_directory(t.path("policy.conf"));
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "not a regular file");
}

TEST(PolicyFile, OversizedFileIsRefused) {
    test::TempDir t;
    t.write("policy.conf", std::string(default_policy_text()) + std::string(70000, '#'));
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "larger than 64 KiB");
}

TEST(PolicyFile, UnreadableFileIsRefused) {
    if (::geteuid() == 0) GTEST_SKIP() << "root reads a mode-000 file anyway";
    test::TempDir t;
    t.write("policy.conf", std::string(default_policy_text()));
    ::chmod(t.path("policy.conf").c_str(), 0);
    expect_all_denied_unavailable(load_policy(t.path("policy.conf")), "cannot be opened");
}

TEST(PolicyFile, EditsTakeEffectOnTheNextLoad) {
    test::TempDir t;
    t.write("policy.conf", std::string(default_policy_text()));
    EXPECT_EQ(load_policy(t.path("policy.conf")).mode(Verb::Restart), Mode::Auto);
    t.write("policy.conf", all_auto_except(Verb::Restart, "MODE_restart=deny\n"));
    EXPECT_EQ(load_policy(t.path("policy.conf")).mode(Verb::Restart), Mode::Deny);
}

}  // namespace
}  // namespace hb::exec
