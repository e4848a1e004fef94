// `hostbridge request` run by a person on the host reports what the audit
// log records, not what the agent may have written into responses/
// (docs/PROTOCOL.md, "A client on the host"; admin/audit/request_audit.hpp). The
// client is stopped (SIGSTOP) while the real drain answers and the agent's
// forgery replaces that answer, so the interleaving is the same every run.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "admin/util/process.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

struct Client {
    pid_t pid = -1;
    std::string out_file;
    std::string err_file;
};

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
    Client start(const std::vector<std::string>& request) {
        Client c;
        c.out_file = root.path() + "/client.out";
        c.err_file = root.path() + "/client.err";
        std::vector<std::string> args = {std::string(HB_BIN_DIR) + "/hostbridge",
                                         "request",
                                         "--project-dir",
                                         project.dir,
                                         "--timeout",
                                         "60"};
        args.insert(args.end(), request.begin(), request.end());
        // Everything the child needs is made before fork(): between fork and
        // exec only async-signal-safe calls (no malloc in a sanitized
        // child of a threaded parent).
        std::vector<std::string> environment = home.env();
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        std::vector<char*> envp;
        for (auto& e : environment) envp.push_back(e.data());
        envp.push_back(nullptr);
        const int out = ::open(c.out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        const int err = ::open(c.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        c.pid = ::fork();
        if (c.pid == 0) {
            ::dup2(out, STDOUT_FILENO);
            ::dup2(err, STDERR_FILENO);
            ::execve(argv[0], argv.data(), envp.data());
            ::_exit(127);
        }
        ::close(out);
        ::close(err);
        return c;
    }

    // The name of the request the client published, once it is in requests/.
    std::string published() {
        const std::string requests = project.spool() + "/requests";
        for (int i = 0; i < 3000; ++i) {
            for (const auto& entry : std::filesystem::directory_iterator(requests))
                return entry.path().filename().string();
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return "";
    }

    static void stop(const Client& c) {
        ASSERT_EQ(::kill(c.pid, SIGSTOP), 0);
        int status = 0;
        ASSERT_EQ(::waitpid(c.pid, &status, WUNTRACED), c.pid);
        ASSERT_TRUE(WIFSTOPPED(status));
    }

    // Bounded: a client left waiting on a request some drain took up but
    // never answered would otherwise hang the test until ctest's timeout
    // with its output lost (a sanitized loaded run did, once: issue 26).
    static Finished resume_and_wait(const Client& c) {
        ::kill(c.pid, SIGCONT);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
        int status = 0;
        for (;;) {
            const pid_t done = ::waitpid(c.pid, &status, WNOHANG);
            if (done == c.pid && (WIFEXITED(status) || WIFSIGNALED(status))) break;
            if (std::chrono::steady_clock::now() >= deadline) {
                ::kill(c.pid, SIGKILL);
                ::waitpid(c.pid, &status, 0);
                return {-2, read_file(c.out_file),
                        "(the client was still waiting after 90 s)\n" + read_file(c.err_file)};
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_file(c.out_file),
                read_file(c.err_file)};
    }

    // One drain of the install, as its unit would run it.
    void drain() {
        std::vector<std::string> argv = {
            home.lib_dir("demo-app") + "/hostbridge-executor", "drain",    "--config",
            home.config_dir("demo-app") + "/bridge.json",      "--linger", "0"};
        if (::geteuid() == 0) argv.push_back("--allow-root");
        cli::RunOptions options;
        options.timeout = std::chrono::seconds(60);
        options.env_set = home.env();
        auto ran = cli::run_process(argv, options);
        ASSERT_TRUE(ran && !ran->timed_out && ran->exit_code == 0)
            << (ran ? (ran->timed_out ? "the drain ran past 60 s\n" : "") + ran->err
                    : ran.error().message);
    }

    // What the agent does from its container: a whole new file renamed over
    // the response.
    void forge(const std::string& name, const nlohmann::json& body) {
        const std::string tmp = project.spool() + "/tmp/forged";
        write_file(tmp, body.dump());
        ASSERT_EQ(::rename(tmp.c_str(),
                           (project.spool() + "/responses/" + name + ".response.json").c_str()),
                  0);
    }

    static nlohmann::json done_answer(const std::string& name, const std::string& output) {
        return {{"request", name},         {"state", "done"},
                {"verb", "restart"},       {"arg", "api"},
                {"requested_at", nullptr}, {"updated_at", "2026-12-02T00:00:01Z"},
                {"expires_at", nullptr},   {"exit_code", 0},
                {"reason", nullptr},       {"output", output},
                {"log", nullptr}};
    }

    TempRoot root;
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(RequestOnHost, AnAnswerTheExecutorWroteIsReportedAsItIs) {
    Client c = start({"status"});
    ASSERT_FALSE(published().empty());
    ASSERT_NO_FATAL_FAILURE(drain());
    Finished f = resume_and_wait(c);
    EXPECT_EQ(f.code, 0) << f.err;
    EXPECT_EQ(f.err.find("audit log"), std::string::npos) << f.err;
}

// The host refused the request; the agent rewrites the answer as `done`.
TEST_F(RequestOnHost, AForgedDoneOverARefusalIsReportedAsTheRefusalTheLogRecords) {
    Client c = start({"restart", "nosuch"});
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
    Client c = start({"restart", "api"});
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
    Client c = start({"--lines", "5", "logs", "api"});
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
