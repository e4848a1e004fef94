// `hostbridge request` run by a person on the host reports what the audit
// log records, not what the agent may have written into responses/
// (docs/PROTOCOL.md, "A client on the host"; client/request/audit_lookup.hpp),
// and uses only the spool of one of the person's installs, opened with no
// link followed (docs/agent-clients.md, "On the host";
// client/request/host_install.hpp). The client is stopped (SIGSTOP) while
// the real drain answers and the agent's forgery replaces that answer, so
// the interleaving is the same every run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "admin/util/process.hpp"
#include "ipc/unique_fd.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

struct Finished {
    int code = -1;
    std::string out;
    std::string err;
};

class RequestOnHost : public ::testing::Test {
  protected:
    void SetUp() override {
        Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
        ASSERT_EQ(run.code, 0) << run.out << run.err;
    }

    // `hostbridge request VERB [ARG]` as the person runs it, in the
    // background: with --project-dir, or without it in `cwd`.
    Child start(const std::vector<std::string>& request, const std::string& cwd = "") {
        std::vector<std::string> args = {"request"};
        if (cwd.empty()) args.insert(args.end(), {"--project-dir", project.dir});
        args.insert(args.end(), {"--timeout", "60"});
        args.insert(args.end(), request.begin(), request.end());
        Command command = home.command(args);
        if (!cwd.empty()) command.cwd = cwd;
        command.in = "";
        command.out = out_file();
        command.err = err_file();
        return Child(command);
    }
    // The host's hostbridge-agent, as a host harness registers it:
    // `request VERB [ARG]`, or `mcp` answering one tools/call of `tool`.
    Child start_agent(const std::vector<std::string>& request) {
        Command command = home.command({});
        command.argv = {std::string(HB_BIN_DIR) + "/hostbridge-agent",
                        "request",
                        "--project-dir",
                        project.dir,
                        "--timeout",
                        "60"};
        command.argv.insert(command.argv.end(), request.begin(), request.end());
        command.in = "";
        command.out = out_file();
        command.err = err_file();
        return Child(command);
    }
    // stdin a FIFO this test holds open: its end would cancel the call.
    Child start_mcp(const std::string& call) {
        Command command = home.command({});
        command.argv = {std::string(HB_BIN_DIR) + "/hostbridge-agent",
                        "mcp",
                        "--project-dir",
                        project.dir,
                        "--timeout",
                        "60"};
        command.in = root.path() + "/mcp.in";
        EXPECT_EQ(::mkfifo(command.in.c_str(), 0600), 0);
        mcp_in = UniqueFd(::open(command.in.c_str(), O_RDWR | O_CLOEXEC));
        const std::string lines =
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
            R"("2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
            "\n"
            R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
            "\n" +
            call + "\n";
        EXPECT_EQ(::write(mcp_in.get(), lines.data(), lines.size()),
                  static_cast<ssize_t>(lines.size()));
        command.out = out_file();
        command.err = err_file();
        return Child(command);
    }
    UniqueFd mcp_in;
    std::string out_file() const { return root.path() + "/client.out"; }
    std::string err_file() const { return root.path() + "/client.err"; }

    // The name of the request the client published, once it is in requests/.
    std::string published() {
        return wait_for_json(project.spool() + "/requests", std::chrono::seconds(30));
    }

    // Stopped, and seen stopped (left waitable: the Child still reaps it).
    static void stop(const Child& c) {
        c.signal(SIGSTOP);
        siginfo_t info{};
        ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(c.pid()), &info, WSTOPPED | WEXITED | WNOWAIT),
                  0);
        ASSERT_EQ(info.si_code, CLD_STOPPED);
    }

    // Bounded: a client left waiting on a request some drain took up but
    // never answered would otherwise hang the test until ctest's timeout
    // with its output lost (a sanitized loaded run did, once: issue 26).
    Finished resume_and_wait(Child& c) const {
        c.signal(SIGCONT);
        if (const auto code = c.wait_for(std::chrono::seconds(90))) {
            return {*code, read_file(out_file()), read_file(err_file())};
        }
        c.wait_or_kill(std::chrono::milliseconds(0));
        return {-2, read_file(out_file()),
                "(the client was still waiting after 90 s)\n" + read_file(err_file())};
    }

    // One drain of the install, as its unit would run it.
    void drain() {
        std::vector<std::string> argv = {
            home.lib_dir("demo-app") + "/hostbridge-executor", "drain",    "--config",
            home.config_dir("demo-app") + "/bridge.json",      "--linger", "0"};
        if (::geteuid() == 0) argv.push_back("--allow-root");
        admin::RunOptions options;
        options.timeout = std::chrono::seconds(60);
        options.env_set = home.env();
        auto ran = admin::run_process(argv, options);
        ASSERT_TRUE(ran && !ran->timed_out && ran->exit_code == 0)
            << (ran ? (ran->timed_out ? "the drain ran past 60 s\n" : "") + ran->err
                    : ran.error().message);
    }

    // What the agent does from its container: a whole new file renamed over
    // the response.
    void forge(const std::string& name, const nlohmann::json& body) {
        forge_in(project.spool(), name, body);
    }
    // What the agent does before the drain takes the request up: a file of
    // the same name renamed over it, `key` changed from `was` to `now`.
    void replace(const std::string& name, const std::string& key, const std::string& was,
                 const std::string& now) {
        const std::string file = project.spool() + "/requests/" + name;
        nlohmann::json body = nlohmann::json::parse(read_file(file));
        ASSERT_EQ(body[key], was);
        body[key] = now;
        write_file(project.spool() + "/tmp/swap", body.dump() + "\n");
        ASSERT_EQ(::rename((project.spool() + "/tmp/swap").c_str(), file.c_str()), 0);
    }
    static void forge_in(const std::string& spool, const std::string& name,
                         const nlohmann::json& body) {
        publish_response(spool, name, body.dump());
    }

    static nlohmann::json done_answer(const std::string& name, const std::string& output) {
        return {{"request", name},         {"state", "done"},
                {"verb", "restart"},       {"arg", "api"},
                {"requested_at", nullptr}, {"updated_at", "2026-12-02T00:00:01Z"},
                {"expires_at", nullptr},   {"exit_code", 0},
                {"reason", nullptr},       {"output", output},
                {"log", nullptr}};
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(RequestOnHost, AnAnswerTheExecutorWroteIsReportedAsItIs) {
    Child c = start({"status"});
    ASSERT_FALSE(published().empty());
    ASSERT_NO_FATAL_FAILURE(drain());
    Finished f = resume_and_wait(c);
    EXPECT_EQ(f.code, 0) << f.err;
    EXPECT_EQ(f.err.find("audit log"), std::string::npos) << f.err;
}

// The host refused the request; the agent rewrites the answer as `done`.
TEST_F(RequestOnHost, AForgedDoneOverARefusalIsReportedAsTheRefusalTheLogRecords) {
    Child c = start({"restart", "nosuch"});
    const std::string name = published();
    ASSERT_FALSE(name.empty());
    stop(c);
    ASSERT_NO_FATAL_FAILURE(drain());
    const std::string real = read_file(project.spool() + "/responses/" + name + ".response.json");
    ASSERT_NE(real.find("\"denied\""), std::string::npos) << real;
    forge(name, done_answer(name, "restarted nosuch\n"));
    Finished f = resume_and_wait(c);
    EXPECT_EQ(f.code, 70) << f.err;
    EXPECT_NE(f.err.find("the spool's answer (`done` exit code 0) is not what the audit log"),
              std::string::npos)
        << f.err;
    EXPECT_NE(f.err.find("records: `denied`"), std::string::npos) << f.err;
    EXPECT_NE(f.err.find("the output shown is the spool's and unconfirmed"), std::string::npos)
        << f.err;
    EXPECT_NE(f.err.find("hostbridge request: denied: arg is not a known service"),
              std::string::npos)
        << f.err;
}

// Nothing ran at all: the agent answers its own request before any drain.
TEST_F(RequestOnHost, AnAnswerNoDrainWroteIsNotReportedAsDone) {
    Child c = start({"restart", "api"});
    const std::string name = published();
    ASSERT_FALSE(name.empty());
    forge(name, done_answer(name, "restarted api\n"));
    Finished f = resume_and_wait(c);
    EXPECT_EQ(f.code, 70) << f.err;
    EXPECT_NE(f.err.find("records no end of request " + name), std::string::npos) << f.err;
    EXPECT_EQ(read_file(project.calls), "") << "nothing may have run";
}

// The cursor of a windowed answer is the spool's alone (the log records no
// cursor): shown only where the log confirms the request done, never for an
// answer no drain wrote.
TEST_F(RequestOnHost, AForgedWindowedAnswerNoDrainWroteShowsNoCursor) {
    Child c = start({"--lines", "5", "logs", "api"});
    const std::string name = published();
    ASSERT_FALSE(name.empty());
    nlohmann::json forged = done_answer(name, "api: all good\n");
    forged["verb"] = "logs";
    forged["cursor"] = "1764762565926492145:2";
    forged["more"] = true;
    forge(name, forged);
    Finished f = resume_and_wait(c);
    EXPECT_EQ(f.code, 70) << f.err;
    EXPECT_NE(f.err.find("records no end of request " + name), std::string::npos) << f.err;
    EXPECT_EQ(f.err.find("cursor:"), std::string::npos) << f.err;
    EXPECT_EQ(f.err.find("more:"), std::string::npos) << f.err;
}

// Issue 45, a planted spool: the agent plants an empty `src/.git/`
// (git ignores it) and a spool of its own in src/, then answers whatever
// lands there `done`. The person runs `hostbridge request status` in src/:
// the request goes to the install's spool, which the drain answers.
TEST_F(RequestOnHost, AnEmptyGitAndASpoolPlantedInASubdirectoryAreNotUsed) {
    const std::string fake = project.dir + "/src/untracked/hostbridge";
    ASSERT_TRUE(::mkdir((project.dir + "/src").c_str(), 0755) == 0);
    ASSERT_TRUE(::mkdir((project.dir + "/src/.git").c_str(), 0755) == 0);
    for (const char* dir : {"tmp", "requests", "responses"})
        write_file(fake + "/" + dir + "/.keep", "");
    Child c = start({"status"}, project.dir + "/src");
    std::string real, planted;
    for (int i = 0; i < 300 && real.empty() && planted.empty(); ++i) {
        real = wait_for_json(project.spool() + "/requests", std::chrono::milliseconds(50));
        planted = wait_for_json(fake + "/requests", std::chrono::milliseconds(50));
    }
    if (!planted.empty())
        forge_in(fake, planted, done_answer(planted, "all healthy (agent-forged)\n"));
    if (!real.empty()) {
        ASSERT_NO_FATAL_FAILURE(drain());
    }
    Finished f = resume_and_wait(c);
    EXPECT_TRUE(planted.empty()) << "the request went to the agent's spool in src/";
    EXPECT_FALSE(real.empty()) << "the request never reached the install's spool";
    EXPECT_EQ(f.out.find("agent-forged"), std::string::npos) << f.out;
    EXPECT_EQ(f.code, 0) << f.err;
}

// A spool that no install of this user serves is refused, named: there is
// no log to check its answers against.
TEST_F(RequestOnHost, ASpoolNoInstallServesIsRefused) {
    const std::string fake = project.dir + "/src/untracked/hostbridge";
    for (const char* dir : {"tmp", "requests", "responses"})
        write_file(fake + "/" + dir + "/.keep", "");
    Ran run = home.hostbridge({"request", "--no-wait", "ping"}, project.dir + "/src",
                              {"HOSTBRIDGE_SPOOL=" + fake});
    EXPECT_EQ(run.code, 64) << run.out << run.err;
    EXPECT_NE(run.err.find("HOSTBRIDGE_SPOOL=" + fake +
                           " is not the spool of any hostbridge install of yours"),
              std::string::npos)
        << run.err;
    EXPECT_EQ(files_under(fake + "/requests"), std::vector<std::string>{".keep"});
    // Outside every install, nothing is guessed either.
    Ran elsewhere = home.hostbridge({"request", "--no-wait", "ping"}, root.path());
    EXPECT_EQ(elsewhere.code, 64) << elsewhere.out << elsewhere.err;
    EXPECT_NE(elsewhere.err.find("no hostbridge install of yours covers"), std::string::npos)
        << elsewhere.err;
}

// Issue 45, a swapped request: the agent replaces the person's `restart web`
// in requests/ by a same-named `restart api`, then rewrites the answer to
// read as web's. The log's `started` event says api ran: never `done`.
TEST_F(RequestOnHost, ARequestReplacedInTheSpoolIsReportedAsWhatRan) {
    Child c = start({"restart", "web"});
    const std::string name = published();
    ASSERT_FALSE(name.empty());
    stop(c);
    ASSERT_NO_FATAL_FAILURE(replace(name, "arg", "web", "api"));
    ASSERT_NO_FATAL_FAILURE(drain());
    EXPECT_TRUE(has_line(read_file(project.calls), "restart api")) << read_file(project.calls);
    nlohmann::json forged = done_answer(name, "stack ran: restart web\n");
    forged["arg"] = "web";
    forge(name, forged);
    Finished f = resume_and_wait(c);
    EXPECT_EQ(f.code, 70) << f.err;
    EXPECT_NE(f.err.find("the bridge ran `restart api`, not what you asked (`restart web`)"),
              std::string::npos)
        << f.err;
    EXPECT_NE(f.err.find("the log records `succeeded` exit code 0"), std::string::npos) << f.err;
}

// The host's hostbridge-agent reads the same log (client/request/
// audit_lookup.hpp): its `request` and its MCP server's answer say what ran.
TEST_F(RequestOnHost, TheHostsAgentClientAndMcpServerReportAReplacedRequestAsWhatRan) {
    for (const bool mcp : {false, true}) {
        Child c = mcp ? start_mcp(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":)"
                                  R"({"name":"restart","arguments":{"service":"web"}}})")
                      : start_agent({"restart", "web"});
        const std::string name = published();
        ASSERT_FALSE(name.empty()) << read_file(err_file()) << read_file(out_file());
        stop(c);
        ASSERT_NO_FATAL_FAILURE(replace(name, "arg", "web", "api"));
        ASSERT_NO_FATAL_FAILURE(drain());
        nlohmann::json forged = done_answer(name, "stack ran: restart web\n");
        forged["arg"] = "web";
        forge(name, forged);
        if (mcp) {
            // The call's answer, then the end of stdin ends the server.
            c.signal(SIGCONT);
            for (int i = 0; i < 900 && !contains(read_file(out_file()), R"("id":2)"); ++i)
                ::usleep(100 * 1000);
            mcp_in.reset();
        }
        Finished f = resume_and_wait(c);
        const std::string said = mcp ? f.out : f.err;
        EXPECT_EQ(f.code, mcp ? 0 : 70) << f.out << f.err;
        EXPECT_NE(said.find("the bridge ran `restart api`, not what you asked (`restart web`)"),
                  std::string::npos)
            << (mcp ? "mcp: " : "request: ") << said;
        if (mcp) {
            EXPECT_NE(f.out.find(R"("isError":true)"), std::string::npos) << f.out;
        }
    }
}

// The same for the log window: the final event's detail records the
// window the executor was asked for.
TEST_F(RequestOnHost, AWindowReplacedInTheSpoolIsReportedAsSuch) {
    Child c = start({"--lines", "5", "logs", "api"});
    const std::string name = published();
    ASSERT_FALSE(name.empty());
    stop(c);
    ASSERT_NO_FATAL_FAILURE(replace(name, "lines", "5", "7"));
    ASSERT_NO_FATAL_FAILURE(drain());
    Finished f = resume_and_wait(c);
    EXPECT_EQ(f.code, 70) << f.err;
    EXPECT_NE(f.err.find("`logs api --lines 7`, not what you asked (`logs api --lines 5`)"),
              std::string::npos)
        << f.err;
}

// Issue 45, a linked untracked/: two installs of one person; the
// agent of A makes A's `untracked/` a link to B's. Every host client
// pointed at A (by --project-dir, by the current directory; the host's
// hostbridge-agent, request and mcp, as a host harness registers it)
// refuses A's spool and writes nothing into B's, whose bridge would run it.
class RequestUntrackedLink : public ::testing::TestWithParam<std::string> {};

TEST_P(RequestUntrackedLink, AHostClientNeverFollowsALinkOutOfTheCheckout) {
    TempDir root{"cli"};
    Home home{root.path()};
    Project a{root.path(), "demo-app"};
    Project b{root.path(), "other-app"};
    ASSERT_EQ(home.hostbridge(install_args(a, {"--no-systemd"})).code, 0);
    ASSERT_EQ(home.hostbridge(install_args(b, {"--no-systemd"})).code, 0);
    const std::string untracked = a.dir + "/untracked";
    ASSERT_EQ(::rename(untracked.c_str(), (a.dir + "/untracked.real").c_str()), 0);
    ASSERT_EQ(::symlink((b.dir + "/untracked").c_str(), untracked.c_str()), 0);
    Command command = home.command({"request", "--project-dir", a.dir, "--no-wait", "ping"});
    if (GetParam() == "cwd") command.argv = {command.argv[0], "request", "--no-wait", "ping"};
    if (GetParam() == "agent")
        command.argv = {std::string(HB_BIN_DIR) + "/hostbridge-agent",
                        "request",
                        "--project-dir",
                        a.dir,
                        "--no-wait",
                        "ping"};
    if (GetParam() == "mcp") {
        // One tools/call, then the end of stdin ends the server (exit 0);
        // the refusal is the call's answer.
        command.argv = {std::string(HB_BIN_DIR) + "/hostbridge-agent",
                        "mcp",
                        "--project-dir",
                        a.dir,
                        "--timeout",
                        "2"};
        command.in = root.path() + "/in";
        write_file(command.in,
                   R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
                   R"("2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})"
                   "\n"
                   R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                   "\n"
                   R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping",)"
                   R"("arguments":{}}})"
                   "\n");
    }
    command.cwd = a.dir;
    command.out = root.path() + "/out";
    command.err = root.path() + "/err";
    const int code = Child(command).wait();
    const std::string out = read_file(root.path() + "/out");
    const std::string err = read_file(root.path() + "/err");
    const std::string said = GetParam() == "mcp" ? out : err;
    EXPECT_EQ(code == 0, GetParam() == "mcp") << out << err;
    EXPECT_TRUE(contains(said, untracked + " is a symlink or not a directory")) << out << err;
    EXPECT_TRUE(files_under(b.spool() + "/requests").empty())
        << "the request landed in the other project's spool";
}

INSTANTIATE_TEST_SUITE_P(Clients, RequestUntrackedLink,
                         ::testing::Values("project_dir", "cwd", "agent", "mcp"),
                         [](const auto& param_info) { return param_info.param; });

}  // namespace
}  // namespace hb::test
