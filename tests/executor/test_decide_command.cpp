// Running the command, end to end through the real drain: a non-zero exit, a
// signal, a command that cannot start, a timeout that kills the whole
// process group, a background daemon that keeps stdout open, the fds and the
// environment the command sees, a planted log, and the response's output
// (the last 16 KiB cut at a UTF-8 boundary, invalid bytes replaced).
#include <gtest/gtest.h>
#include <unistd.h>

#include <pwd.h>
#include <chrono>
#include <thread>

#include <set>

#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::split_lines;
using hb::test::StackFixture;
namespace fs = hb::test::fs;

hb::test::json final_response(const StackFixture& f, const std::string& name) {
    auto r = f.response(name);
    if (!r) throw std::runtime_error("no response for " + name);
    return *r;
}

TEST(DecideCommand, NonZeroExitIsFailedWithItsExitCode) {
    StackFixture f;
    f.behave("exit=3");
    const std::string name = f.publish("logs", "db");
    f.drain();
    const auto r = final_response(f, name);
    EXPECT_EQ(r["state"], "failed");
    EXPECT_EQ(r["exit_code"], 3);
    EXPECT_EQ(r["reason"], "exited with status 3");
    EXPECT_EQ(r["output"], "exiting with 3\n");
    EXPECT_EQ(r["log"], "archive/" + name + ".log");
    EXPECT_EQ(hb::test::read_file(f.path("archive", name + ".log")), "exiting with 3\n");
    const auto failed = f.audit_for(name, "failed");
    ASSERT_EQ(failed.size(), 1U);
    EXPECT_EQ(failed[0]["exit_code"], 3);
    EXPECT_EQ(failed[0]["reason"], "exited with status 3");
    EXPECT_EQ(f.audit_for(name, "started").size(), 1U);
}

TEST(DecideCommand, ACommandKilledByASignalIsFailed) {
    StackFixture f;
    f.behave("killself");
    const std::string name = f.publish("status");
    f.drain();
    const auto r = final_response(f, name);
    EXPECT_EQ(r["state"], "failed");
    EXPECT_TRUE(r["exit_code"].is_null());
    EXPECT_EQ(r["reason"], "killed by signal 9");
    EXPECT_EQ(f.audit_reason(name, "failed"), "killed by signal 9");
}

TEST(DecideCommand, AStackThatCannotStartIsFailedAndSaysWhy) {
    StackFixture f;
    // The run tree's copy is always executable (executor/run_tree.cpp), so
    // an approved script whose interpreter is missing: execve fails ENOENT.
    hb::test::write_file(f.stack, "#!/nonexistent/interpreter\n");
    f.pin({"stack"});
    const std::string name = f.publish("status");
    f.drain();
    const auto r = final_response(f, name);
    EXPECT_EQ(r["state"], "failed");
    EXPECT_TRUE(r["exit_code"].is_null());
    EXPECT_EQ(r["reason"], "command could not be started: cannot execute " + f.root +
                               "/run/project/stack: No such file or directory");
    EXPECT_EQ(f.audit_for(name, "failed").size(), 1U);
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideCommand, TimeoutKillsTheWholeProcessGroup) {
    StackFixture f;
    f.config["timeouts"] = {{"default", 2}, {"rebuild", 1}};
    f.write_config();
    f.behave("timeout");
    const std::string status = f.publish("status");
    f.drain();
    const auto r = final_response(f, status);
    EXPECT_EQ(r["state"], "failed");
    EXPECT_EQ(r["reason"], "timeout after 2 s");
    EXPECT_TRUE(r["exit_code"].is_null());
    EXPECT_EQ(r["log"], "archive/" + status + ".log");
    const auto failed = f.audit_for(status, "failed");
    ASSERT_EQ(failed.size(), 1U);
    EXPECT_EQ(failed[0]["reason"], "timeout after 2 s");
    EXPECT_TRUE(failed[0]["exit_code"].is_null());

    const pid_t pgid = std::stoi(f.ctl_file("pgid"));
    const pid_t grandchild = std::stoi(f.ctl_file("grandchild"));
    ASSERT_GT(pgid, 1);
    ASSERT_GT(grandchild, 1);
    // The sleeping grandchild ignored SIGTERM; the group's SIGKILL took it
    // (a killed process still needs a moment to finish exiting).
    EXPECT_TRUE(hb::test::wait_until([&] { return !hb::test::process_alive(grandchild); },
                                     std::chrono::seconds(10)));
    EXPECT_TRUE(hb::test::wait_until([&] { return hb::test::live_group_members(pgid).empty(); },
                                     std::chrono::seconds(10)));

    // rebuild has its own timeout.
    const std::string rebuild = f.publish("rebuild", "api");
    f.drain();
    EXPECT_EQ(final_response(f, rebuild)["reason"], "timeout after 1 s");
    const pid_t second = std::stoi(f.ctl_file("pgid"));
    EXPECT_NE(second, pgid);
    EXPECT_TRUE(hb::test::wait_until([&] { return hb::test::live_group_members(second).empty(); },
                                     std::chrono::seconds(10)));
}

TEST(DecideCommand, ABackgroundDaemonKeepingStdoutOpenDoesNotHangTheDrain) {
    StackFixture f;
    f.behave("daemon");  // sleep 60 in the background, holding the log open
    const std::string name = f.publish("up");
    const std::string after = f.publish("status");
    const auto exit = f.finish(f.start(), std::chrono::seconds(30));
    // One daemon per call, each still there holding its log: the drain did
    // not wait for them. Then they go.
    std::vector<pid_t> daemons;
    std::istringstream pids(f.ctl_file("daemons"));
    for (pid_t pid; pids >> pid;) daemons.push_back(pid);
    // `$!` is the forked shell until it has exec'd sleep: on a busy machine
    // the drain can be done before that, so each is given a moment to.
    const auto sleeping = [](pid_t daemon) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (hb::test::process_alive(daemon)) {
            const std::string cmdline =
                hb::test::read_file("/proc/" + std::to_string(daemon) + "/cmdline");
            if (cmdline.rfind("sleep", 0) == 0) return true;
            if (std::chrono::steady_clock::now() > until) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    };
    std::size_t alive = 0;
    for (pid_t daemon : daemons) {
        if (!sleeping(daemon)) continue;
        ++alive;
        ::kill(daemon, SIGKILL);
    }
    EXPECT_EQ(exit.code, 0) << exit.err;
    EXPECT_EQ(daemons.size(), 2U);
    EXPECT_EQ(alive, 2U);
    EXPECT_EQ(final_response(f, name)["state"], "done");
    // A change that went live answers none of the command's text; the log has it.
    EXPECT_EQ(final_response(f, name)["output"], "");
    EXPECT_EQ(hb::test::read_file(f.path("archive", name + ".log")), "started\n");
    EXPECT_EQ(final_response(f, after)["state"], "done");
}

TEST(DecideCommand, TheCommandSeesOnlyFds0To2) {
    StackFixture f;
    f.behave("fds");
    const std::string name = f.publish("status");
    f.drain();
    const auto r = final_response(f, name);
    ASSERT_EQ(r["state"], "done") << r.dump();
    // `ls -l /proc/<shell>/fd`: "... 0 -> /dev/null"; the shell's own
    // descriptor for its script (dash keeps it on a high fd) is its own.
    const std::string log = f.path("archive", name + ".log");
    std::map<int, std::string> fds;
    for (const auto& line : split_lines(r["output"].get<std::string>())) {
        const auto arrow = line.find(" -> ");
        if (arrow == std::string::npos) continue;
        const auto space = line.rfind(' ', arrow - 1);
        fds[std::stoi(line.substr(space + 1, arrow - space - 1))] = line.substr(arrow + 4);
    }
    ASSERT_TRUE(fds.count(0) && fds.count(1) && fds.count(2)) << r["output"];
    EXPECT_EQ(fds[0], "/dev/null");
    EXPECT_EQ(fds[1], log);
    EXPECT_EQ(fds[2], log);
    for (const auto& [fd, target] : fds) {
        if (fd <= 2) continue;
        EXPECT_EQ(target, f.root + "/run/project/stack")
            << "fd " << fd << " leaked into the command";
    }
}

TEST(DecideCommand, TheCommandSeesExactlyTheFixedEnvironmentInTheRunTree) {
    StackFixture f;
    f.behave("env");
    const std::string name = f.publish("status");
    f.drain();
    const auto r = final_response(f, name);
    ASSERT_EQ(r["state"], "done") << r.dump();
    std::vector<std::string> seen = split_lines(r["output"].get<std::string>());
    std::sort(seen.begin(), seen.end());
    const passwd* pw = ::getpwuid(::getuid());
    ASSERT_NE(pw, nullptr);
    // The drain itself runs with an empty environment here (DrainFixture),
    // so XDG_RUNTIME_DIR has nothing to pass on.
    std::vector<std::string> expected = {
        "HOME=" + std::string(pw->pw_dir),
        "LANG=C.UTF-8",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOSTBRIDGE_PROJECT_DIR=" + f.project,
        "HOSTBRIDGE_RUN_DIR=" + f.root + "/run/project",
        "cwd=" + f.root + "/run/project"};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(seen, expected);
}

TEST(DecideCommand, APlantedLogIsQuarantinedAndAFreshOneCreated) {
    StackFixture f;
    f.behave("exit=0");
    // A regular file and a symlink planted under the names the logs will take.
    const std::string planted_file = f.name("status");
    const std::string planted_link = f.name("status");
    hb::test::write_file(f.path("archive", planted_file + ".log"), "planted by the agent\n");
    const std::string victim = f.root + "/victim";
    hb::test::write_file(victim, "outside the spool\n");
    fs::create_symlink(victim, f.path("archive", planted_link + ".log"));
    f.publish_as(planted_file, StackFixture::body("status"));
    f.publish_as(planted_link, StackFixture::body("status"));
    f.drain();

    for (const auto& name : {planted_file, planted_link}) {
        SCOPED_TRACE(name);
        const auto r = final_response(f, name);
        EXPECT_EQ(r["state"], "done");
        EXPECT_EQ(r["output"], "exiting with 0\n");
        const std::string log = f.path("archive", name + ".log");
        EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(log)));
        EXPECT_EQ(hb::test::read_file(log), "exiting with 0\n");
    }
    EXPECT_EQ(hb::test::read_file(victim), "outside the spool\n");
    // Both planted entries kept as evidence, under their own names.
    const auto quarantined = f.list("quarantine");
    ASSERT_EQ(quarantined.size(), 2U) << ::testing::PrintToString(quarantined);
    EXPECT_EQ(quarantined[0], planted_file + ".log");
    EXPECT_EQ(quarantined[1], planted_link + ".log");
    EXPECT_EQ(hb::test::read_file(f.path("quarantine", planted_file + ".log")),
              "planted by the agent\n");
    EXPECT_TRUE(fs::is_symlink(f.path("quarantine", planted_link + ".log")));
    // The audit log describes each planted entry: the agent can delete the
    // quarantined copy, not the log.
    for (const auto& name : {planted_file, planted_link}) {
        bool described = false;
        for (const auto& line : f.audit()) {
            if (line["event"] == "quarantined" && line["request"] == name + ".log") {
                const std::string reason = line["reason"];
                described = reason.find("planted in archive/") != std::string::npos;
            }
        }
        EXPECT_TRUE(described) << name;
    }
}

TEST(DecideCommand, OutputWithQuotesNewlinesAndNonAsciiArrivesByteExact) {
    StackFixture f;
    const std::string payload =
        "say \"hi\" and 'bye'\n\\ back\\slash\ttab\r\n"
        "\xc3\xbcn\xc3\xaf"
        "c\xc3\xb6"
        "d\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x8e\x89\n"
        "\x01\x1b[31mcontrol\x1b[0m\n{\"json\": [1, 2]}\n";
    hb::test::write_file(f.ctl + "/payload", payload);
    f.behave("cat");
    const std::string name = f.publish("logs", "web");
    f.drain();
    const auto r = final_response(f, name);
    EXPECT_EQ(r["state"], "done");
    EXPECT_EQ(r["output"], payload);
}

// The response writer's rule, written out independently: the last `max`
// bytes, orphaned continuation bytes at the cut dropped, each invalid byte
// (here only 0xFF) replaced by U+FFFD.
std::string expected_tail(const std::string& bytes, std::size_t max) {
    std::string tail = bytes.size() > max ? bytes.substr(bytes.size() - max) : bytes;
    std::size_t skip = 0;
    while (skip < 3 && skip < tail.size() &&
           (static_cast<unsigned char>(tail[skip]) & 0xC0) == 0x80) {
        ++skip;
    }
    tail.erase(0, skip);
    std::string out;
    for (char c : tail) {
        if (static_cast<unsigned char>(c) == 0xFF) {
            out += "\xEF\xBF\xBD";
        } else {
            out += c;
        }
    }
    return out;
}

TEST(DecideCommand, OutputIsTheLast16KiBCutAtACharacterWithInvalidBytesReplaced) {
    StackFixture f;
    // 20 KiB of one-to-four-byte characters, an invalid byte near the end,
    // and the 16 KiB cut landing inside a four-byte character.
    const std::string unit = "a\xc3\xb1\xe2\x82\xac\xf0\x9f\x98\x80\n";  // a ñ € 😀
    std::string payload = "BEGIN\n";
    while (payload.size() < 20 * 1024) payload += unit;
    payload += "bad \xff byte\nend\n";
    const auto cut_is_inside_a_character = [&] {
        return (static_cast<unsigned char>(payload[payload.size() - 16384]) & 0xC0) == 0x80;
    };
    for (int pad = 0; pad < 11 && !cut_is_inside_a_character(); ++pad) payload += "x";
    ASSERT_EQ(static_cast<unsigned char>(payload[payload.size() - 16384]) & 0xC0, 0x80);
    hb::test::write_file(f.ctl + "/payload", payload);
    f.behave("cat");
    const std::string name = f.publish("logs", "api");
    f.drain();
    const auto r = final_response(f, name);
    EXPECT_EQ(r["state"], "done");
    const std::string output = r["output"].get<std::string>();
    EXPECT_EQ(output, expected_tail(payload, 16384));
    // The character split by the cut is dropped, not reported as invalid.
    EXPECT_EQ(output.rfind("\xEF\xBF\xBD", 0), std::string::npos);
    EXPECT_NE(output.find("bad \xEF\xBF\xBD byte"), std::string::npos);
    EXPECT_EQ(output.find("BEGIN"), std::string::npos);
    // The log keeps everything, byte for byte.
    EXPECT_EQ(hb::test::read_file(f.path("archive", name + ".log")), payload);
}

}  // namespace
