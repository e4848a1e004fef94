// `hostbridge-agent mcp` driven over its stdio by a JSON-RPC driver written
// here, against the real host (`hostbridge-executor watch` and its parser)
// and the manifest install writes. The official SDK's client drives it in
// tests/agent/sdk (test_mcp_sdk).
#include <gtest/gtest.h>

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "tests/agent/agent_host.hpp"
#include "tests/support/hostile_text.hpp"

namespace hb::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

HostOptions denying(std::vector<std::string> verbs) {
    HostOptions o;
    o.denied = std::move(verbs);
    return o;
}
HostOptions denying_later(std::vector<std::string> verbs) {
    HostOptions o;
    o.denied_later = std::move(verbs);
    return o;
}
HostOptions mutating(int count) {
    HostOptions o;
    o.mutating_count = count;
    return o;
}

// A response as the host writes it (executor/responses.cpp), for the tests
// that play the host by hand.
json host_response(const std::string& name, const std::string& state) {
    return json{{"state", state},       {"request", name},         {"verb", "down"},
                {"arg", nullptr},       {"requested_at", nullptr}, {"updated_at", utc_in(0)},
                {"exit_code", nullptr}, {"reason", nullptr},       {"output", nullptr},
                {"log", nullptr},       {"expires_at", nullptr}};
}

json pending(const std::string& name, const std::string& expires_at) {
    json held = host_response(name, "pending");
    held["reason"] = "waiting for a person's approval on the host: `hostbridge allow " + name +
                     "` runs it, `hostbridge deny " + name + "` refuses it";
    held["expires_at"] = expires_at;
    return held;
}

HostOptions asking(std::vector<std::string> verbs) {
    HostOptions o;
    o.asked = std::move(verbs);
    return o;
}

class McpServerTest : public ::testing::Test {
  protected:
    void SetUp() override {
        if (auto why = AgentHost::unavailable(); !why.empty()) GTEST_SKIP() << why;
    }
    void TearDown() override {
        if (HasFailure() && host_) std::fprintf(stderr, "watch log:\n%s", host_->log().c_str());
        if (HasFailure() && session_)
            std::fprintf(stderr, "agent stderr:\n%s", session_->err().c_str());
    }
    McpSession& start(const HostOptions& options = {}, bool run_host = true,
                      const std::vector<std::string>& args = {}) {
        host_ = std::make_unique<AgentHost>(options);
        if (run_host) host_->start();
        session_ = std::make_unique<McpSession>(host_->spool(), args);
        return *session_;
    }
    static std::string text_of(const json& answer) {
        return answer.at("result").at("content").at(0).at("text").get<std::string>();
    }
    static json tool_named(const json& list, const std::string& name) {
        for (const auto& tool : list.at("result").at("tools"))
            if (tool.at("name") == name) return tool;
        return json();
    }

    // Waits (up to 30 s) for a response in the spool holding `text`.
    bool response_with(const std::string& text) {
        for (int i = 0; i < 300; ++i) {
            for (const auto& name : files_under(host_->spool() + "/responses"))
                if (read_file(host_->spool() + "/responses/" + name).find(text) !=
                    std::string::npos)
                    return true;
            std::this_thread::sleep_for(100ms);
        }
        return false;
    }

    // The request a call wrote; the test answers it as the host would.
    std::string published() {
        std::string name = wait_for_json(host_->spool() + "/requests");
        EXPECT_FALSE(name.empty()) << "the call wrote no request";
        return name;
    }
    void respond(const std::string& name, const json& body) {
        publish_response(host_->spool(), name, body.dump(2));
    }
    // The same for a body that need not be UTF-8 (a byte that is not, as U+FFFD).
    void respond_any(const std::string& name, const json& body) {
        publish_response(host_->spool(), name,
                         body.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    // Reads messages until the progress notification that says a person
    // must approve (the server read `pending`); false when none came.
    bool told_pending() {
        for (int i = 0; i < 50; ++i) {
            auto m = session_->next(std::chrono::seconds(10));
            if (!m) return false;
            session_->seen.push_back(*m);
            const json& params = m->value("params", json::object());
            if (params.is_object() &&
                params.value("message", std::string()).find("a person must approve") !=
                    std::string::npos)
                return true;
        }
        return false;
    }
    // Reads messages until the answer to `id`; the others go to seen.
    json answer_to(int id) {
        for (;;) {
            auto message = session_->next(std::chrono::seconds(60));
            if (!message) return json();
            if (message->value("id", json()) == json(id)) return *message;
            session_->seen.push_back(*message);
        }
    }

    std::unique_ptr<AgentHost> host_;
    std::unique_ptr<McpSession> session_;
};

TEST_F(McpServerTest, InitializeAnswersEachSupportedVersionAndOffersTheNewestOtherwise) {
    start({}, false);
    for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
        McpSession s(host_->spool());
        json answer = s.initialize(version);
        EXPECT_EQ(answer["result"]["protocolVersion"], version) << answer;
        EXPECT_EQ(answer["result"]["serverInfo"]["name"], "hostbridge");
        EXPECT_TRUE(answer["result"]["capabilities"].contains("tools"));
        EXPECT_EQ(s.close_and_wait(), 0);
    }
    json answer = session_->initialize("1999-01-01");
    EXPECT_EQ(answer["result"]["protocolVersion"], "2025-11-25") << answer;
    EXPECT_EQ(session_->request(1, "ping")["result"], json::object());
    EXPECT_EQ(session_->close_and_wait(), 0);
}

TEST_F(McpServerTest, ToolsFollowTheManifestAndThePolicy) {
    McpSession& s = start(denying({"init"}), false);
    s.initialize();
    json list = s.request(1, "tools/list");
    std::set<std::string> names;
    for (const auto& tool : list["result"]["tools"]) names.insert(tool["name"]);
    // A stack backend without join-network; init is denied by policy.
    EXPECT_EQ(names, (std::set<std::string>{"ping", "status", "health", "logs", "up", "down",
                                            "restart", "rebuild"}));
    json logs = tool_named(list, "logs");
    EXPECT_EQ(logs["inputSchema"]["properties"]["service"]["enum"],
              json({"api", "slow", "worker"}));
    EXPECT_EQ(logs["inputSchema"]["required"], json({"service"}));
    EXPECT_EQ(tool_named(list, "rebuild")["inputSchema"]["properties"]["service"]["enum"],
              json({"api"}));
    EXPECT_EQ(tool_named(list, "status")["inputSchema"]["properties"], json::object());
    EXPECT_EQ(tool_named(list, "status")["annotations"]["readOnlyHint"], true);
    EXPECT_EQ(tool_named(list, "down")["annotations"]["destructiveHint"], true);
    EXPECT_EQ(tool_named(list, "down")["annotations"]["readOnlyHint"], false);
    EXPECT_EQ(tool_named(list, "up")["annotations"]["idempotentHint"], true);
    EXPECT_EQ(tool_named(list, "restart")["annotations"]["idempotentHint"], false);
    EXPECT_NE(
        tool_named(list, "up")["description"].get<std::string>().find("Rate limited on the host"),
        std::string::npos);
    EXPECT_TRUE(tool_named(list, "up").contains("outputSchema"));
}

TEST_F(McpServerTest, AnOldClientGetsNoStructuredContent) {
    McpSession& s = start();
    s.initialize("2025-03-26");
    json list = s.request(1, "tools/list");
    EXPECT_FALSE(tool_named(list, "ping").contains("outputSchema"));
    json answer = s.call(2, "ping");
    EXPECT_EQ(text_of(answer), "pong");
    EXPECT_FALSE(answer["result"].contains("structuredContent"));
}

TEST_F(McpServerTest, EachKindOfVerbRunsThroughTheHost) {
    McpSession& s = start();
    s.initialize();
    json ping = s.call(1, "ping");
    EXPECT_EQ(text_of(ping), "pong") << ping;
    EXPECT_EQ(ping["result"]["isError"], false);
    EXPECT_EQ(ping["result"]["structuredContent"]["state"], "done");
    EXPECT_TRUE(ping["result"]["structuredContent"]["request"].get<std::string>().find("-ping-") !=
                std::string::npos);
    EXPECT_EQ(text_of(s.call(2, "status")), "api: running\n");
    EXPECT_EQ(text_of(s.call(3, "logs", {{"service", "worker"}})), "logs of worker\n");
    // A change that went live answers none of its command's text (docs/PROTOCOL.md).
    EXPECT_EQ(text_of(s.call(4, "up")), "(done, no output)");
    EXPECT_EQ(text_of(s.call(5, "restart", {{"service", "api"}})), "(done, no output)");
    // The stack script's rebuild exits 4: a failed command is a tool error.
    json rebuild = s.call(6, "rebuild", {{"service", "api"}});
    EXPECT_EQ(rebuild["result"]["isError"], true) << rebuild;
    EXPECT_EQ(rebuild["result"]["structuredContent"]["state"], "failed");
    EXPECT_EQ(rebuild["result"]["structuredContent"]["exit_code"], 4);
    EXPECT_NE(text_of(rebuild).find("exit code 4"), std::string::npos) << rebuild;
    EXPECT_NE(text_of(rebuild).find("built api"), std::string::npos) << rebuild;
}

TEST_F(McpServerTest, ArgumentsOutsideTheSchemaAreToolErrorsAndWriteNothing) {
    McpSession& s = start({}, false);
    s.initialize();
    json missing = s.call(1, "logs");
    EXPECT_EQ(missing["result"]["isError"], true);
    json unknown = s.call(2, "logs", {{"service", "db"}});
    EXPECT_NE(text_of(unknown).find("api, slow, worker"), std::string::npos) << unknown;
    json not_buildable = s.call(3, "rebuild", {{"service", "worker"}});
    EXPECT_EQ(not_buildable["result"]["isError"], true);
    json extra = s.call(4, "up", {{"service", "api"}});
    EXPECT_EQ(extra["result"]["isError"], true);
    json no_tool = s.call(5, "exec", {{"service", "api"}});
    EXPECT_EQ(no_tool["error"]["code"], -32602) << no_tool;
    EXPECT_TRUE(files_under(host_->spool() + "/requests").empty());
    EXPECT_TRUE(files_under(host_->spool() + "/tmp").empty());
}

// With `log_window` in the manifest, a logs call carries `lines` and
// `since` as the request's string keys in the spec's order, and its answer
// gives the cursor and `more` in structuredContent and in the text (a
// client may show the model only the text). Played by hand: this host's
// stack backend takes no window.
TEST_F(McpServerTest, WithTheLogWindowALogsCallCarriesLinesAndSinceAndReturnsTheCursor) {
    HostOptions options;
    options.log_window = true;
    McpSession& s = start(options, false);
    s.initialize();
    json logs = tool_named(s.request(1, "tools/list"), "logs");
    EXPECT_EQ(logs["inputSchema"]["properties"]["lines"]["type"], "integer") << logs;
    EXPECT_EQ(logs["inputSchema"]["properties"]["since"]["type"], "string") << logs;
    EXPECT_TRUE(logs["outputSchema"]["properties"].contains("cursor")) << logs;
    s.send({{"jsonrpc", "2.0"},
            {"id", 2},
            {"method", "tools/call"},
            {"params",
             {{"name", "logs"},
              {"arguments",
               {{"since", "1764762565926492145:2"}, {"lines", 50}, {"service", "api"}}}}}});
    const std::string name = published();
    const std::string body = read_file(host_->spool() + "/requests/" + name);
    const std::string head =
        R"({"verb":"logs","arg":"api","lines":"50","since":"1764762565926492145:2","requested_at":")";
    EXPECT_EQ(body.substr(0, head.size()), head) << body;
    json done = host_response(name, "done");
    done["verb"] = "logs";
    done["exit_code"] = 0;
    done["output"] = "2026-12-03T10:00:00.000000001Z api: ready\n";
    done["cursor"] = "1764756000000000001:1";
    done["more"] = true;
    respond(name, done);
    json answer = answer_to(2);
    EXPECT_EQ(answer["result"]["isError"], false) << answer;
    EXPECT_EQ(answer["result"]["structuredContent"]["cursor"], "1764756000000000001:1") << answer;
    EXPECT_EQ(answer["result"]["structuredContent"]["more"], true) << answer;
    const std::string text = text_of(answer);
    EXPECT_EQ(text.find("2026-12-03T10:00:00.000000001Z api: ready\n"), 0U) << text;
    EXPECT_NE(text.find("cursor: 1764756000000000001:1 (pass it as `since`"), std::string::npos)
        << text;
    EXPECT_NE(text.find("more: true (more lines are waiting"), std::string::npos) << text;

    // No window given: the answer carries no cursor, whatever the file says.
    std::filesystem::remove(host_->spool() + "/requests/" + name);
    s.send({{"jsonrpc", "2.0"},
            {"id", 3},
            {"method", "tools/call"},
            {"params", {{"name", "logs"}, {"arguments", {{"service", "api"}}}}}});
    const std::string plain = published();
    EXPECT_EQ(read_file(host_->spool() + "/requests/" + plain).find("lines"), std::string::npos);
    json forged = host_response(plain, "done");
    forged["output"] = "x\n";
    forged["cursor"] = "1:1";
    forged["more"] = true;
    respond(plain, forged);
    answer = answer_to(3);
    EXPECT_EQ(text_of(answer), "x\n") << answer;
    EXPECT_FALSE(answer["result"]["structuredContent"].contains("cursor")) << answer;
    EXPECT_FALSE(answer["result"]["structuredContent"].contains("more")) << answer;
}

// Without `log_window` the logs tool is as it was: no `lines`, no `since`,
// and a call that passes one is refused before a request is written.
TEST_F(McpServerTest, WithoutTheLogWindowTheLogsToolTakesNoLinesOrSince) {
    McpSession& s = start({}, false);
    s.initialize();
    json logs = tool_named(s.request(1, "tools/list"), "logs");
    EXPECT_EQ(logs["inputSchema"]["properties"].size(), 1U) << logs;
    EXPECT_FALSE(logs["outputSchema"]["properties"].contains("cursor")) << logs;
    EXPECT_EQ(logs["description"].get<std::string>().find("since"), std::string::npos) << logs;
    json refused = s.call(2, "logs", {{"service", "api"}, {"lines", 50}});
    EXPECT_EQ(refused["result"]["isError"], true) << refused;
    EXPECT_EQ(text_of(refused), "`logs` takes only `service`; drop `lines`") << refused;
    EXPECT_TRUE(files_under(host_->spool() + "/requests").empty());
}

TEST_F(McpServerTest, TheHostStillDecidesWhatTheManifestOffers) {
    McpSession& s = start(denying_later({"down"}));
    s.initialize();
    EXPECT_FALSE(tool_named(s.request(1, "tools/list"), "down").is_null());
    json down = s.call(2, "down");
    EXPECT_EQ(down["result"]["isError"], true) << down;
    EXPECT_EQ(down["result"]["structuredContent"]["state"], "denied");
    EXPECT_NE(text_of(down).find("MODE_down=deny"), std::string::npos) << down;
    EXPECT_NE(text_of(down).find("retrying will not help"), std::string::npos) << down;
}

// A verb the policy denies but allows for one service is still a tool; the
// host decides each call by its service.
TEST_F(McpServerTest, AVerbAllowedForOneServiceOnlyIsOfferedAndTheHostDecides) {
    HostOptions options = denying({"restart"});
    options.extra_policy = {"MODE_restart.api=auto"};
    McpSession& s = start(options);
    s.initialize();
    EXPECT_FALSE(tool_named(s.request(1, "tools/list"), "restart").is_null());
    json api = s.call(2, "restart", {{"service", "api"}});
    EXPECT_EQ(api["result"]["isError"], false) << api;
    json worker = s.call(3, "restart", {{"service", "worker"}});
    EXPECT_EQ(worker["result"]["isError"], true) << worker;
    EXPECT_NE(text_of(worker).find("MODE_restart=deny"), std::string::npos) << worker;
}

TEST_F(McpServerTest, ARateLimitedCallSaysToWait) {
    McpSession& s = start(mutating(1));
    s.initialize();
    EXPECT_EQ(s.call(1, "up")["result"]["isError"], false);
    json second = s.call(2, "up");
    EXPECT_EQ(second["result"]["isError"], true) << second;
    EXPECT_NE(text_of(second).find("rate limited"), std::string::npos) << second;
    EXPECT_NE(text_of(second).find("Do not retry in a loop"), std::string::npos) << second;
}

TEST_F(McpServerTest, ASlowCommandSendsProgressForTheClientsToken) {
    McpSession& s = start();
    s.initialize();
    json answer = s.request(1, "tools/call",
                            {{"name", "restart"},
                             {"arguments", {{"service", "slow"}}},
                             {"_meta", {{"progressToken", "tok-1"}}}});
    EXPECT_EQ(text_of(answer), "(done, no output)") << answer;
    double last = 0;
    int progress = 0;
    for (const auto& m : s.seen) {
        ASSERT_EQ(m["method"], "notifications/progress") << m;
        EXPECT_EQ(m["params"]["progressToken"], "tok-1");
        EXPECT_GT(m["params"]["progress"].get<double>(), last);
        last = m["params"]["progress"].get<double>();
        ++progress;
    }
    EXPECT_GE(progress, 1);
    // Without a token, none.
    s.seen.clear();
    EXPECT_EQ(text_of(s.call(2, "restart", {{"service", "slow"}})), "(done, no output)");
    EXPECT_TRUE(s.seen.empty());
}

TEST_F(McpServerTest, ACancelledCallSendsNothingAndSaysTheRequestMayStillRun) {
    McpSession& s = start();
    s.initialize();
    s.send({{"jsonrpc", "2.0"},
            {"id", 7},
            {"method", "tools/call"},
            {"params", {{"name", "restart"}, {"arguments", {{"service", "slow"}}}}}});
    // Cancelled once the host has it running.
    ASSERT_TRUE(response_with("\"running\""));
    s.send({{"jsonrpc", "2.0"},
            {"method", "notifications/cancelled"},
            {"params", {{"requestId", 7}, {"reason", "user"}}}});
    // Until the command's own answer lands, and a ping after it: nothing for id 7.
    EXPECT_TRUE(response_with("\"done\""));
    EXPECT_EQ(s.request(8, "ping")["result"], json::object());
    for (const auto& m : s.seen) EXPECT_NE(m.value("id", json()), json(7)) << m;
    EXPECT_EQ(s.close_and_wait(), 0);
    EXPECT_NE(s.err().find("may still run"), std::string::npos) << s.err();
}

// MODE_<verb>=ask, for the verb or for some services: the tool says each
// call waits for a person, so the model tells its person and does not retry.
TEST_F(McpServerTest, AVerbUnderAskSaysEachCallWaitsForAPerson) {
    HostOptions options = asking({"down"});
    options.extra_policy = {"MODE_restart.api=ask"};
    McpSession& s = start(options, false);
    s.initialize();
    json list = s.request(1, "tools/list");
    const std::string down = tool_named(list, "down")["description"];
    EXPECT_NE(down.find("Each call waits for a person's approval on the host"), std::string::npos)
        << down;
    EXPECT_NE(down.find("tell the person you work with that it waits for them"), std::string::npos)
        << down;
    const std::string restart = tool_named(list, "restart")["description"];
    EXPECT_NE(restart.find("Each call for `api` waits for a person's approval"), std::string::npos)
        << restart;
    const std::string up = tool_named(list, "up")["description"];
    EXPECT_EQ(up.find("approval on the host"), std::string::npos) << up;
}

// Held for a person: progress says a person must approve it on the host,
// the take-up timeout no longer applies, and the final answer is the result.
TEST_F(McpServerTest, APendingCallReportsThatAPersonMustApproveThenItsAnswer) {
    McpSession& s = start(asking({"down"}), false, {"--timeout", "1"});
    s.initialize();
    s.send({{"jsonrpc", "2.0"},
            {"id", 3},
            {"method", "tools/call"},
            {"params", {{"name", "down"}, {"_meta", {{"progressToken", "tok-3"}}}}}});
    std::string name = published();
    std::filesystem::rename(host_->spool() + "/requests/" + name,
                            host_->spool() + "/processing/" + name);
    const std::string expires_at = utc_in(120);
    respond(name, pending(name, expires_at));
    // The pending notification, then past the take-up timeout.
    bool told = false;
    for (int i = 0; i < 50 && !told; ++i) {
        auto m = s.next(std::chrono::seconds(10));
        ASSERT_TRUE(m.has_value()) << "no progress for a pending call";
        ASSERT_NE(m->value("id", json()), json(3)) << *m;
        const std::string text =
            m->contains("params") ? (*m)["params"].value("message", std::string()) : "";
        told = text.find("a person must approve this request on the host") != std::string::npos &&
               text.find("until " + expires_at) != std::string::npos &&
               text.find("hostbridge allow " + name) != std::string::npos;
    }
    EXPECT_TRUE(told);
    std::this_thread::sleep_for(1500ms);
    json done = host_response(name, "done");
    done["exit_code"] = 0;
    done["output"] = "stopped\n";
    respond(name, done);
    json answer = answer_to(3);
    EXPECT_EQ(text_of(answer), "stopped\n") << answer;
    EXPECT_EQ(answer["result"]["structuredContent"]["state"], "done") << answer;
}

TEST_F(McpServerTest, APendingCallThatExpiresUndecidedSaysSoAndKeepsTheRequest) {
    McpSession& s = start(asking({"down"}), false, {"--timeout", "30"});
    s.initialize();
    s.send(
        {{"jsonrpc", "2.0"}, {"id", 4}, {"method", "tools/call"}, {"params", {{"name", "down"}}}});
    std::string name = published();
    const std::string expires_at = utc_in(-9);  // the grace (10 s) ends within a second
    respond(name, pending(name, expires_at));
    json answer = answer_to(4);
    EXPECT_EQ(answer["result"]["isError"], true) << answer;
    EXPECT_EQ(answer["result"]["structuredContent"]["state"], "pending") << answer;
    EXPECT_NE(text_of(answer).find("before it expired at " + expires_at +
                                   ": it did not run and can no longer be allowed"),
              std::string::npos)
        << answer;
    // Left where it was: a withdrawal would have removed it.
    EXPECT_TRUE(std::filesystem::exists(host_->spool() + "/requests/" + name));
}

TEST_F(McpServerTest, APendingCallThatExpiredOnTheHostSaysNoPersonDecided) {
    McpSession& s = start(asking({"down"}), false);
    s.initialize();
    s.send({{"jsonrpc", "2.0"},
            {"id", 5},
            {"method", "tools/call"},
            {"params", {{"name", "down"}, {"_meta", {{"progressToken", "tok-5"}}}}}});
    std::string name = published();
    respond(name, pending(name, utc_in(120)));
    ASSERT_TRUE(told_pending()) << "the server never read the pending answer";
    json expired = host_response(name, "expired");
    expired["reason"] = "no person decided within 600 s";
    respond(name, expired);
    json answer = answer_to(5);
    EXPECT_EQ(answer["result"]["structuredContent"]["state"], "expired") << answer;
    EXPECT_NE(text_of(answer).find("No person on the host decided this request in time"),
              std::string::npos)
        << answer;
}

TEST_F(McpServerTest, ACancelledPendingCallSaysItMayStillBeAllowedAndKeepsTheRequest) {
    McpSession& s = start(asking({"down"}), false);
    s.initialize();
    s.send({{"jsonrpc", "2.0"},
            {"id", 7},
            {"method", "tools/call"},
            {"params", {{"name", "down"}, {"_meta", {{"progressToken", "tok-7"}}}}}});
    std::string name = published();
    respond(name, pending(name, utc_in(120)));
    ASSERT_TRUE(told_pending()) << "the server never read the pending answer";
    s.send({{"jsonrpc", "2.0"},
            {"method", "notifications/cancelled"},
            {"params", {{"requestId", 7}, {"reason", "user"}}}});
    EXPECT_EQ(s.request(8, "ping")["result"], json::object());
    EXPECT_EQ(s.close_and_wait(), 0);
    for (const auto& m : s.seen) EXPECT_NE(m.value("id", json()), json(7)) << m;
    EXPECT_NE(s.err().find("was not decided; it may still be allowed later"), std::string::npos)
        << s.err();
    EXPECT_EQ(s.err().find("withdrawn"), std::string::npos) << s.err();
    EXPECT_TRUE(std::filesystem::exists(host_->spool() + "/requests/" + name));
}

// The agent forges the answer an MCP client shows, perhaps on a person's
// terminal when the server runs on the host (docs/MCP.md): an OSC 52
// clipboard write, an erase-line and a lone CR in the reason and the
// output. None of it arrives raw; the output keeps its lines.
TEST_F(McpServerTest, AForgedAnswerReachesTheClientWithItsControlBytesVisible) {
    McpSession& s = start({}, false);
    s.initialize();
    s.send(
        {{"jsonrpc", "2.0"}, {"id", 9}, {"method", "tools/call"}, {"params", {{"name", "down"}}}});
    const std::string name = published();
    const std::string osc52 = "\x1b]52;c;Y3VybCBodHRwOi8vZXZpbC5leGFtcGxlIHwgc2g=\x07";
    json forged = host_response(name, "failed");
    forged["exit_code"] = 1;
    forged["reason"] = "ok\r\x1b[2K" + osc52;
    forged["output"] = "all good\n" + osc52 + "\x1b[2K\rhidden\xc2\x9b" + "2J\n";
    respond(name, forged);
    json answer = answer_to(9);
    const std::string text = text_of(answer);
    const std::string reason = answer["result"]["structuredContent"]["reason"].get<std::string>();
    for (const std::string& shown : {text, reason}) {
        EXPECT_EQ(shown.find_first_of("\x1b\x07\r"), std::string::npos) << shown;
        EXPECT_EQ(shown.find("\xc2\x9b"), std::string::npos) << shown;
        EXPECT_NE(shown.find("\\x1b]52;c;"), std::string::npos) << shown;
    }
    EXPECT_NE(text.find("all good\n\\x1b]52;c;"), std::string::npos) << text;
    EXPECT_NE(text.find("\\rhidden"), std::string::npos) << text;
}

// Issue 45, row 7: the agent takes the call's request out of requests/ and
// answers it with a non-final state carrying U+202E and a C1 CSI. After the
// take-up timeout the text said "The host claimed the request (state S)"
// with S raw.
TEST_F(McpServerTest, AForgedStateReachesTheClientEscaped) {
    McpSession& s = start({}, false, {"--timeout", "2"});
    s.initialize();
    s.send({{"jsonrpc", "2.0"},
            {"id", 1},
            {"method", "tools/call"},
            {"params", {{"name", "status"}}}});
    const std::string name = published();
    std::filesystem::rename(host_->spool() + "/requests/" + name,
                            host_->spool() + "/tmp/x-" + name);
    respond(name, {{"state", "queued" + utf8_of(0x202e) + "denied :llac siht" + utf8_of(0x202c) +
                                 utf8_of(0x9b) + "2J"},
                   {"request", name}});
    const std::string text = text_of(answer_to(1));
    EXPECT_EQ(offence(text), "") << text;
    EXPECT_NE(text.find("The host claimed the request (state ?\"queued\\u202edenied"),
              std::string::npos)
        << text;
}

// The property of tests/cli/test_screen_escapes.cpp for the MCP server:
// every hostile string as a forged state, reason and output reaches the
// client's text, its structured reason and its progress messages escaped.
TEST_F(McpServerTest, EveryHostileStringReachesTheClientEscaped) {
    const std::vector<std::string> hostile = hostile_strings();
    std::string all;
    for (const std::string& h : hostile)
        if (h.size() < 4096) all += h;
    McpSession& s = start({}, false, {"--timeout", "2"});
    s.initialize();
    // A forged final answer.
    s.send({{"jsonrpc", "2.0"},
            {"id", 1},
            {"method", "tools/call"},
            {"params", {{"name", "down"}, {"_meta", {{"progressToken", "p"}}}}}});
    std::string name = published();
    json forged = host_response(name, "failed");
    forged["exit_code"] = 1;
    forged["reason"] = all;
    forged["output"] = all + hostile.back();
    respond_any(name, forged);
    json answer = answer_to(1);
    EXPECT_EQ(offence(text_of(answer)), "");
    EXPECT_EQ(offence(answer["result"]["structuredContent"]["reason"].get<std::string>()), "");
    // A forged state the server reports while it waits, and after.
    s.send({{"jsonrpc", "2.0"},
            {"id", 2},
            {"method", "tools/call"},
            {"params", {{"name", "status"}, {"_meta", {{"progressToken", "q"}}}}}});
    name = published();
    std::filesystem::rename(host_->spool() + "/requests/" + name,
                            host_->spool() + "/tmp/x-" + name);
    respond_any(name, host_response(name, all));
    answer = answer_to(2);
    EXPECT_EQ(offence(text_of(answer)), "");
    for (const json& seen : s.seen) {
        const json params = seen.value("params", json::object());
        if (params.is_object() && params.contains("message")) {
            EXPECT_EQ(offence(params["message"].get<std::string>()), "");
        }
    }
}

TEST_F(McpServerTest, MalformedMessagesGetErrorRepliesAndTheServerCarriesOn) {
    McpSession& s = start({}, false);
    s.send_raw("this is not json\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32700);
    s.send_raw("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32600);
    s.send_raw("{\"id\":2,\"method\":\"ping\"}\n");  // no jsonrpc member
    EXPECT_EQ((*s.next())["error"]["code"], -32600);
    s.send_raw("{\"jsonrpc\":\"2.0\",\"id\":{\"x\":1},\"method\":\"ping\"}\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32600);
    s.send_raw("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":[]}\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32602);
    s.send_raw("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/list\"}\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32601);
    s.send_raw("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{}}\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32602);
    s.send_raw(std::string(5u << 20, 'x') + "\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32700);
    s.send_raw("\xff\xfe{\n");
    EXPECT_EQ((*s.next())["error"]["code"], -32700);
    EXPECT_EQ(s.request(6, "ping")["result"], json::object());
    EXPECT_EQ(s.close_and_wait(), 0);
}

// Issue 28: a tools/call whose arguments nest 100,000 arrays (200 KB)
// crashed the server (SIGSEGV); nesting is bounded before parsing
// (ipc/json_depth.hpp) and answered with an error.
TEST_F(McpServerTest, DeepNestingIsAnErrorReplyNotACrash) {
    McpSession& s = start({}, false);
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    s.send_raw(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"logs",)"
               R"("arguments":{"service":)" +
               deep + "}}}\n");
    const auto reply = s.next();
    ASSERT_TRUE(reply);
    EXPECT_EQ((*reply)["error"]["code"], -32600) << *reply;
    EXPECT_NE((*reply)["error"]["message"].get<std::string>().find("nested deeper than 64"),
              std::string::npos)
        << *reply;
    // Brackets inside a string are text, not nesting.
    s.send_raw(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"logs",)"
               R"("arguments":{"service":")" +
               std::string(1000, '[') + "\"}}}\n");
    const auto text = s.next();
    ASSERT_TRUE(text);
    EXPECT_FALSE(text->contains("error")) << *text;
    EXPECT_EQ(s.request(3, "ping")["result"], json::object());
    EXPECT_EQ(s.close_and_wait(), 0);
}

// A uid of the test's own: no passwd entry, so no other process of it
// counts against its RLIMIT_NPROC.
uid_t unused_uid() {
    for (uid_t uid = 3000000000u + static_cast<uid_t>(::getpid());; ++uid)
        if (::getpwuid(uid) == nullptr) return uid;
}

std::string burst_of(int from, int to, const std::string& tool) {
    std::string lines;
    for (int id = from; id <= to; ++id)
        lines += json{{"jsonrpc", "2.0"},
                      {"id", id},
                      {"method", "tools/call"},
                      {"params", {{"name", tool}}}}
                     .dump() +
                 "\n";
    return lines;
}

// Issue 45: one thread per tools/call and no cap. Under a pids limit (a
// container's; RLIMIT_NPROC 200 for a uid of its own here) starting the
// 200th thread threw and the server exited 70: the calls after it and
// the ping were never answered. Now the calls within the cap (32) get the
// host's answers, every other call a tool error, and the server lives on.
TEST_F(McpServerTest, ABurstUnderAPidsLimitIsAnsweredAndTheServerStaysUp) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the server as a uid of its own";
    host_ = std::make_unique<AgentHost>();
    const uid_t uid = unused_uid();
    const std::string binary = host_->hand_spool_to(uid);
    host_->start();
    session_ = std::make_unique<McpSession>(
        host_->spool(), std::vector<std::string>{"--timeout", "60"}, Confined{uid, 200, binary});
    McpSession& s = *session_;
    ASSERT_TRUE(s.initialize().contains("result")) << s.err();
    s.send_raw(burst_of(1, 500, "status") + R"({"jsonrpc":"2.0","id":"alive","method":"ping"})" +
               "\n");
    std::map<std::string, json> answers;  // by id, dumped
    while (answers.size() < 501) {
        auto m = s.next(std::chrono::seconds(60));
        ASSERT_TRUE(m) << answers.size()
                       << " answers, then none; the server " +
                              std::string(s.running() ? "runs" : "ended")
                       << "\n"
                       << s.err();
        if (m->contains("id")) answers[(*m)["id"].dump()] = *m;
    }
    EXPECT_EQ(answers["\"alive\""]["result"], json::object());
    std::size_t done = 0;
    for (int id = 1; id <= 500; ++id) {
        const json& a = answers[std::to_string(id)];
        SCOPED_TRACE(a.dump());
        ASSERT_TRUE(a.contains("result"));
        if (a["result"]["isError"] == false) {
            EXPECT_EQ(a["result"]["structuredContent"]["state"], "done");
            EXPECT_EQ(text_of(a), "api: running\n");
            ++done;
        } else {
            EXPECT_NE(text_of(a).find("Too many calls at once: 32 are waiting for the host"),
                      std::string::npos);
        }
        if (id <= 32) {
            EXPECT_EQ(a["result"]["isError"], false);  // within the cap
        }
    }
    EXPECT_GE(done, 32u);
    EXPECT_TRUE(s.running());
    EXPECT_EQ(s.request(1000, "ping")["result"], json::object());
    EXPECT_EQ(s.close_and_wait(), 0);
}

// Below the cap, a thread that cannot be started (the pids limit reached
// first) is that call's tool error, not the server's end.
TEST_F(McpServerTest, AThreadThatCannotStartIsThatCallsErrorOnly) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the server as a uid of its own";
    host_ = std::make_unique<AgentHost>();
    const uid_t uid = unused_uid();
    const std::string binary = host_->hand_spool_to(uid);
    // No bridge: each call waits a second for one, then is withdrawn.
    session_ =
        std::make_unique<McpSession>(host_->spool(), std::vector<std::string>{"--timeout", "1"},
                                     Confined{uid, 4, binary});  // its main thread and 3 more
    McpSession& s = *session_;
    ASSERT_TRUE(s.initialize().contains("result")) << s.err();
    s.send_raw(burst_of(1, 10, "status") + R"({"jsonrpc":"2.0","id":11,"method":"ping"})" + "\n");
    std::size_t not_started = 0;
    std::size_t waited = 0;
    for (int seen = 0; seen < 11; ++seen) {
        auto m = s.next(std::chrono::seconds(30));
        ASSERT_TRUE(m) << s.err();
        if ((*m)["id"] == 11) {
            EXPECT_EQ((*m)["result"], json::object());
            continue;
        }
        const std::string text = text_of(*m);
        if (text.find("The server could not start this call") != std::string::npos)
            ++not_started;
        else if (text.find("bridge is not running") != std::string::npos)
            ++waited;
        else
            ADD_FAILURE() << *m;
    }
    EXPECT_GE(waited, 1u);
    EXPECT_GE(not_started, 1u);
    EXPECT_EQ(waited + not_started, 10u);
    EXPECT_NE(s.err().find("cannot start a thread for a call"), std::string::npos) << s.err();
    EXPECT_EQ(s.request(12, "ping")["result"], json::object());
    EXPECT_EQ(s.close_and_wait(), 0);
}

TEST_F(McpServerTest, ABridgeThatIsNotRunningEndsTheCallAfterTheTakeUpTimeout) {
    McpSession& s = start({}, false, {"--timeout", "1"});
    s.initialize();
    json answer = s.call(1, "status");
    EXPECT_EQ(answer["result"]["isError"], true) << answer;
    EXPECT_EQ(answer["result"]["structuredContent"]["state"], "no-answer");
    EXPECT_NE(text_of(answer).find("bridge is not running"), std::string::npos) << answer;
    EXPECT_TRUE(files_under(host_->spool() + "/requests").empty());  // withdrawn
}

TEST_F(McpServerTest, WithoutAManifestEveryVerbIsOfferedAndTheHostDecides) {
    McpSession& s = start();
    std::filesystem::remove(host_->manifest());
    McpSession bare(host_->spool());
    bare.initialize();
    json list = bare.request(1, "tools/list");
    EXPECT_EQ(list["result"]["tools"].size(), 10u) << list;
    EXPECT_TRUE(
        tool_named(list, "logs")["inputSchema"]["properties"]["service"].contains("pattern"));
    json answer = bare.call(2, "logs", {{"service", "nosuch"}});
    EXPECT_EQ(answer["result"]["structuredContent"]["state"], "denied") << answer;
    (void)s;
}

}  // namespace
}  // namespace hb::test
