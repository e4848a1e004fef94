// notify_command end to end (executor/notify.hpp): the real drain holds a
// request (policy `ask`) and runs the person's command with the summary as
// JSON on stdin; here curl, posting to an HTTP listener this test runs on
// 127.0.0.1. A command that hangs is killed within kNotifyTimeout, one that
// cannot start is reported; neither fails the drain or loses the hold.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <ctime>
#include <mutex>
#include <thread>

#include "common/held.hpp"
#include "executor/notify.hpp"
#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::StackFixture;
using nlohmann::json;
namespace common = hb::common;

const char* const kCurl = "/usr/bin/curl";

// An HTTP/1.1 listener on 127.0.0.1, an ephemeral port: it keeps each
// request's head and body and answers 200.
class LoopbackListener {
  public:
    LoopbackListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t size = sizeof addr;
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::listen(fd_, 8) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
            throw std::runtime_error("cannot listen on 127.0.0.1");
        }
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~LoopbackListener() {
        stop_ = true;
        thread_.join();
        ::close(fd_);
    }
    LoopbackListener(const LoopbackListener&) = delete;
    LoopbackListener& operator=(const LoopbackListener&) = delete;

    [[nodiscard]] std::string url(const std::string& path) const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }
    [[nodiscard]] std::vector<std::pair<std::string, std::string>> requests() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

  private:
    void serve() {
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 50) <= 0) continue;
            const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (conn < 0) continue;
            const timeval limit{5, 0};
            ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
            std::string in;
            std::size_t head = std::string::npos;
            std::size_t length = 0;
            char buf[4096];
            for (ssize_t n; (n = ::read(conn, buf, sizeof buf)) > 0;) {
                in.append(buf, static_cast<std::size_t>(n));
                if (head == std::string::npos &&
                    (head = in.find("\r\n\r\n")) != std::string::npos) {
                    std::string lower = in.substr(0, head += 4);
                    for (char& c : lower) c = static_cast<char>(std::tolower(c));
                    const auto at = lower.find("\r\ncontent-length:");
                    if (at != std::string::npos) length = std::stoul(lower.substr(at + 17));
                }
                if (head != std::string::npos && in.size() >= head + length) break;
            }
            if (head != std::string::npos) {
                const std::lock_guard<std::mutex> lock(mutex_);
                requests_.emplace_back(in.substr(0, head), in.substr(head));
            }
            const std::string ok =
                "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            (void)!::write(conn, ok.data(), ok.size());
            ::close(conn);
        }
    }

    int fd_;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    mutable std::mutex mutex_;
    std::vector<std::pair<std::string, std::string>> requests_;
    std::thread thread_;
};

common::HeldRequest notified_hold(const StackFixture& f, const std::string& name) {
    auto parsed = common::parse_held(hb::test::read_file(f.state + "/held/" + name));
    if (!parsed) throw std::runtime_error("held/" + name + ": " + parsed.error().message);
    return *parsed;
}

void set_notify_command(StackFixture& f, const json& argv) {
    f.config["notify_command"] = argv;
    f.write_config();
}

TEST(NotifyCommand, CurlPostsTheHeldRequestsSummaryToAListenerOnLoopback) {
    if (::access(kCurl, X_OK) != 0) {
        GTEST_SKIP() << "no " << kCurl << " on this machine (tools/deps.sh test installs curl)";
    }
    LoopbackListener listener;
    StackFixture f;
    set_notify_command(
        f, {kCurl, "--silent", "--show-error", "--max-time", "3", "--data-binary", "@-", "-H",
            "Content-Type: application/json", listener.url("/hostbridge")});
    f.policy_all_auto_but("MODE_restart=ask\nMODE_down=ask\n");
    const std::string db = f.publish("restart", "db");
    // A name off the schema with a terminal escape in it: quarantined
    // before anything could hold it, so no notification ever names it.
    const std::string hostile = "20260101T000000Z-restart-\x1b]0;owned\x07.json";
    f.publish_as(hostile, StackFixture::body("restart", "db"));
    const auto e = f.run();
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(db), "pending");
    EXPECT_TRUE(hb::test::fs::exists(f.path("quarantine", hostile)));
    const auto requests = listener.requests();
    ASSERT_EQ(requests.size(), 1u) << e.err;
    const common::HeldRequest held = notified_hold(f, db);
    const std::string digest = common::held_short_digest(held);
    const json expected = {{"install", "drain-test"},
                           {"request", db},
                           {"verb", "restart"},
                           {"service", "db"},
                           {"command", held.command},
                           {"digest", digest},
                           {"held_at", held.held_at},
                           {"expires_at", held.expires_at},
                           {"allow", "hostbridge allow " + db + " " + digest},
                           {"deny", "hostbridge deny " + db + " " + digest}};
    EXPECT_EQ(json::parse(requests[0].second), expected) << requests[0].second;
    EXPECT_EQ(requests[0].first.rfind("POST /hostbridge HTTP/1.1\r\n", 0), 0u) << requests[0].first;
    EXPECT_NE(requests[0].first.find("\r\nContent-Type: application/json\r\n"), std::string::npos)
        << requests[0].first;
    EXPECT_NE(e.err.find("held " + db + " for a person: would run " + held.command + "; "),
              std::string::npos)
        << e.err;
    EXPECT_NE(e.err.find("; notify_command exited 0"), std::string::npos) << e.err;

    // Another hold within the minute: the desktop notification's interval.
    const std::string down = f.publish("down");
    const auto again = f.run();
    ASSERT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(f.state_of(down), "pending");
    EXPECT_NE(again.err.find("notify_command not run: one went out less than 60 s ago"),
              std::string::npos)
        << again.err;
    EXPECT_EQ(listener.requests().size(), 1u);
}

TEST(NotifyCommand, OneThatHangsIsKilledWithinTheBoundAndTheRequestStaysHeld) {
    StackFixture f;
    set_notify_command(f, {"/bin/sleep", "600"});
    f.policy_all_auto_but("MODE_restart=ask\n");
    const std::string db = f.publish("restart", "db");
    const auto start = std::chrono::steady_clock::now();
    const auto e = f.run();
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(db), "pending");
    EXPECT_NE(e.err.find("; notify_command failed (timed out)"), std::string::npos) << e.err;
    EXPECT_GE(took, hb::exec::kNotifyTimeout);
    // The timeout, a second's grace, and room for a loaded machine.
    EXPECT_LT(took, hb::exec::kNotifyTimeout + std::chrono::seconds(20));
}

TEST(NotifyCommand, OneThatCannotStartOrFailsIsReportedAndTheDrainGoesOn) {
    StackFixture f;
    const std::string missing = f.root + "/no-such-notifier";
    set_notify_command(f, {missing, "--topic", "x"});
    f.policy_all_auto_but("MODE_restart=ask\nMODE_down=ask\n");
    const std::string db = f.publish("restart", "db");
    const std::string status = f.publish("status");
    const auto e = f.run();
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(db), "pending");
    EXPECT_EQ(f.state_of(status), "done");
    EXPECT_NE(e.err.find("; notify_command failed (cannot execute " + missing +
                         ": No such file or directory)"),
              std::string::npos)
        << e.err;

    // One that exits non-zero, a minute later (the stamp set back).
    const std::time_t old = std::time(nullptr) - 61;
    const timeval times[2] = {{old, 0}, {old, 0}};
    ASSERT_EQ(::utimes((f.state + "/held/.notified-command").c_str(), times), 0);
    set_notify_command(f, {"/bin/false"});
    const std::string down = f.publish("down");
    const auto again = f.run();
    ASSERT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(f.state_of(down), "pending");
    EXPECT_NE(again.err.find("; notify_command failed (exited with status 1)"), std::string::npos)
        << again.err;
}

// What came from the agent's side reaches the command with every byte
// outside printable ASCII (and the backslash) as \xNN. The drain holds only
// on-schema names and bridge.json's services, so this record is built by
// hand: the summary must not rely on that.
TEST(NotifyCommand, TheSummaryShowsEveryUnprintableByteAsAnEscape) {
    StackFixture f;
    common::HeldRequest held;
    // Valid UTF-8 only: the record's digest is taken over its JSON.
    held.request = "name\x1b]0;owned\x07\n\"\\";
    held.verb = hb::Verb::Restart;
    held.service = std::string("db\x1b[31m\xe2\x80\xae");
    held.command = "$STACK restart db";
    held.held_at = 100;
    held.expires_at = 700;
    const std::string text = hb::exec::held_summary(f.parsed_config(), held);
    EXPECT_TRUE(std::none_of(text.begin(), text.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f;
    })) << text;
    const json j = json::parse(text);
    const std::string shown = "name\\x1b]0;owned\\x07\\x0a\"\\x5c";
    EXPECT_EQ(j["request"], shown);
    EXPECT_EQ(j["service"], "db\\x1b[31m\\xe2\\x80\\xae");
    EXPECT_EQ(j["allow"], "hostbridge allow " + shown + " " + common::held_short_digest(held));
    EXPECT_EQ(j["held_at"], 100);
    held.service.reset();
    EXPECT_TRUE(json::parse(hb::exec::held_summary(f.parsed_config(), held))["service"].is_null());
}

}  // namespace
