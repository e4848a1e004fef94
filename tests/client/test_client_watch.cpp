// The agent clients against the real host: `hostbridge-executor watch`
// with its parser, on a temp project. Every case runs for the sh client
// under dash, busybox sh and bash --posix, and for the C++ client.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ipc/rfc3339.hpp"
#include "tests/client/client_harness.hpp"
#include "tests/client/watcher_fixture.hpp"

namespace hb::test {
namespace {

using namespace std::chrono_literals;

// Fifty clients at once, each served in turn: on a loaded 2-core machine
// under the sanitizers the last waits long, so the bound is generous; a
// healthy run takes seconds, and only a stuck one ever meets it.
constexpr const char* kStampedeSeconds = "300";
constexpr auto kStampedeWait = 310s;

class ClientWatchTest : public ::testing::TestWithParam<ClientKind> {
  protected:
    void SetUp() override {
        if (auto why = client_unavailable(GetParam()); !why.empty()) GTEST_SKIP() << why;
        if (auto why = Watcher::unavailable(); !why.empty()) GTEST_SKIP() << why;
    }

    void TearDown() override {
        if (watcher_ && HasFailure())
            std::fprintf(stderr, "watch log:\n%s", watcher_->log().c_str());
    }

    Watcher& watcher(int services = 2, int ttl = 600) {
        watcher_ = std::make_unique<Watcher>(services, ttl);
        return *watcher_;
    }

    ClientOptions options() const {
        ClientOptions opts;
        opts.env = {"HOSTBRIDGE_SPOOL=" + watcher_->spool()};
        return opts;
    }

    ClientResult request(const std::vector<std::string>& words) {
        std::vector<std::string> args = {"--timeout", "30"};
        args.insert(args.end(), words.begin(), words.end());
        return run_client(GetParam(), args, options());
    }

    // The host's own reason text, from the only response in the spool.
    std::string only_reason() {
        auto files = files_under(watcher_->spool() + "/responses");
        if (files.size() != 1) return "(" + std::to_string(files.size()) + " responses)";
        auto answer =
            nlohmann::json::parse(read_file(watcher_->spool() + "/responses/" + files[0]));
        return answer["reason"].is_string() ? answer["reason"].get<std::string>() : "(null)";
    }

    // One ping first, so the parser is up before the stampede: its cold
    // start competing with fifty client start-ups (sanitizer builds, a busy
    // 2-core machine) can outlast the executor's 2 s verdict deadline, and
    // that is not what these tests are about.
    void warm_up() {
        ClientResult r = request({"ping"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
    }

    std::unique_ptr<Watcher> watcher_;
};

INSTANTIATE_TEST_SUITE_P(AllClients, ClientWatchTest, ::testing::ValuesIn(kAllClients), param_name);

TEST_P(ClientWatchTest, PingIsDoneWithPong) {
    watcher().start();
    ClientResult r = request({"ping"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "pong");
    EXPECT_EQ(r.err, "");
}

TEST_P(ClientWatchTest, ExecIsDeniedWithTheHostsReason) {
    watcher().start();
    ClientResult r = request({"exec"});
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_EQ(r.out, "");
    const std::string reason = only_reason();
    EXPECT_NE(r.err.find("denied: " + reason), std::string::npos)
        << "stderr: " << r.err << "reason: " << reason;
}

TEST_P(ClientWatchTest, AnUnknownServiceIsDenied) {
    watcher().start();
    ClientResult r = request({"logs", "nosuch"});
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_NE(r.err.find("denied: " + only_reason()), std::string::npos) << r.err;
}

TEST_P(ClientWatchTest, ARequestOlderThanTheTtlIsExpired) {
    // TTL 1 s, and the watcher paused until the request is older than that
    // by the date it carries (whole seconds, so two past it).
    Watcher& host = watcher(2, /*ttl=*/1);
    host.start();
    host.pause();
    ClientProcess client(GetParam(), {"--timeout", "30", "ping"}, options());
    const std::string name = wait_for_json(host.spool() + "/requests");
    ASSERT_FALSE(name.empty());
    const nlohmann::json body =
        nlohmann::json::parse(read_file(host.spool() + "/requests/" + name));
    const std::int64_t dated =
        rfc3339_ns(body.at("requested_at").get<std::string>()) / 1'000'000'000;
    ASSERT_GT(dated, 0) << body;
    ASSERT_TRUE(wait_until([&] { return std::time(nullptr) >= dated + 2; }));
    host.resume();
    ClientResult r = client.wait();
    EXPECT_EQ(r.exit_code, 70) << r.err;
    EXPECT_NE(r.err.find("expired"), std::string::npos) << r.err;
}

TEST_P(ClientWatchTest, AFailedCommandGivesItsOutputAndExitCode) {
    watcher().start();
    ClientResult r = request({"status"});
    EXPECT_EQ(r.exit_code, 70) << r.err;
    EXPECT_EQ(r.out, "status: api is down\n");
    EXPECT_NE(r.err.find("failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("exit code 3"), std::string::npos) << r.err;
}

TEST_P(ClientWatchTest, CommandOutputComesOutByteForByte) {
    watcher().start();
    ClientResult r = request({"health"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, Watcher::health_output());
}

TEST_P(ClientWatchTest, FiftyClientsAtOnceEachGetTheirOwnAnswer) {
    watcher().start();
    warm_up();
    // Even ones ping (done), odd ones exec (denied): each must get the
    // answer to its own request, not a neighbour's.
    std::vector<std::unique_ptr<ClientProcess>> clients;
    for (int i = 0; i < 50; ++i)
        clients.push_back(std::make_unique<ClientProcess>(
            GetParam(),
            std::vector<std::string>{"--timeout", kStampedeSeconds, i % 2 == 0 ? "ping" : "exec"},
            options()));
    for (int i = 0; i < 50; ++i) {
        ClientResult r = clients[i]->wait(kStampedeWait);
        if (i % 2 == 0) {
            EXPECT_EQ(r.exit_code, 0) << "client " << i << ": " << r.err;
            EXPECT_EQ(r.out, "pong") << "client " << i;
        } else {
            EXPECT_EQ(r.exit_code, 70) << "client " << i << ": " << r.err;
            EXPECT_EQ(r.out, "") << "client " << i;
        }
    }
    EXPECT_EQ(files_under(watcher_->spool() + "/responses").size(), 51u);  // and the warm-up
    EXPECT_EQ(files_under(watcher_->spool() + "/requests").size(), 0u);
}

TEST_P(ClientWatchTest, FiftyCommandsAtOnceEachGetTheirOwnOutput) {
    watcher(/*services=*/50).start();
    warm_up();
    std::vector<std::unique_ptr<ClientProcess>> clients;
    for (int i = 0; i < 50; ++i) {
        char service[16];
        std::snprintf(service, sizeof service, "svc%02d", i);
        clients.push_back(std::make_unique<ClientProcess>(
            GetParam(), std::vector<std::string>{"--timeout", kStampedeSeconds, "logs", service},
            options()));
    }
    for (int i = 0; i < 50; ++i) {
        ClientResult r = clients[i]->wait(kStampedeWait);
        char expected[32];
        std::snprintf(expected, sizeof expected, "logs of svc%02d\n", i);
        EXPECT_EQ(r.exit_code, 0) << "client " << i << ": " << r.err;
        EXPECT_EQ(r.out, expected) << "client " << i;
    }
}

}  // namespace
}  // namespace hb::test
