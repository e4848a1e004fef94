// `hostbridge request` run by a person on the host reports what the audit
// log records, not what the agent may have written into responses/
// (docs/PROTOCOL.md, "A client on the host"; admin/audit/request_audit.hpp). The
// client is stopped (SIGSTOP) while the real drain answers and the agent's
// forgery replaces that answer, so the interleaving is the same every run.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include <gtest/gtest.h>

#include "admin/util/process.hpp"
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

    // `hostbridge request VERB [ARG]` as the person runs it, in the background.
    Child start(const std::vector<std::string>& request) {
        std::vector<std::string> args = {"request", "--project-dir", project.dir, "--timeout",
                                         "60"};
        args.insert(args.end(), request.begin(), request.end());
        Command command = home.command(args);
        command.in = "";
        command.out = out_file();
        command.err = err_file();
        return Child(command);
    }
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
        publish_response(project.spool(), name, body.dump());
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

}  // namespace
}  // namespace hb::test
