// `hostbridge policy suggest`: the install's policy.conf tightened by what a
// real audit log (written through common::AuditLog into an install made by
// the real `hostbridge install`) shows ran, read back with the executor's
// own parser. Also the pure suggest_policy over every combination of verbs
// and services, and tighten_policy over every mode a person may have set.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "admin/commands/policy_suggest.hpp"
#include "common/audit_log.hpp"
#include "common/policy.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

using common::AuditEvent;
using common::AuditRecord;
using common::Mode;

const std::vector<std::string> kServices = {"api", "db", "web", "worker"};

class Suggest : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
        const auto services = home.bridge_json("demo-app")["services"];
        ASSERT_EQ(services, nlohmann::json(kServices));
        policy_file = home.config_dir("demo-app") + "/policy.conf";
        ASSERT_TRUE(exists(policy_file));
    }

    // `event` of `verb` (with `arg`) through the executor's own writer.
    void log(AuditEvent event, Verb verb, const std::string& arg = "", int times = 1,
             const std::string& reason = "") {
        auto audit = common::AuditLog::open(home.state_dir("demo-app"));
        ASSERT_TRUE(audit.ok()) << audit.error().message;
        audit->set_journal_anchor(false);
        for (int i = 0; i < times; ++i) {
            AuditRecord r;
            r.event = event;
            r.request =
                "20260101T000000Z-" + std::string(verb_name(verb)) + "-0123456789abcdef.json";
            r.verb = verb;
            if (!arg.empty()) r.arg = arg;
            if (!reason.empty()) r.reason = reason;
            ASSERT_TRUE(audit->append(r).ok());
        }
    }
    void ran(Verb verb, const std::string& arg = "", int times = 1) {
        log(AuditEvent::Started, verb, arg, times);
    }

    Ran suggest(const std::vector<std::string>& extra = {}) const {
        std::vector<std::string> args = {"policy", "suggest", "--slug", "demo-app"};
        args.insert(args.end(), extra.begin(), extra.end());
        return home.hostbridge(args);
    }

    // A person's edit of policy.conf: each line that is exactly a key of
    // `lines` becomes its value (lines of its own).
    void edit_policy(const std::map<std::string, std::string>& lines) const {
        std::string edited;
        for (const auto& line : split_lines(read_file(policy_file))) {
            const auto it = lines.find(line);
            edited += (it == lines.end() ? line : it->second) + "\n";
        }
        write_file(policy_file, edited);
    }

    // The suggestion as the executor reads it, which must understand every
    // line and have nothing to warn about.
    static common::Policy parsed(const std::string& text) {
        common::Policy p = common::parse_policy(text, kServices);
        EXPECT_EQ(p.not_understood, "") << text;
        EXPECT_TRUE(p.warnings.empty()) << (p.warnings.empty() ? "" : p.warnings[0]) << "\n"
                                        << text;
        return p;
    }

    // The comment line just before `key_line`.
    static std::string comment_before(const std::string& text, const std::string& key_line) {
        const auto lines = split_lines(text);
        for (std::size_t i = 1; i < lines.size(); ++i) {
            if (lines[i] == key_line) return lines[i - 1];
        }
        return "(no line " + key_line + ")";
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
    std::string policy_file;
};

TEST_F(Suggest, UsedVerbsStayAsTheFileSaysAndEachChangeIsMarked) {
    ran(Verb::Status, "", 3);
    ran(Verb::Up);
    ran(Verb::Logs, "api", 2);
    const std::string before = read_file(policy_file);
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    const common::Policy p = parsed(run.out);
    EXPECT_EQ(p.mode(Verb::Ping), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Status), Mode::Auto);
    // A stack install without an engine user: up is held for a person
    // however often it ran (admin/install/policy_engine_guard.hpp).
    EXPECT_EQ(p.mode(Verb::Up), Mode::Ask);
    // Unchanged lines keep the seeded file's comments; the file starts as it did.
    EXPECT_TRUE(has_line(run.out, "MODE_status=auto")) << run.out;
    EXPECT_FALSE(contains(comment_before(run.out, "MODE_status=auto"), "policy suggest"));
    EXPECT_EQ(run.out.substr(0, 200), before.substr(0, 200));
    // Only api's logs ran: logs is denied but for api, which stays auto.
    EXPECT_TRUE(has_line(run.out, "MODE_logs=deny")) << run.out;
    EXPECT_TRUE(contains(comment_before(run.out, "MODE_logs=deny"),
                         "# policy suggest: auto -> deny; logs: ran 2 times, 20"))
        << run.out;
    EXPECT_TRUE(has_line(run.out, "MODE_logs.api=auto")) << run.out;
    EXPECT_TRUE(contains(comment_before(run.out, "MODE_logs.api=auto"),
                         "# policy suggest: added, stays auto as MODE_logs was; logs api: ran 2 "
                         "times"))
        << run.out;
    // The summary, one line per change, on stderr.
    EXPECT_TRUE(contains(run.err, "change(s), each tightens it (nothing is loosened):")) << run.err;
    EXPECT_TRUE(has_line(run.err, "  MODE_health: auto -> deny (health: never ran)")) << run.err;
    EXPECT_TRUE(contains(run.err,
                         "  MODE_logs.api: added, stays auto as MODE_logs was (logs "
                         "api: ran 2 times"))
        << run.err;
    EXPECT_EQ(p.mode(Verb::Logs, "api"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Logs, "db"), Mode::Deny);
    EXPECT_EQ(p.service_rules.size(), 1u);
}

TEST_F(Suggest, UnusedAndRefusedVerbsAreDenied) {
    ran(Verb::Status);
    // Refused by policy (and a dry run, audited `denied`): not use.
    log(AuditEvent::Denied, Verb::Health, "", 4, "verb is denied by policy: MODE_health=deny");
    log(AuditEvent::Denied, Verb::Up, "", 1, "dry run: would run $STACK start");
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    const common::Policy p = parsed(run.out);
    for (Verb verb : kAllVerbs) {
        if (verb == Verb::Ping || verb == Verb::Status) continue;
        EXPECT_EQ(p.mode(verb), Mode::Deny) << verb_name(verb);
        EXPECT_EQ(p.mode(verb, "api"), Mode::Deny) << verb_name(verb);
    }
    EXPECT_TRUE(has_line(run.out, "MODE_health=deny")) << run.out;
    EXPECT_TRUE(contains(comment_before(run.out, "MODE_health=deny"), "never ran; refused 4"));
    EXPECT_TRUE(contains(comment_before(run.out, "MODE_join-network=deny"), "never ran"));
}

TEST_F(Suggest, DownInitAndRebuildAreAskNeverAuto) {
    ran(Verb::Down, "", 2);
    ran(Verb::Init);
    ran(Verb::Rebuild, "api");
    ran(Verb::Rebuild, "web");  // api and web: every buildable service
    ran(Verb::Restart, "db");
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    const common::Policy p = parsed(run.out);
    EXPECT_EQ(p.mode(Verb::Down), Mode::Ask);
    EXPECT_EQ(p.mode(Verb::Init), Mode::Ask);
    EXPECT_EQ(p.mode(Verb::Rebuild), Mode::Ask);
    EXPECT_TRUE(has_line(run.out, "MODE_down=ask")) << run.out;
    EXPECT_TRUE(has_line(run.out, "MODE_init=ask")) << run.out;
    EXPECT_TRUE(has_line(run.out, "MODE_rebuild=ask")) << run.out;
    for (const auto& line : split_lines(run.out)) {
        for (const char* key : {"MODE_down", "MODE_init", "MODE_rebuild"}) {
            if (line.rfind(key, 0) == 0) {
                EXPECT_FALSE(contains(line, "=auto")) << line;
            }
        }
    }
    // restart, which is not one of the three, ran for db only.
    EXPECT_EQ(p.mode(Verb::Restart, "db"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Restart, "api"), Mode::Deny);
}

TEST_F(Suggest, RebuildOfSomeServicesIsAskForThoseOnly) {
    ran(Verb::Rebuild, "web", 2);
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    const common::Policy p = parsed(run.out);
    EXPECT_TRUE(has_line(run.out, "MODE_rebuild=deny")) << run.out;
    EXPECT_TRUE(has_line(run.out, "MODE_rebuild.web=ask")) << run.out;
    EXPECT_EQ(p.mode(Verb::Rebuild, "web"), Mode::Ask);
    EXPECT_EQ(p.mode(Verb::Rebuild, "api"), Mode::Deny);
}

TEST_F(Suggest, EveryServiceUsedIsOneVerbLine) {
    for (const auto& service : kServices) ran(Verb::Restart, service);
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    const common::Policy p = parsed(run.out);
    EXPECT_TRUE(has_line(run.out, "MODE_restart=auto")) << run.out;
    for (const auto& line : split_lines(run.out)) EXPECT_NE(line.rfind("MODE_restart.", 0), 0u);
    EXPECT_TRUE(p.service_rules.empty());
    EXPECT_FALSE(contains(comment_before(run.out, "MODE_restart=auto"), "policy suggest"));
}

TEST_F(Suggest, ARemovedServiceIsNamedInACommentNotInAKey) {
    ran(Verb::Restart, "api");
    ran(Verb::Restart, "oldsvc", 3);
    ran(Verb::Logs, "gone");  // logs ran only for a service that is gone
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    const common::Policy p = parsed(run.out);  // a key naming it would not parse cleanly
    EXPECT_TRUE(has_line(run.out, "MODE_restart.api=auto")) << run.out;
    EXPECT_TRUE(has_line(run.out, "MODE_logs=deny")) << run.out;
    for (const auto& line : split_lines(run.out)) {
        if (contains(line, "oldsvc") || contains(line, "gone")) {
            EXPECT_EQ(line.rfind("#", 0), 0u) << line;
        }
    }
    EXPECT_EQ(p.service_rules.size(), 1u);
}

TEST_F(Suggest, ANameWithControlCharactersIsShownEscaped) {
    // The verifier takes any string as arg: a name with an escape sequence
    // and a newline still verifies, and must neither reach the terminal nor
    // start a line of its own.
    ran(Verb::Restart, "db\x1b[2J\nMODE_up=auto");
    ASSERT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--verify"}).code, 0);
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
    EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run.err;
    const common::Policy p = parsed(run.out);
    EXPECT_EQ(p.mode(Verb::Up), Mode::Deny);
    EXPECT_EQ(p.mode(Verb::Restart), Mode::Deny);
    EXPECT_TRUE(p.service_rules.empty());
}

TEST_F(Suggest, AnAuditLogThatFailsVerificationIsRefused) {
    ran(Verb::Status, "", 2);
    const std::string file = home.state_dir("demo-app") + "/audit.jsonl";
    auto lines = split_lines(read_file(file));
    ASSERT_EQ(lines.size(), 3u);
    // Forge the second status into an `up`: the hash no longer matches.
    const auto pos = lines[2].find("\"verb\":\"status\"");
    ASSERT_NE(pos, std::string::npos);
    lines[2].replace(pos, 15, "\"verb\":\"up\"");
    write_file(file, lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n", 0600);
    const std::string before = read_file(policy_file);
    Ran run = suggest();
    EXPECT_EQ(run.code, 1);
    EXPECT_FALSE(contains(run.out, "MODE_")) << run.out;
    EXPECT_TRUE(contains(run.err, "fails verification (audit.jsonl line 3")) << run.err;
    EXPECT_TRUE(contains(run.err, " audit --slug demo-app --verify")) << run.err;
    EXPECT_EQ(suggest({"--write", "--yes"}).code, 1);
    EXPECT_EQ(read_file(policy_file), before);
}

TEST_F(Suggest, NothingIsWrittenWithoutWriteOrAConfirmation) {
    ran(Verb::Status);
    const std::string before = read_file(policy_file);
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_EQ(read_file(policy_file), before);
    // --write with stdin not a terminal and no --yes: shown, not written.
    Ran write = suggest({"--write"});
    EXPECT_EQ(write.code, 1);
    EXPECT_TRUE(contains(write.out, "-MODE_health=auto")) << write.out;
    EXPECT_TRUE(contains(write.out, "+MODE_health=deny")) << write.out;
    EXPECT_TRUE(contains(write.err, "nothing was written")) << write.err;
    EXPECT_TRUE(contains(write.err, "policy suggest --slug demo-app --write --yes")) << write.err;
    EXPECT_EQ(read_file(policy_file), before);
}

TEST_F(Suggest, WriteWithYesReplacesTheFileKeepingItsMode) {
    ran(Verb::Logs, "db");
    ran(Verb::Down);
    ASSERT_EQ(::chmod(policy_file.c_str(), 0640), 0);
    const std::string suggested = suggest().out;
    Ran write = suggest({"--write", "--yes"});
    ASSERT_EQ(write.code, 0) << write.err;
    EXPECT_TRUE(contains(write.out, "+MODE_health=deny")) << write.out;
    EXPECT_EQ(read_file(policy_file), suggested);
    EXPECT_EQ(mode_of(policy_file), 0640u);
    // What the executor will read from the file it wrote.
    const common::Policy p = common::load_policy(policy_file, kServices);
    EXPECT_EQ(p.not_understood, "");
    EXPECT_TRUE(p.warnings.empty());
    EXPECT_EQ(p.mode(Verb::Logs, "db"), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Down), Mode::Ask);
    EXPECT_EQ(p.mode(Verb::Up), Mode::Deny);
    // Again: the file already says it.
    Ran again = suggest({"--write", "--yes"});
    EXPECT_EQ(again.code, 0) << again.err;
    EXPECT_TRUE(contains(again.out, "nothing written")) << again.out;
}

TEST_F(Suggest, WriteAsksOnATerminal) {
    ran(Verb::Status);
    const std::string before = read_file(policy_file);
    const std::string suggested = suggest().out;
    for (const char* answer : {"n\n", "y\n"}) {
        const Prompted asked = home.hostbridge_on_a_terminal(
            {"policy", "suggest", "--slug", "demo-app", "--write"}, answer);
        ASSERT_TRUE(contains(asked.shown, "+MODE_up=deny")) << asked.shown;
        EXPECT_EQ(asked.code, answer[0] == 'y' ? 0 : 1) << answer;
        EXPECT_EQ(read_file(policy_file), answer[0] == 'y' ? suggested : before) << answer;
    }
}

TEST_F(Suggest, UsageErrors) {
    EXPECT_EQ(home.hostbridge({"policy", "--slug", "demo-app"}).code, 2);
    EXPECT_EQ(home.hostbridge({"policy", "show", "--slug", "demo-app"}).code, 2);
    EXPECT_EQ(home.hostbridge({"policy", "suggest", "more", "--slug", "demo-app"}).code, 2);
    EXPECT_EQ(suggest({"--yes"}).code, 2);
    Ran help = home.hostbridge({"policy", "--help"});
    EXPECT_EQ(help.code, 0);
    EXPECT_TRUE(contains(help.out, "usage: hostbridge policy suggest")) << help.out;
    EXPECT_TRUE(contains(home.hostbridge({"--help"}).out, "policy suggest"));
}

// Issue 45: restart ran unattended for web and api, status too; then the
// person tightened the file. suggest read only the audit log and proposed
// MODE_restart=auto and MODE_status=auto back, and --write --yes installed
// it. It starts from the file now and never loosens a line.
TEST_F(Suggest, APersonsTighterLinesAreNeverLoosened) {
    ran(Verb::Restart, "web");
    ran(Verb::Restart, "api");
    ran(Verb::Status);
    edit_policy({{"MODE_restart=auto", "MODE_restart=ask\nMODE_restart.api=deny"},
                 {"MODE_status=auto", "MODE_status=dry-run"}});
    const auto held_as_written = [&](const std::string& text) {
        const common::Policy p = parsed(text);
        EXPECT_EQ(p.mode(Verb::Status), Mode::DryRun) << text;
        EXPECT_EQ(p.mode(Verb::Restart, "web"), Mode::Ask) << text;
        EXPECT_EQ(p.mode(Verb::Restart, "api"), Mode::Deny) << text;
        EXPECT_EQ(p.mode(Verb::Restart, "db"), Mode::Deny) << text;  // never ran: tightened
        for (const auto& line : split_lines(text)) {
            if (line.rfind("MODE_restart", 0) == 0 || line.rfind("MODE_status", 0) == 0) {
                EXPECT_FALSE(contains(line, "=auto")) << line;
            }
        }
    };
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    held_as_written(run.out);
    EXPECT_TRUE(has_line(run.out, "MODE_status=dry-run")) << run.out;
    EXPECT_TRUE(has_line(run.out, "MODE_restart.api=deny")) << run.out;
    EXPECT_TRUE(contains(run.err, "  MODE_restart: ask -> deny (restart: ran 2 times")) << run.err;
    EXPECT_TRUE(contains(run.err, "  MODE_restart.web: added, stays ask as MODE_restart was"))
        << run.err;
    Ran write = suggest({"--write", "--yes"});
    ASSERT_EQ(write.code, 0) << write.err;
    // The summary comes above the diff.
    const auto summary = write.out.find("each tightens it (nothing is loosened)");
    const auto diff = write.out.find("+MODE_restart=deny");
    EXPECT_NE(summary, std::string::npos) << write.out;
    EXPECT_NE(diff, std::string::npos) << write.out;
    EXPECT_LT(summary, diff) << write.out;
    EXPECT_FALSE(contains(write.out, "-MODE_status=dry-run")) << write.out;
    EXPECT_FALSE(contains(write.out, "-MODE_restart.api=deny")) << write.out;
    held_as_written(read_file(policy_file));
}

// Where the install holds up and rebuild for a person, a file that says
// auto for them by hand is proposed ask: never auto.
TEST_F(Suggest, AVerbHeldForContainmentIsNeverProposedAuto) {
    ran(Verb::Up, "", 2);
    ran(Verb::Rebuild, "api");
    ran(Verb::Rebuild, "web");
    edit_policy({{"MODE_up=ask", "MODE_up=auto"},
                 {"MODE_rebuild=ask", "MODE_rebuild=auto\nMODE_rebuild.web=auto"}});
    Ran run = suggest();
    ASSERT_EQ(run.code, 0) << run.err;
    const common::Policy p = parsed(run.out);
    EXPECT_EQ(p.mode(Verb::Up), Mode::Ask);
    EXPECT_EQ(p.mode(Verb::Rebuild, "api"), Mode::Ask);
    EXPECT_EQ(p.mode(Verb::Rebuild, "web"), Mode::Ask);
    for (const auto& line : split_lines(run.out)) {
        if (line.rfind("MODE_up", 0) == 0 || line.rfind("MODE_rebuild", 0) == 0) {
            EXPECT_FALSE(contains(line, "=auto")) << line;
        }
    }
    EXPECT_TRUE(contains(run.err, "  MODE_up: auto -> ask (up: ran 2 times")) << run.err;
}

TEST_F(Suggest, APolicyWithALineItDoesNotUnderstandIsRefused) {
    ran(Verb::Status);
    write_file(policy_file, read_file(policy_file) + "MODE_status=sometimes\n");
    const std::string before = read_file(policy_file);
    Ran run = suggest({"--write", "--yes"});
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "cannot start from the current policy")) << run.err;
    EXPECT_EQ(read_file(policy_file), before);
}

// Issue 28: a person's approvals under `ask` are not unattended runs. What
// an `allowed` event authorised stays ask, never auto.
TEST(SuggestPolicy, WhatAPersonAllowedStaysAsk) {
    const admin::InstallServices install{kServices, {"api", "web"}};
    std::vector<admin::AuditUse> events;
    std::uint64_t seq = 0;
    auto add = [&](AuditEvent event, Verb verb, std::optional<std::string> arg) {
        admin::AuditUse u;
        u.seq = ++seq;
        u.ts = "2026-01-01T00:00:0" + std::to_string(seq % 10) + ".000Z";
        u.event = event;
        u.verb = verb;
        u.arg = std::move(arg);
        events.push_back(u);
    };
    // restart api: held and allowed twice; restart db: ran unattended.
    for (int i = 0; i < 2; ++i) {
        add(AuditEvent::Held, Verb::Restart, "api");
        add(AuditEvent::Allowed, Verb::Restart, "api");
        add(AuditEvent::Started, Verb::Restart, "api");
    }
    add(AuditEvent::Started, Verb::Restart, "db");
    // status (no service): allowed once.
    add(AuditEvent::Allowed, Verb::Status, std::nullopt);
    add(AuditEvent::Started, Verb::Status, std::nullopt);
    // logs of every service, each allowed: the verb itself stays ask.
    for (const std::string& service : kServices) {
        add(AuditEvent::Allowed, Verb::Logs, service);
        add(AuditEvent::Started, Verb::Logs, service);
    }
    const admin::Suggestion s = admin::suggest_policy(events, install, "demo");
    const common::Policy p = common::parse_policy(s.text, kServices);
    ASSERT_EQ(p.not_understood, "") << s.text;
    EXPECT_EQ(p.mode(Verb::Restart, "api"), Mode::Ask) << s.text;
    EXPECT_EQ(p.mode(Verb::Restart, "db"), Mode::Auto) << s.text;
    EXPECT_EQ(p.mode(Verb::Status), Mode::Ask) << s.text;
    EXPECT_EQ(p.mode(Verb::Logs), Mode::Ask) << s.text;
    EXPECT_TRUE(contains(s.text, "# restart api: ran 2 times") &&
                contains(s.text, "a person allowed it 2 time(s) on the host\nMODE_restart.api=ask"))
        << s.text;
    EXPECT_FALSE(contains(s.text, "MODE_up=auto")) << s.text;
}

// up and rebuild that ran unattended are suggested auto only where the
// install does not hold them for a person (admin/install/policy_engine_guard.hpp).
TEST(SuggestPolicy, UpAndRebuildAreAutoOnlyWhereTheInstallDoesNotHoldThem) {
    std::vector<admin::AuditUse> events;
    std::uint64_t seq = 0;
    for (auto [verb, arg] : {std::pair<Verb, std::optional<std::string>>{Verb::Up, std::nullopt},
                             {Verb::Rebuild, "api"},
                             {Verb::Rebuild, "web"},
                             {Verb::Down, std::nullopt}}) {
        admin::AuditUse u;
        u.seq = ++seq;
        u.ts = "2026-01-01T00:00:0" + std::to_string(seq) + ".000Z";
        u.event = AuditEvent::Started;
        u.verb = verb;
        u.arg = arg;
        events.push_back(u);
    }
    const admin::InstallServices safe{kServices, {"api", "web"}, admin::EngineHold{}};
    const common::Policy free =
        common::parse_policy(admin::suggest_policy(events, safe, "d").text, kServices);
    EXPECT_EQ(free.mode(Verb::Up), Mode::Auto);
    EXPECT_EQ(free.mode(Verb::Rebuild, "api"), Mode::Auto);
    EXPECT_EQ(free.mode(Verb::Down), Mode::Ask);  // always a person's
    const admin::InstallServices held{
        kServices, {"api", "web"}, admin::EngineHold{"", "no buildah", ""}};
    const common::Policy p =
        common::parse_policy(admin::suggest_policy(events, held, "d").text, kServices);
    EXPECT_EQ(p.mode(Verb::Up), Mode::Auto);
    EXPECT_EQ(p.mode(Verb::Rebuild, "api"), Mode::Ask);
}

// Issue 48: the header said down, init, up and rebuild were never auto
// while, on an install whose engine user contains them, the body proposed
// MODE_up=auto. The header names the verbs the body holds.
TEST(SuggestPolicy, TheHeaderNamesTheVerbsTheBodyNeverMakesAuto) {
    admin::AuditUse up;
    up.seq = 1;
    up.ts = "2026-01-01T00:00:01.000Z";
    up.event = AuditEvent::Started;
    up.verb = Verb::Up;
    const std::vector<admin::AuditUse> events = {up};
    const auto header = [](const std::string& text) {
        std::string lines;
        for (const auto& line : split_lines(text)) {
            if (line.rfind("#", 0) != 0) break;
            lines += line + "\n";
        }
        return lines;
    };
    const admin::Suggestion free = admin::suggest_policy(
        events, admin::InstallServices{kServices, {"api"}, admin::EngineHold{}}, "d");
    ASSERT_TRUE(has_line(free.text, "MODE_up=auto")) << free.text;
    EXPECT_TRUE(contains(header(free.text),
                         "(a person allows each one on the host):\n# down and init. What"))
        << free.text;
    EXPECT_FALSE(contains(header(free.text), "up and rebuild are `ask`")) << free.text;
    EXPECT_TRUE(contains(header(free.text), "# up and rebuild are not held on this install"))
        << free.text;
    const admin::Suggestion held = admin::suggest_policy(
        events, admin::InstallServices{kServices, {"api"}, admin::EngineHold{"held", "held", ""}},
        "d");
    ASSERT_TRUE(has_line(held.text, "MODE_up=ask")) << held.text;
    EXPECT_TRUE(contains(header(held.text),
                         "(a person allows each one on the host):\n# up, down, rebuild and init."))
        << held.text;
    EXPECT_FALSE(contains(header(held.text), "not held on this install")) << held.text;
}

// tighten_policy against every mode a person may have written for a verb
// and for its api service, with every subset of services used: each key
// the result sets is the tighter of the file's and the learned one, so
// nothing is looser than the person wrote.
TEST(TightenPolicy, EveryKeyIsTheTighterOfTheFileAndWhatWasLearned) {
    const std::vector<std::string> buildable = {"api", "web"};
    const admin::InstallServices install{kServices, buildable};
    const Mode modes[] = {Mode::Auto, Mode::Deny, Mode::DryRun, Mode::Ask};
    const auto looseness = [](Mode m) {
        return m == Mode::Deny ? 0 : m == Mode::DryRun ? 1 : m == Mode::Ask ? 2 : 3;
    };
    for (Verb verb : {Verb::Status, Verb::Restart, Verb::Rebuild, Verb::Down}) {
        const bool takes = verb_arg_kind(verb) != ArgKind::None;
        for (unsigned subset = 0; subset < 4; ++subset) {
            std::vector<admin::AuditUse> events;
            for (unsigned i = 0; i < 2; ++i) {
                if ((subset & (1u << i)) == 0) continue;
                admin::AuditUse u;
                u.seq = events.size() + 1;
                u.ts = "2026-01-01T00:00:0" + std::to_string(u.seq) + ".000Z";
                u.event = AuditEvent::Started;
                u.verb = verb;
                if (takes) u.arg = i == 0 ? "api" : "web";
                events.push_back(u);
            }
            const admin::Suggestion learned = admin::suggest_policy(events, install, "d");
            const common::Policy l = common::parse_policy(learned.text, kServices);
            for (Mode base : modes) {
                for (int own = -1; own < (takes ? 4 : 0); ++own) {
                    std::string file = "# the person's\n";
                    for (Verb v : kAllVerbs) {
                        const std::string key(verb_info(v).policy_key);
                        file += key + "=" +
                                std::string(common::mode_name(v == verb ? base : Mode::Auto)) +
                                "\n";
                        if (v == verb && own >= 0)
                            file += key + ".api=" + std::string(common::mode_name(modes[own])) +
                                    "  \r\n";
                    }
                    const common::Policy was = common::parse_policy(file, kServices);
                    ASSERT_EQ(was.not_understood, "");
                    auto t = admin::tighten_policy(file, learned, kServices, buildable);
                    ASSERT_TRUE(t.ok()) << t.error().message;
                    const common::Policy now = common::parse_policy(t->text, kServices);
                    ASSERT_EQ(now.not_understood, "") << t->text;
                    ASSERT_TRUE(now.warnings.empty()) << now.warnings[0] << "\n" << t->text;
                    for (const std::string& service : kServices) {
                        const std::string sv = takes ? service : "";
                        const Mode a = was.mode(verb, sv);
                        const Mode b = l.mode(verb, sv);
                        const Mode want = looseness(b) < looseness(a) ? b : a;
                        EXPECT_EQ(now.mode(verb, sv), want)
                            << verb_name(verb) << " " << sv << " subset " << subset << "\n"
                            << t->text;
                    }
                    // Every other verb as learned, at most auto as written.
                    for (Verb v : kAllVerbs) {
                        if (v == verb) continue;
                        EXPECT_EQ(now.mode(v), l.mode(v)) << verb_name(v) << "\n" << t->text;
                    }
                    // Each change marked and summed up; unchanged, the text is the file.
                    std::size_t marks = 0;
                    for (const auto& line : split_lines(t->text))
                        if (line.rfind("# policy suggest: ", 0) == 0) ++marks;
                    EXPECT_EQ(marks, t->summary.size()) << t->text;
                    if (t->summary.empty()) {
                        EXPECT_EQ(t->text, file);
                    }
                    EXPECT_TRUE(t->text.starts_with("# the person's\n"));
                }
            }
        }
    }
}

// The pure function, without an install: every verb with every subset of
// {api, db, a removed service}, and an install with no service at all.
TEST(SuggestPolicy, EveryCombinationParsesCleanlyAndSaysWhatRan) {
    const admin::InstallServices install{kServices, {"api", "web"}};
    const std::vector<std::string> candidates = {"api", "db", "web", "old"};
    for (Verb verb : kAllVerbs) {
        for (unsigned subset = 0; subset < (1u << candidates.size()); ++subset) {
            std::vector<admin::AuditUse> events;
            std::uint64_t seq = 0;
            auto add = [&](AuditEvent event, std::optional<std::string> arg) {
                admin::AuditUse u;
                u.seq = ++seq;
                u.ts = "2026-01-0" + std::to_string(1 + seq % 9) + "T00:00:00.000Z";
                u.event = event;
                u.verb = verb;
                u.arg = std::move(arg);
                events.push_back(u);
            };
            const bool takes = verb_arg_kind(verb) != ArgKind::None;
            for (std::size_t i = 0; i < candidates.size(); ++i) {
                if ((subset & (1u << i)) != 0)
                    add(AuditEvent::Started, takes ? std::optional(candidates[i]) : std::nullopt);
            }
            add(AuditEvent::Denied, std::nullopt);
            const admin::Suggestion s = admin::suggest_policy(events, install, "demo");
            const common::Policy p = common::parse_policy(s.text, kServices);
            ASSERT_EQ(p.not_understood, "") << s.text;
            ASSERT_TRUE(p.warnings.empty()) << p.warnings[0];
            for (const auto& [v, mode] : s.verbs) EXPECT_EQ(p.mode(v), mode) << s.text;
            ASSERT_EQ(p.service_rules.size(), s.service_rules.size());
            for (const auto& rule : s.service_rules)
                EXPECT_EQ(p.mode(rule.verb, rule.service), rule.mode);
            const bool ran_any = subset != 0;
            const Mode used = admin::needs_a_person(verb, install.hold) ? Mode::Ask : Mode::Auto;
            for (const auto& service : kServices) {
                const auto i = std::find(candidates.begin(), candidates.end(), service);
                const bool ran_it =
                    i != candidates.end() && (subset & (1u << (i - candidates.begin()))) != 0;
                Mode expected = Mode::Deny;
                if (verb == Verb::Ping) {
                    expected = Mode::Auto;
                } else if (verb_arg_kind(verb) == ArgKind::None) {
                    expected = ran_any ? used : Mode::Deny;
                } else if (verb_arg_kind(verb) == ArgKind::Service) {
                    expected = ran_it ? used : Mode::Deny;
                } else {
                    // Buildable: api and web. Both ran: the verb's own line,
                    // which also covers db and worker (the argv table refuses
                    // them whatever the policy says).
                    const bool buildable = service == "api" || service == "web";
                    const bool every = (subset & 0b101u) == 0b101u;
                    expected = every || (buildable && ran_it) ? used : Mode::Deny;
                }
                EXPECT_EQ(p.mode(verb, takes ? service : ""), expected)
                    << verb_name(verb) << " " << service << " subset " << subset << "\n"
                    << s.text;
            }
            EXPECT_FALSE(admin::needs_a_person(verb, install.hold) &&
                         contains(s.text, std::string(verb_info(verb).policy_key) + "=auto"));
        }
    }
    // No services at all, no events: ping alone.
    const admin::Suggestion none = admin::suggest_policy({}, {}, "demo");
    const common::Policy p = common::parse_policy(none.text);
    EXPECT_EQ(p.not_understood, "");
    EXPECT_TRUE(p.warnings.empty());
    for (Verb verb : kAllVerbs)
        EXPECT_EQ(p.mode(verb), verb == Verb::Ping ? Mode::Auto : Mode::Deny);
}

}  // namespace
}  // namespace hb::test
