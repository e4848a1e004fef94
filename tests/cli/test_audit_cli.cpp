// `hostbridge audit`: the table, --json, --tail, --follow, --verify, --since
// and --all.
#include <signal.h>

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

    TempDir root{"cli"};
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
    auto lines = split_lines(run.out);
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
    // The ping's name sorts first: the drain is stopped only once the
    // forged entry's row is in the log too (it failed once under load).
    Drained drained = run_drain_until_answered(
        exec_start_of(home, "demo-app"), project.spool(), ping, std::chrono::seconds(30),
        [&] { return exists(log()) && contains(read_file(log()), "succeeded    down"); });
    ASSERT_EQ(drained.response["state"], "done") << drained.log;
    const Ran json = home.hostbridge({"audit", "--slug", "demo-app", "--json"});
    const Ran run = home.hostbridge({"audit", "--slug", "demo-app"});
    ASSERT_EQ(run.code, 0) << run.err;
    ASSERT_TRUE(contains(json.out, "succeeded    down")) << json.out;  // the log has it raw
    const auto lines = split_lines(run.out);
    EXPECT_EQ(lines.size(), split_lines(json.out).size() + 1) << run.out;  // the header
    bool marked = false;
    for (const auto& line : lines) {
        // Nothing ran `down`, nothing exited 0: only the forgery says so.
        EXPECT_FALSE(contains(line, "down")) << line;
        EXPECT_FALSE(contains(line, "exit 0")) << line;
        marked = marked || contains(line, "?a \\x20{x149}");
    }
    EXPECT_TRUE(marked) << run.out;
}

TEST_F(Audit, JsonIsTheRawLinesAndTailCuts) {
    Ran all = home.hostbridge({"audit", "--slug", "demo-app", "--json"});
    EXPECT_EQ(all.out, read_file(log()));
    Ran tail = home.hostbridge({"audit", "--slug", "demo-app", "--json", "--tail", "1"});
    auto lines = split_lines(tail.out);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(nlohmann::json::parse(lines[0])["seq"], 3);
    Ran table = home.hostbridge({"audit", "--slug", "demo-app", "--tail", "2"});
    EXPECT_EQ(split_lines(table.out).size(), 3u);  // header + 2
}

TEST_F(Audit, VerifyReportsAnIntactChain) {
    Ran run = home.hostbridge({"audit", "--slug", "demo-app", "--verify"});
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(contains(run.out, "audit chain intact: 3 events")) << run.out;
}

TEST_F(Audit, VerifyNamesTheFirstBadLine) {
    auto lines = split_lines(read_file(log()));
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
    Command command = home.command({"audit", "--slug", "demo-app", "--follow", "--json"});
    command.in = command.err = "";
    Interactive follow(command, Interactive::Via::pipe);
    EXPECT_TRUE(follow.read_until("\"seq\":3", std::chrono::seconds(20))) << follow.shown();
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    EXPECT_TRUE(follow.read_until("\"seq\":4", std::chrono::seconds(20))) << follow.shown();
    follow.child().signal(SIGTERM);
    follow.child().wait();
}

// --since keeps exactly the events at or after the time given (cut here at
// the second event's second, so the test never depends on the clock).
TEST_F(Audit, SinceKeepsExactlyTheEventsFromThatTimeOn) {
    const std::string ping = drop_request(project.spool(), "ping");
    ASSERT_EQ(run_drain_until_answered(exec_start_of(home, "demo-app"), project.spool(), ping)
                  .response["state"],
              "done");
    const auto logged = split_lines(read_file(log()));
    ASSERT_GE(logged.size(), 4u);
    const std::string cut = nlohmann::json::parse(logged[1])["ts"].get<std::string>().substr(0, 19);
    std::vector<std::string> want;
    for (const auto& line : logged) {
        if (nlohmann::json::parse(line)["ts"].get<std::string>() >= cut + ".000Z")
            want.push_back(line);
    }
    Ran since = home.hostbridge({"audit", "--slug", "demo-app", "--json", "--since", cut + "Z"});
    ASSERT_EQ(since.code, 0) << since.err;
    EXPECT_EQ(split_lines(since.out), want);
    Ran future = home.hostbridge({"audit", "--slug", "demo-app", "--since", "2999-01-01"});
    ASSERT_EQ(future.code, 0) << future.err;
    EXPECT_EQ(split_lines(future.out).size(), 1u) << future.out;  // the header alone
    Ran past = home.hostbridge({"audit", "--slug", "demo-app", "--json", "--since", "2000-01-01"});
    EXPECT_EQ(past.out, read_file(log()));
}

// Every install of the person, merged by time: which agent did what.
TEST_F(Audit, AllMergesEveryInstallByTimeWithItsSlug) {
    Project other{root.path(), "other-app"};
    ASSERT_EQ(home.hostbridge(install_args(other, {"--no-systemd"})).code, 0);
    for (const auto& [slug, spool] : {std::pair{std::string("demo-app"), project.spool()},
                                      std::pair{std::string("other-app"), other.spool()}}) {
        const std::string ping = drop_request(spool, "ping");
        ASSERT_EQ(
            run_drain_until_answered(exec_start_of(home, slug), spool, ping).response["state"],
            "done")
            << slug;
    }
    Ran json = home.hostbridge({"audit", "--all", "--json"});
    ASSERT_EQ(json.code, 0) << json.err;
    const auto lines = split_lines(json.out);
    const auto ours = split_lines(read_file(log()));
    const auto theirs = split_lines(read_file(home.state_dir("other-app") + "/audit.jsonl"));
    ASSERT_EQ(lines.size(), ours.size() + theirs.size());
    std::string previous;
    std::size_t from_ours = 0, from_theirs = 0;
    for (const auto& line : lines) {
        nlohmann::ordered_json j = nlohmann::ordered_json::parse(line);
        ASSERT_EQ(j.begin().key(), "slug") << line;
        const std::string slug = j["slug"];
        j.erase("slug");
        // Each line is its log's own line, in its log's order.
        if (slug == "demo-app") {
            EXPECT_EQ(j, nlohmann::ordered_json::parse(ours.at(from_ours++)));
        } else {
            ASSERT_EQ(slug, "other-app");
            EXPECT_EQ(j, nlohmann::ordered_json::parse(theirs.at(from_theirs++)));
        }
        EXPECT_GE(j["ts"].get<std::string>(), previous) << line;
        previous = j["ts"];
    }
    // The table: a SLUG column, the last row other-app's ping.
    Ran table = home.hostbridge({"audit", "--all", "--tail", "2"});
    ASSERT_EQ(table.code, 0) << table.err;
    const auto rows = split_lines(table.out);
    ASSERT_EQ(rows.size(), 3u) << table.out;
    EXPECT_TRUE(rows[0].starts_with("SLUG")) << rows[0];
    EXPECT_TRUE(rows[2].starts_with("other-app") && contains(rows[2], " ping ")) << rows[2];
    // No install needed where the command runs.
    Ran none = home.hostbridge({"audit", "--all", "--since", "2999-01-01"});
    EXPECT_EQ(none.code, 0) << none.err;
}

TEST_F(Audit, UsageErrors) {
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--tail", "x"}).code, 2);
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--verify", "--json"}).code, 2);
    for (const char* since : {"yesterday", "2026-02-30", "2026-12-03T10:00:00", "5x", "-1d", ""}) {
        Ran bad = home.hostbridge({"audit", "--slug", "demo-app", "--since", since});
        EXPECT_EQ(bad.code, 2) << since;
        EXPECT_TRUE(contains(bad.err, "--since takes today, YYYY-MM-DD")) << bad.err;
    }
    EXPECT_EQ(home.hostbridge({"audit", "--all", "--slug", "demo-app"}).code, 2);
    EXPECT_EQ(home.hostbridge({"audit", "--all", "--follow"}).code, 2);
    EXPECT_EQ(home.hostbridge({"audit", "--all", "--verify"}).code, 2);
    EXPECT_EQ(home.hostbridge({"audit", "--slug", "demo-app", "--verify", "--since", "1d"}).code,
              2);
    Ran unknown = home.hostbridge({"audit", "--slug", "nosuch"});
    EXPECT_EQ(unknown.code, 1);
    EXPECT_TRUE(contains(unknown.err, "no install named nosuch")) << unknown.err;
}

}  // namespace
}  // namespace hb::test
