// executor/responses: the exact JSON shape, and output that is always valid
// UTF-8 (cut at a character boundary, invalid bytes replaced).
#include "executor/responses.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace hb::exec {
namespace {

TEST(Responses, RenderHasEveryFieldInProtocolOrder) {
    Response r;
    r.state = ResponseState::Done;
    r.request = "20261129T080000Z-restart-0123456789abcdef.json";
    r.verb = Verb::Restart;
    r.arg = "api";
    r.requested_at = 1795939200;  // 2026-11-29T08:00:00Z
    r.updated_at = 1795939203;
    r.exit_code = 0;
    r.output = "ok\n";
    r.log = "archive/20261129T080000Z-restart-0123456789abcdef.json.log";
    const std::string text = render_response(r);
    const auto j = nlohmann::ordered_json::parse(text);
    std::vector<std::string> keys;
    for (const auto& [key, value] : j.items()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"state", "request", "verb", "arg", "requested_at",
                                              "updated_at", "exit_code", "reason", "output", "log",
                                              "expires_at", "services", "cursor", "more"}));
    EXPECT_TRUE(j["cursor"].is_null());
    EXPECT_TRUE(j["more"].is_null());
    EXPECT_EQ(j["state"], "done");
    EXPECT_EQ(j["verb"], "restart");
    EXPECT_EQ(j["requested_at"], "2026-11-29T08:00:00Z");
    EXPECT_EQ(j["updated_at"], "2026-11-29T08:00:03Z");
    EXPECT_EQ(j["exit_code"], 0);
    EXPECT_TRUE(j["reason"].is_null());
    EXPECT_EQ(text.back(), '\n');
}

TEST(Responses, QueuedHasNullsWhereNothingApplies) {
    Response r;
    r.request = "20261129T080000Z-ping-0123456789abcdef.json";
    const auto j = nlohmann::json::parse(render_response(r));
    EXPECT_EQ(j["state"], "queued");
    for (const char* key :
         {"verb", "arg", "requested_at", "exit_code", "reason", "output", "log"}) {
        EXPECT_TRUE(j[key].is_null()) << key;
    }
}

TEST(Responses, OutputKeepsTheLast16KiB) {
    std::string out(20000, 'a');
    out += "END";
    const std::string tail = utf8_tail(out);
    EXPECT_EQ(tail.size(), kMaxOutputBytes);
    EXPECT_EQ(tail.substr(tail.size() - 3), "END");
}

TEST(Responses, CutLandsOnACharacterBoundary) {
    // "é" is two bytes; the cut falls between them: the orphan is dropped.
    std::string out = "\xC3\xA9";
    out += std::string(kMaxOutputBytes - 1, 'b');
    const std::string tail = utf8_tail(out);
    EXPECT_EQ(tail, std::string(kMaxOutputBytes - 1, 'b'));
}

TEST(Responses, InvalidBytesBecomeReplacementCharacters) {
    const std::string fffd = "\xEF\xBF\xBD";
    EXPECT_EQ(utf8_tail("a\xFFz"), "a" + fffd + "z");
    EXPECT_EQ(utf8_tail("\xC0\xAF"), fffd + fffd);                        // overlong
    EXPECT_EQ(utf8_tail("\xED\xA0\x80"), fffd + fffd + fffd);             // surrogate
    EXPECT_EQ(utf8_tail("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // > U+10FFFF
    EXPECT_EQ(utf8_tail("\xE2\x82"), fffd + fffd);                        // truncated at the end
    EXPECT_EQ(utf8_tail("\xE2\x82\xAC \xF0\x9F\x98\x80"), "\xE2\x82\xAC \xF0\x9F\x98\x80");
    Response r;
    r.request = "x";
    const char raw[] = "bad \xFF\xFE bytes\0and nul";
    r.output = std::string(raw, sizeof raw - 1);  // the NUL included
    const auto j = nlohmann::json::parse(render_response(r));
    EXPECT_EQ(j["output"].get<std::string>().find('\xFF'), std::string::npos);
}

TEST(Responses, TimesUseTheRequestedAtFormat) {
    EXPECT_EQ(format_utc(0), "1970-01-01T00:00:00Z");
    EXPECT_EQ(format_utc(1795939200), "2026-11-29T08:00:00Z");
    EXPECT_EQ(response_file_name("a.json"), "a.json.response.json");
}

}  // namespace
}  // namespace hb::exec
