// The agent clients against a spool where the test plays the host: it
// answers with response files written the way the host writes them
// (nlohmann/json dump(), published by rename). Every case runs for the sh
// client under dash, busybox sh and bash --posix, and for the C++ client.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "ipc/request_name.hpp"
#include "ipc/verbs.hpp"
#include "ipc/wire.hpp"
#include "tests/client/client_harness.hpp"

namespace hb::test {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// `text` against a pattern where 9 is a digit, x a lowercase hex digit and
// every other character itself (std::regex trips GCC 12's warnings under
// the sanitizers).
bool shaped(const std::string& text, const std::string& pattern) {
    if (text.size() != pattern.size()) return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        const bool digit = c >= '0' && c <= '9';
        if (pattern[i] == '9'   ? !digit
            : pattern[i] == 'x' ? !(digit || (c >= 'a' && c <= 'f'))
                                : c != pattern[i])
            return false;
    }
    return true;
}

// ^[0-9]{8}T[0-9]{6}Z-VERB-[0-9a-f]{16}\.json$
bool is_request_name(const std::string& name, const std::string& verb) {
    const std::string middle = "-" + verb + "-";
    return name.size() == 16 + middle.size() + 21 &&
           shaped(name.substr(0, 16), "99999999T999999Z") &&
           name.substr(16, middle.size()) == middle &&
           shaped(name.substr(16 + middle.size()), "xxxxxxxxxxxxxxxx.json");
}

bool is_rfc3339(const std::string& text) {
    return shaped(text, "9999-99-99T99:99:99Z");
}

json response(const std::string& name, const std::string& state) {
    return json{{"state", state},          {"request", name},
                {"verb", "ping"},          {"arg", nullptr},
                {"requested_at", nullptr}, {"updated_at", "2026-11-29T08:00:03Z"},
                {"exit_code", nullptr},    {"reason", nullptr},
                {"output", nullptr},       {"log", nullptr}};
}

// Held for a person, as the host answers a request under MODE_<verb>=ask.
json pending(const std::string& name, const json& expires_at) {
    json held = response(name, "pending");
    held["reason"] = "waiting for a person's approval on the host: `hostbridge allow " + name +
                     "` runs it, `hostbridge deny " + name + "` refuses it";
    held["expires_at"] = expires_at;
    return held;
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Every byte value but NUL and the invalid-UTF-8 range, printf-format and
// JSON-escape traps, and multi-byte characters of each length.
std::string tricky_output() {
    std::string text = "-leading dash, %s %d %% %b \\n \\u0041 \\\\ \"quoted\" 'single'\r\n";
    for (int c = 1; c < 0x80; ++c) text += static_cast<char>(c);
    text += std::string(1, '\0') + "after NUL\n";
    text += "é € 😀 ü\xc2\xa0 \u2028 \ufeff tab\there\n\n";
    return text;
}

class ClientProtocolTest : public ::testing::TestWithParam<ClientKind> {
  protected:
    void SetUp() override {
        if (auto why = client_unavailable(GetParam()); !why.empty()) GTEST_SKIP() << why;
        spool_ = dir_.path() + "/spool";
        make_spool(spool_);
    }

    ClientOptions with_spool() const {
        ClientOptions options;
        options.env = {"HOSTBRIDGE_SPOOL=" + spool_};
        return options;
    }

    std::unique_ptr<ClientProcess> start(const std::vector<std::string>& args) {
        return std::make_unique<ClientProcess>(GetParam(), args, with_spool());
    }

    // The request the client published, once it is there.
    std::string published() {
        std::string name = wait_for_json(spool_ + "/requests");
        EXPECT_FALSE(name.empty()) << "the client published no request";
        return name;
    }

    // Publishes a response the way the host does: temp file, then rename.
    void respond(const std::string& name, const json& body, int indent = -1,
                 bool ensure_ascii = false) {
        publish_response(spool_, name, body.dump(indent, ' ', ensure_ascii));
    }

    TempDir dir_;
    std::string spool_;
};

INSTANTIATE_TEST_SUITE_P(AllClients, ClientProtocolTest, ::testing::ValuesIn(kAllClients),
                         param_name);

TEST_P(ClientProtocolTest, DonePrintsTheOutputByteForByte) {
    auto client = start({"ping"});
    std::string name = published();
    json done = response(name, "done");
    done["output"] = tricky_output();
    respond(name, done);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, tricky_output());
    EXPECT_EQ(r.err, "");
}

TEST_P(ClientProtocolTest, LargeOutputOfControlCharactersComesThroughWhole) {
    auto client = start({"ping"});
    std::string name = published();
    std::string output;
    for (int i = 0; output.size() < 16384; ++i)
        output += static_cast<char>(i % 32) + std::string("é");
    json done = response(name, "done");
    done["output"] = output;
    respond(name, done);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, output);
}

TEST_P(ClientProtocolTest, AsciiEscapedAndPrettyPrintedResponsesReadTheSame) {
    // Another JSON writer may escape every non-ASCII character (surrogate
    // pairs included) or indent: still the same answer.
    for (int indent : {-1, 2}) {
        auto client = start({"ping"});
        std::string name = published();
        json done = response(name, "done");
        done["output"] = tricky_output();
        respond(name, done, indent, /*ensure_ascii=*/true);
        ClientResult r = client->wait();
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, tricky_output()) << "indent " << indent;
        std::filesystem::remove(spool_ + "/requests/" + name);
    }
}

TEST_P(ClientProtocolTest, DeniedExitsSeventyWithTheReasonOnStderr) {
    auto client = start({"exec"});
    std::string name = published();
    json denied = response(name, "denied");
    denied["reason"] = "hardcoded deny: \"exec\" is never allowed";
    respond(name, denied);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("denied"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("hardcoded deny: \"exec\" is never allowed"), std::string::npos) << r.err;
}

TEST_P(ClientProtocolTest, FailedGivesTheOutputAndTheExitCode) {
    auto client = start({"status"});
    std::string name = published();
    json failed = response(name, "failed");
    failed["exit_code"] = 3;
    failed["output"] = "stack: api is down\n";
    respond(name, failed);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_EQ(r.out, "stack: api is down\n");
    EXPECT_NE(r.err.find("failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("exit code 3"), std::string::npos) << r.err;
}

TEST_P(ClientProtocolTest, FailedByTimeoutGivesTheReason) {
    auto client = start({"rebuild", "api"});
    std::string name = published();
    json failed = response(name, "failed");
    failed["reason"] = "timeout after 1200 s";
    respond(name, failed);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_NE(r.err.find("timeout after 1200 s"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("exit code"), std::string::npos) << r.err;
}

TEST_P(ClientProtocolTest, ExpiredExitsSeventy) {
    auto client = start({"up"});
    std::string name = published();
    respond(name, response(name, "expired"));
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_NE(r.err.find("expired"), std::string::npos) << r.err;
}

TEST_P(ClientProtocolTest, NoAnswerExitsSeventyFiveAndWithdrawsTheRequest) {
    ClientResult r = run_client(GetParam(), {"--timeout", "1", "restart", "api"}, with_spool());
    EXPECT_EQ(r.exit_code, 75) << r.err;
    // Never early; late by at most the client's one-second clock granularity
    // plus process start-up on a loaded machine.
    EXPECT_GE(r.elapsed, 1s);
    EXPECT_LT(r.elapsed, 3s);
    EXPECT_NE(r.err.find("withdrawn"), std::string::npos) << r.err;
    EXPECT_EQ(files_under(spool_), std::vector<std::string>{})
        << "a withdrawn request must be gone";
}

TEST_P(ClientProtocolTest, QueuedDoesNotExtendTheTimeout) {
    auto client = start({"--timeout", "1", "down"});
    std::string name = published();
    respond(name, response(name, "queued"));
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 75) << r.err;
    EXPECT_NE(r.err.find("queued"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(spool_ + "/requests/" + name));
}

TEST_P(ClientProtocolTest, ARequestTheHostClaimedIsNotWithdrawn) {
    auto client = start({"--timeout", "1", "down"});
    std::string name = published();
    std::filesystem::rename(spool_ + "/requests/" + name, spool_ + "/processing/" + name);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 75) << r.err;
    EXPECT_NE(r.err.find("may still run"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(spool_ + "/processing/" + name));
}

TEST_P(ClientProtocolTest, SigtermWithdrawsTheRequest) {
    auto client = start({"--timeout", "30", "restart", "api"});
    std::string name = published();
    std::this_thread::sleep_for(300ms);  // past the C++ client's quick phase, too
    client->signal(SIGTERM);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 143) << r.err;
    EXPECT_NE(r.err.find("withdrawn"), std::string::npos) << r.err;
    EXPECT_EQ(files_under(spool_), std::vector<std::string>{});
}

TEST_P(ClientProtocolTest, RunningWaitsPastTheTimeoutForTheEnd) {
    auto client = start({"--timeout", "1", "rebuild", "api"});
    std::string name = published();
    respond(name, response(name, "running"));
    std::this_thread::sleep_for(2s);
    EXPECT_TRUE(client->running()) << "a running request must be waited for";
    json done = response(name, "done");
    done["exit_code"] = 0;
    done["output"] = "built\n";
    respond(name, done);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "built\n");
}

// MODE_<verb>=ask: the host claimed the request and holds it for a person.
// Taken up: --timeout no longer applies; the client says so once and waits
// for the person's decision.
TEST_P(ClientProtocolTest, PendingSaysOnceThatAPersonMustApproveAndWaitsPastTheTimeout) {
    auto client = start({"--timeout", "1", "restart", "api"});
    std::string name = published();
    std::filesystem::rename(spool_ + "/requests/" + name, spool_ + "/processing/" + name);
    const std::string expires_at = utc_in(120);
    respond(name, pending(name, expires_at));
    std::this_thread::sleep_for(2s);
    EXPECT_TRUE(client->running()) << "a pending request must be waited for";
    // Published again (the host rewrites it): still said once.
    respond(name, pending(name, expires_at), 2);
    std::this_thread::sleep_for(500ms);
    respond(name, response(name, "running"));
    std::this_thread::sleep_for(300ms);
    json done = response(name, "done");
    done["exit_code"] = 0;
    done["output"] = "restarted api\n";
    respond(name, done);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "restarted api\n");
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
    EXPECT_EQ(count_of(r.err, "a person must approve request " + name + " on the host"), 1u)
        << r.err;
    EXPECT_NE(r.err.find("until " + expires_at), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("`hostbridge allow " + name + "` runs it"), std::string::npos) << r.err;
}

TEST_P(ClientProtocolTest, APersonsRefusalOfAPendingRequestExitsSeventy) {
    auto client = start({"--timeout", "1", "down"});
    std::string name = published();
    std::filesystem::rename(spool_ + "/requests/" + name, spool_ + "/processing/" + name);
    respond(name, pending(name, utc_in(120)));
    ASSERT_TRUE(client->wait_for_err("a person must approve")) << "never read the pending answer";
    json denied = response(name, "denied");
    denied["reason"] = "denied by a person on the host: not during the demo";
    respond(name, denied);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 70) << r.err;
    EXPECT_NE(r.err.find("a person must approve"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("denied: denied by a person on the host: not during the demo"),
              std::string::npos)
        << r.err;
}

// Still pending once its expires_at (plus the grace for the host to write
// `expired`) has passed: 75, and the request is left alone. It stays in
// requests/ here, so a withdrawal would show.
TEST_P(ClientProtocolTest, PendingPastItsExpiryExitsSeventyFiveAndIsNotWithdrawn) {
    auto client = start({"--timeout", "30", "restart", "api"});
    std::string name = published();
    const std::string expires_at = utc_in(-9);  // the grace (10 s) ends within a second
    respond(name, pending(name, expires_at));
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 75) << r.err;
    EXPECT_LT(r.elapsed, 30s) << "the take-up timeout no longer applies";
    EXPECT_NE(r.err.find("was not decided: it expired at " + expires_at +
                         " and can no longer be allowed"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("withdrawn"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(spool_ + "/requests/" + name));
}

TEST_P(ClientProtocolTest, ASignalWhilePendingSaysItMayStillBeAllowedAndKeepsTheRequest) {
    auto client = start({"--timeout", "30", "restart", "api"});
    std::string name = published();
    respond(name, pending(name, utc_in(120)));
    // Signalled once it said it read `pending`: a fixed 1 s sleep failed one
    // loaded run (dash had not read it yet, so the answer was not this one).
    ASSERT_TRUE(client->wait_for_err("a person must approve")) << "never read the pending answer";
    client->signal(SIGTERM);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 143) << r.err;
    EXPECT_NE(r.err.find("a person must approve"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("was not decided; it may still be allowed later"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("withdrawn"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(spool_ + "/requests/" + name));
}

// No expires_at that reads: waited for as for running (the host's TTL ends
// it with `expired`), never given up on early.
TEST_P(ClientProtocolTest, PendingWithoutAReadableExpiryWaitsAsForRunning) {
    for (const json& expires_at : {json(), json("soon")}) {
        auto client = start({"--timeout", "1", "up"});
        std::string name = published();
        std::filesystem::rename(spool_ + "/requests/" + name, spool_ + "/processing/" + name);
        respond(name, pending(name, expires_at));
        std::this_thread::sleep_for(2s);
        EXPECT_TRUE(client->running()) << expires_at;
        respond(name, response(name, "expired"));
        ClientResult r = client->wait();
        EXPECT_EQ(r.exit_code, 70) << expires_at << r.err;
        EXPECT_NE(r.err.find("the host gave no expiry time"), std::string::npos) << r.err;
        std::filesystem::remove(spool_ + "/processing/" + name);
    }
}

TEST_P(ClientProtocolTest, APendingReasonIsShownWithControlCharactersMadeVisible) {
    auto client = start({"up"});
    std::string name = published();
    json held = pending(name, utc_in(120));
    held["reason"] = "waiting\x1b[2J for\na \u202eperson\t%s \\ \xc2\x9b é";
    respond(name, held);
    ASSERT_TRUE(client->wait_for_err("a person must approve")) << "never read the pending answer";
    respond(name, response(name, "done"));
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(": waiting\\x1b[2J for\\na \\u202eperson\\t%s \\ \\u009b é\n"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_EQ(count_of(r.err, "\n"), 1u) << r.err;
}

// Unicode blanks draw empty columns that could pass for spaces or line
// up text of the agent's own: shown as escapes by every client, written as
// UTF-8 or as JSON \u escapes (display/visible.hpp).
TEST_P(ClientProtocolTest, APendingReasonShowsUnicodeBlanksAsEscapes) {
    for (const bool ascii : {false, true}) {
        auto client = start({"up"});
        std::string name = published();
        json held = pending(name, utc_in(120));
        held["reason"] =
            "a\u3000b\u00a0c\u2000d\u200ae\u202ff\u205fg\u1680h\u2800i\u115fj\u3164k\uffa0l";
        respond(name, held, -1, ascii);
        ASSERT_TRUE(client->wait_for_err("a person must approve")) << "never read the answer";
        respond(name, response(name, "done"));
        ClientResult r = client->wait();
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find(": a\\u3000b\\u00a0c\\u2000d\\u200ae\\u202ff\\u205fg\\u1680h"
                             "\\u2800i\\u115fj\\u3164k\\uffa0l\n"),
                  std::string::npos)
            << (ascii ? "ascii: " : "utf-8: ") << r.err;
        std::filesystem::remove(spool_ + "/requests/" + name);
    }
}

TEST_P(ClientProtocolTest, OnlyItsOwnResponseCounts) {
    auto client = start({"ping"});
    std::string name = published();
    // Another client's answer, then a corrupt file under our name: neither
    // ends the wait.
    std::string other = "20261129T080000Z-ping-0123456789abcdef.json";
    json theirs = response(other, "done");
    theirs["output"] = "not yours";
    respond(other, theirs);
    write_file(spool_ + "/tmp/garbage", "{\"state\":\"done\",\"output\":\"trunc");
    std::filesystem::rename(spool_ + "/tmp/garbage",
                            spool_ + "/responses/" + name + ".response.json");
    std::this_thread::sleep_for(500ms);
    EXPECT_TRUE(client->running());
    json done = response(name, "done");
    done["output"] = "pong";
    respond(name, done);
    ClientResult r = client->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "pong");
}

TEST_P(ClientProtocolTest, NoWaitPrintsTheNameOfAWellFormedRequest) {
    ClientOptions options = with_spool();
    options.umask = 077;  // the host may be another uid: still 0644
    ClientResult r = run_client(GetParam(), {"--no-wait", "logs", "api_2-x"}, options);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_FALSE(r.out.empty());
    std::string name = r.out.substr(0, r.out.size() - 1);
    EXPECT_EQ(r.out.back(), '\n');
    EXPECT_TRUE(is_request_name(name, "logs")) << name;
    EXPECT_EQ(files_under(spool_), std::vector<std::string>{"requests/" + name});

    const std::string path = spool_ + "/requests/" + name;
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    std::string body = read_file(path);
    json parsed = json::parse(body);
    ASSERT_EQ(parsed.size(), 3u) << body;
    EXPECT_EQ(parsed["verb"], "logs");
    EXPECT_EQ(parsed["arg"], "api_2-x");
    EXPECT_TRUE(is_rfc3339(parsed["requested_at"].get<std::string>())) << body;
    EXPECT_EQ(body.back(), '\n');
}

TEST_P(ClientProtocolTest, AVerbWithoutArgHasNoArgKey) {
    ClientResult r = run_client(GetParam(), {"--no-wait", "join-network"}, with_spool());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string name = r.out.substr(0, r.out.size() - 1);
    json parsed = json::parse(read_file(spool_ + "/requests/" + name));
    EXPECT_EQ(parsed.size(), 2u);
    EXPECT_EQ(parsed["verb"], "join-network");
    EXPECT_TRUE(parsed.contains("requested_at"));
}

TEST_P(ClientProtocolTest, ForbiddenVerbsAreStillWrittenForTheHostToRefuse) {
    ClientResult r = run_client(GetParam(), {"--no-wait", "exec"}, with_spool());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(files_under(spool_).size(), 1u);
}

TEST_P(ClientProtocolTest, UsageErrorsExitSixtyFourAndWriteNothing) {
    const std::vector<std::vector<std::string>> cases = {
        {},
        {"Ping"},
        {"shell:web"},
        {"p\xc3\xafng"},
        {"ping!"},
        {"1ping"},
        {"ping", "API"},
        {"logs", "1api"},
        {"logs", ""},
        {"logs", "api web"},
        {"logs", "api\n"},
        {"logs", std::string(65, 'a')},
        {std::string(65, 'a')},
        {"ping", "a", "b"},
        {"--timeout"},
        {"--timeout", "abc", "ping"},
        {"--timeout", "-1", "ping"},
        {"--timeout", "1.5", "ping"},
        {"--bogus", "ping"},
        {"-x"},
    };
    for (const auto& args : cases) {
        ClientResult r = run_client(GetParam(), args, with_spool());
        std::string shown;
        for (const auto& a : args) shown += "[" + a + "]";
        EXPECT_EQ(r.exit_code, 64) << shown << ": " << r.err;
        EXPECT_NE(r.err.find("usage:"), std::string::npos) << shown;
        EXPECT_EQ(r.out, "") << shown;
        EXPECT_EQ(files_under(spool_), std::vector<std::string>{}) << shown;
    }
    // The longest legal shapes are fine.
    ClientResult ok = run_client(
        GetParam(), {"--no-wait", std::string(64, 'a'), std::string(64, 'b')}, with_spool());
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// One vocabulary (docs/agent-clients.md, "Shapes"): every client accepts
// exactly what the host's own tests in ipc/ accept. A verb is what a request
// name may carry (ipc/request_name.hpp), starting with a letter, at most 64
// bytes; an arg is what ipc/wire.hpp's is_valid_arg_shape takes; and each
// verb of ipc/verbs.hpp's table goes out with an argument of its kind. The
// shell client's patterns are its own text, so this holds them to ipc/.
TEST_P(ClientProtocolTest, ShapesAreTheHostsOwnTests) {
    std::vector<std::string> verbs = {std::string(64, 'a'), std::string(65, 'a'), "a--", "z-z"};
    std::vector<std::string> args = {std::string(64, 'a'), std::string(65, 'a'), "a__", "z9-"};
    for (char c : std::string("`{@[/09:_-azAZ. \t\x7f\xc3!*?")) {
        const std::string one(1, c);
        for (auto* list : {&verbs, &args}) {
            list->push_back("a" + one);
            list->push_back(one + "a");
        }
    }
    auto accepted = [&](const std::vector<std::string>& request) {
        std::vector<std::string> argv = {"--no-wait"};
        argv.insert(argv.end(), request.begin(), request.end());
        const ClientResult r = run_client(GetParam(), argv, with_spool());
        EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 64) << r.exit_code << ": " << r.err;
        return r.exit_code == 0;
    };
    for (const std::string& verb : verbs) {
        const bool host = verb.size() <= 64 && is_request_name_verb(verb) && verb.front() != '-';
        EXPECT_EQ(accepted({verb}), host) << "verb [" << verb << "]";
    }
    for (const std::string& arg : args)
        EXPECT_EQ(accepted({"logs", arg}), is_valid_arg_shape(arg)) << "arg [" << arg << "]";
    for (const VerbInfo& row : kVerbTable) {
        std::vector<std::string> request = {std::string(row.name)};
        if (row.arg != ArgKind::None) request.emplace_back("web");
        EXPECT_TRUE(accepted(request)) << row.name;
    }
}

// The log window (docs/PROTOCOL.md, `lines` and `since`): string keys after
// verb and arg, before requested_at, each only when given, byte for byte
// what the spec shows; the bounds of each value pass.
TEST_P(ClientProtocolTest, TheLogWindowIsWrittenAsStringKeysInTheSpecsOrder) {
    struct Case {
        std::vector<std::string> args;
        std::string keys;  // the body between the arg and requested_at
    };
    const std::vector<Case> cases = {
        {{"--lines", "50", "--since", "1764762565926492145:2"},
         R"(,"lines":"50","since":"1764762565926492145:2")"},
        // The order of the options is not the order of the keys.
        {{"--since=0:0", "--lines=1000"}, R"(,"lines":"1000","since":"0:0")"},
        {{"--lines", "1"}, R"(,"lines":"1")"},
        {{"--since", "9223372036854775807:1000000"}, R"(,"since":"9223372036854775807:1000000")"},
    };
    for (const auto& c : cases) {
        std::vector<std::string> args = {"--no-wait"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        args.insert(args.end(), {"logs", "web"});
        ClientResult r = run_client(GetParam(), args, with_spool());
        ASSERT_EQ(r.exit_code, 0) << c.keys << ": " << r.err;
        const std::string name = r.out.substr(0, r.out.size() - 1);
        ASSERT_TRUE(is_request_name(name, "logs")) << name;
        const std::string body = read_file(spool_ + "/requests/" + name);
        const std::string head = R"({"verb":"logs","arg":"web")" + c.keys + R"(,"requested_at":")";
        ASSERT_EQ(body.substr(0, head.size()), head) << body;
        EXPECT_TRUE(is_rfc3339(body.substr(head.size(), 20))) << body;
        EXPECT_EQ(body.substr(head.size() + 20), "\"}\n") << body;
        std::filesystem::remove(spool_ + "/requests/" + name);
    }
}

// Refused by the client with the host's own rules, before a request (and a
// rate-limit slot) is spent: each says which rule, and nothing is written.
TEST_P(ClientProtocolTest, ABadLogWindowOrOneForAnotherVerbIsAUsageErrorAndWritesNothing) {
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::string lines_rule = "--lines must be a number from 1 to 1000";
    const std::string since_rule = "--since must be a cursor that a logs answer returned";
    const std::string logs_only = "--lines and --since are for logs only";
    const std::vector<Case> cases = {
        {{"--lines", "5", "status"}, logs_only},
        {{"--since", "1:0", "restart", "web"}, logs_only},
        {{"--lines", "5", "--since", "1:0", "ping"}, logs_only},
        {{"--lines", "0", "logs", "web"}, lines_rule},
        {{"--lines", "1001", "logs", "web"}, lines_rule},
        {{"--lines", "0050", "logs", "web"}, lines_rule},
        {{"--lines", "10000", "logs", "web"}, lines_rule},
        {{"--lines", "-5", "logs", "web"}, lines_rule},
        {{"--lines", "5x", "logs", "web"}, lines_rule},
        {{"--lines=", "logs", "web"}, lines_rule},
        {{"--lines", " 5", "logs", "web"}, lines_rule},
        {{"--since", "9223372036854775808:0", "logs", "web"}, since_rule},
        {{"--since", "10000000000000000000:0", "logs", "web"}, since_rule},
        {{"--since", "1:1000001", "logs", "web"}, since_rule},
        {{"--since", "01:0", "logs", "web"}, since_rule},
        {{"--since", "1:00", "logs", "web"}, since_rule},
        {{"--since", "17", "logs", "web"}, since_rule},
        {{"--since", "1:2:3", "logs", "web"}, since_rule},
        {{"--since", ":1", "logs", "web"}, since_rule},
        {{"--since", "1:", "logs", "web"}, since_rule},
        {{"--since", "-1:0", "logs", "web"}, since_rule},
        {{"--since", "1:0\n", "logs", "web"}, since_rule},
        {{"--since=", "logs", "web"}, since_rule},
        {{"--lines"}, "--lines needs a number of lines"},
        {{"--since"}, "--since needs a cursor"},
    };
    for (const auto& c : cases) {
        ClientResult r = run_client(GetParam(), c.args, with_spool());
        std::string shown;
        for (const auto& a : c.args) shown += "[" + a + "]";
        EXPECT_EQ(r.exit_code, 64) << shown << ": " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << shown << ": " << r.err;
        EXPECT_NE(r.err.find("usage:"), std::string::npos) << shown;
        EXPECT_EQ(r.out, "") << shown;
        EXPECT_EQ(files_under(spool_), std::vector<std::string>{}) << shown;
    }
}

// A done windowed answer: the log text on stdout, byte for byte; the cursor
// and, only when true, `more` on stderr as lines a caller can pick out.
TEST_P(ClientProtocolTest, ADoneWindowedAnswerPrintsTheCursorAndMoreOnStderr) {
    for (const bool more : {true, false}) {
        auto client = start({"--lines", "2", "logs", "web"});
        const std::string name = published();
        json done = response(name, "done");
        done["exit_code"] = 0;
        done["output"] = "2026-12-03T10:00:00.1Z a\n2026-12-03T10:00:00.2Z b\n";
        done["cursor"] = "1764756000200000000:1";
        done["more"] = more;
        respond(name, done);
        ClientResult r = client->wait();
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, "2026-12-03T10:00:00.1Z a\n2026-12-03T10:00:00.2Z b\n");
        EXPECT_EQ(r.err,
                  std::string("cursor: 1764756000200000000:1\n") + (more ? "more: true\n" : ""));
        std::filesystem::remove(spool_ + "/requests/" + name);
    }
}

// Only after a windowed request and a done answer; a cursor the agent forged
// with control bytes in it reaches the terminal made visible, on one line.
TEST_P(ClientProtocolTest, TheCursorIsPrintedOnlyForADoneWindowedAnswerAndMadeVisible) {
    auto plain = start({"logs", "web"});
    std::string name = published();
    json done = response(name, "done");
    done["output"] = "a\n";
    done["cursor"] = "1:1";
    done["more"] = true;
    respond(name, done);
    ClientResult r = plain->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::filesystem::remove(spool_ + "/requests/" + name);

    auto refused = start({"--since", "1:1", "logs", "web"});
    name = published();
    json denied = response(name, "denied");
    denied["reason"] = "this install's logs takes no lines or since";
    denied["cursor"] = "1:1";
    respond(name, denied);
    r = refused->wait();
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_NE(r.err.find("this install's logs takes no lines or since"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("cursor:"), std::string::npos) << r.err;
    std::filesystem::remove(spool_ + "/requests/" + name);

    auto forged = start({"--since", "1:1", "logs", "web"});
    name = published();
    done = response(name, "done");
    done["cursor"] = "1:2\x1b]52;c;eA==\x07\nmore: true";
    done["more"] = "true";  // not a JSON true
    respond(name, done);
    r = forged->wait();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "cursor: 1:2\\x1b]52;c;eA==\\x07\\nmore: true\n");
}

TEST_P(ClientProtocolTest, HelpIsNotAnError) {
    ClientResult r = run_client(GetParam(), {"--help"}, with_spool());
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("usage:"), std::string::npos);
    EXPECT_EQ(files_under(spool_), std::vector<std::string>{});
}

}  // namespace
}  // namespace hb::test
