// `hostbridge audit`: the table, --json, --tail, --follow and --verify.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class Audit : public ::testing::Test {
  protected:
    void SetUp() override {
        // Three `installed` events (each install changes the rate limit: one
        // that changes nothing writes no event) and one drained ping.
        for (int i = 0; i < 3; ++i) {
            const std::string limit = std::to_string(20 + i) + "/600";
            ASSERT_EQ(
                home.hostbridge(install_args(project, {"--no-systemd", "--rate-limit", limit}))
                    .code,
                0);
        }
    }
    std::string log() const { return home.state_dir("demo-app") + "/audit.jsonl"; }

    TempRoot root;
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(Audit, PrintsATable) {
    const std::string ping = drop_request(project.spool(), "ping");
    Drained drained =
        run_drain_until_answered(exec_start_of(home, "demo-app"), project.spool(), ping);
    ASSERT_EQ(drained.response["state"], "done") << drained.log;
    Ran run = home.hostbridge({"audit", "--slug", "demo-app"});
    ASSERT_EQ(run.code, 0) << run.err;
    auto lines = lines_of(run.out);
    ASSERT_GE(lines.size(), 5u);
    for (const char* column : {"TIME", "EVENT", "VERB", "ARG", "OUTCOME", "DURATION", "REASON"}) {
        EXPECT_TRUE(contains(lines[0], column)) << column;
    }
    EXPECT_TRUE(contains(lines[1], "installed"));
    bool saw_ping = false;
    for (const auto& line : lines) {
        if (contains(line, " ping ")) saw_ping = true;
    }
    EXPECT_TRUE(saw_ping) << run.out;
}

// The agent names a request file so that its row, wrapped by the terminal,
// would read as a second row that never happened: `a`, spaces to the
// terminal's width, then an audit row. Its cell is marked off-schema and
// holds no run of spaces; every row is one line.
TEST_F(Audit, AnOffSchemaNameCannotForgeARow) {
    const std::string forged =
        "a" + std::string(150, ' ') + "2026-12-02T08:00:00.000Z  succeeded    down    exit 0";
    ASSERT_LE(forged.size(), 255u);
    write_file(project.spool() + "/requests/" + forged, "{}");
    const std::string ping = drop_request(project.spool(), "ping");
    Drained drained =
        run_drain_until_answered(exec_start_of(home, "demo-app"), project.spool(), ping);
    ASSERT_EQ(drained.response["state"], "done") << drained.log;
    const Ran json = home.hostbridge({"audit", "--slug", "demo-app", "--json"});
    const Ran run = home.hostbridge({"audit", "--slug", "demo-app"});
    ASSERT_EQ(run.code, 0) << run.err;
    ASSERT_TRUE(contains(json.out, "succeeded    down")) << json.out;  // the log has it raw
    const auto lines = lines_of(run.out);
    EXPECT_EQ(lines.size(), lines_of(json.out).size() + 1) << run.out;  // the header
    bool marked = false;
    for (const auto& line : lines) {
        // Nothing ran `down`, nothing exited 0: only the forgery says so.
        EXPECT_FALSE(contains(line, "down")) << line;
        EXPECT_FALSE(contains(line, "exit 0")) << line;
        marked = marked || contains(line, "?a \\x20\\x20");
    }
    EXPECT_TRUE(marked) << run.out;
}

TEST_F(Audit, JsonIsTheRawLinesAndTailCuts) {
    Ran all = home.hostbridge({"audit", "--slug", "demo-app", "--json"});
    EXPECT_EQ(all.out, read_file(log()));
    Ran tail = home.hostbridge({"audit", "--slug", "demo-app", "--json", "--tail", "1"});
    auto lines = lines_of(tail.out);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(nlohmann::json::parse(lines[0])["seq"], 3);
    Ran table = home.hostbridge({"audit", "--slug", "demo-app", "--tail", "2"});
    EXPECT_EQ(lines_of(table.out).size(), 3u);  // header + 2
}

TEST_F(Audit, VerifyReportsAnIntactChain) {
    Ran run = home.hostbridge({"audit", "--slug", "demo-app", "--verify"});
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(contains(run.out, "audit chain intact: 3 events")) << run.out;
}

TEST_F(Audit, VerifyNamesTheFirstBadLine) {
    auto lines = lines_of(read_file(log()));
    ASSERT_EQ(lines.size(), 3u);
    auto pos = lines[1].find("\"seq\":2");
    ASSERT_NE(pos, std::string::npos);
    lines[1].replace(pos, 7, "\"seq\":7");
    write_file(log(), lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n", 0600);
    Ran run = home.hostbridge({"audit", "--slug", "demo-app", "--verify"});
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "audit.jsonl line 2")) << run.err;
    EXPECT_TRUE(has_line(run.err, lines[1])) << run.err;  // the bad line itself
}

TEST_F(Audit, FollowPrintsNewEvents) {
    int out[2];
    ASSERT_EQ(::pipe(out), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::dup2(out[1], 1);
        for (const auto& e : home.env()) ::putenv(::strdup(e.c_str()));
        ::execl(HB_BIN_DIR "/hostbridge", "hostbridge", "audit", "--slug", "demo-app", "--follow",
                "--json", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(out[1]);
    auto read_until = [&](const std::string& wanted) {
        std::string seen;
        char buf[4096];
        for (int i = 0; i < 200 && !contains(seen, wanted); ++i) {
            pollfd p{out[0], POLLIN, 0};
            if (::poll(&p, 1, 100) > 0) {
                ssize_t n = ::read(out[0], buf, sizeof buf);
                if (n <= 0) break;
                seen.append(buf, static_cast<std::size_t>(n));
            }
        }
        return seen;
    };
    std::string first = read_until("\"seq\":3");
    EXPECT_TRUE(contains(first, "\"seq\":3")) << first;
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    std::string next = read_until("\"seq\":4");
    EXPECT_TRUE(contains(next, "\"seq\":4")) << next;
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    ::close(out[0]);
}

TEST_F(Audit, UsageErrors) {
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--tail", "x"}).code, 2);
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--verify", "--json"}).code, 2);
    Ran unknown = home.hostbridge({"audit", "--slug", "nosuch"});
    EXPECT_EQ(unknown.code, 1);
    EXPECT_TRUE(contains(unknown.err, "no install named nosuch")) << unknown.err;
}

}  // namespace
}  // namespace hb::test
