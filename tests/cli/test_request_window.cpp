// The log window of the C++ request client (client/request/request_message.hpp,
// client/request/request_response.hpp) at the bounds of docs/PROTOCOL.md's rules; the
// clients run as processes in tests/client (ClientProtocolTest).
#include <gtest/gtest.h>

#include <string>

#include "client/request/request_message.hpp"
#include "client/request/request_response.hpp"

namespace hb::client {
namespace {

TEST(RequestWindow, LinesIsOneToAThousandWithoutALeadingZero) {
    for (const char* ok : {"1", "9", "10", "999", "1000"}) EXPECT_TRUE(check_lines(ok)) << ok;
    for (const char* bad : {"", "0", "00", "01", "1001", "9999", "10000", "-1", "+1", " 1", "1 ",
                            "1e3", "0x10", "１"})
        EXPECT_FALSE(check_lines(bad)) << bad;
    EXPECT_EQ(check_lines("0").error().message, "lines must be a number from 1 to 1000");
}

TEST(RequestWindow, SinceIsACursorAsALogsAnswerReturnsIt) {
    for (const char* ok : {"0:0", "1:0", "0:1", "1764762565926492145:2",
                           "9223372036854775807:1000000", "999999999999999999:999999"})
        EXPECT_TRUE(check_since(ok)) << ok;
    for (const char* bad : {"",
                            ":",
                            "0",
                            "0:",
                            ":0",
                            "00:0",
                            "0:00",
                            "01:1",
                            "1:01",
                            "9223372036854775808:0",
                            "9999999999999999999:0",
                            "10000000000000000000:0",
                            "1:1000001",
                            "1:9999999",
                            "1:10000000",
                            "-1:0",
                            "1:-1",
                            "1:2:3",
                            " 1:2",
                            "1:2 ",
                            "1:2\n",
                            "1.5:2",
                            "a:b"})
        EXPECT_FALSE(check_since(bad)) << bad;
    EXPECT_EQ(check_since("x").error().message,
              "since must be a cursor that a logs answer returned");
}

TEST(RequestWindow, TheBodyHasTheKeysInTheSpecsOrderAndNoneNotGiven) {
    auto body_of = [](const LogWindow& window) {
        auto message = make_request("logs", std::string("web"), window);
        EXPECT_TRUE(static_cast<bool>(message));
        // Up to requested_at, whose value is now.
        return message->body.substr(0, message->body.find(",\"requested_at\":\""));
    };
    EXPECT_EQ(body_of({}), R"({"verb":"logs","arg":"web")");
    EXPECT_EQ(body_of({std::string("50"), std::nullopt}),
              R"({"verb":"logs","arg":"web","lines":"50")");
    EXPECT_EQ(body_of({std::nullopt, std::string("0:0")}),
              R"({"verb":"logs","arg":"web","since":"0:0")");
    EXPECT_EQ(body_of({std::string("50"), std::string("1764762565926492145:2")}),
              R"({"verb":"logs","arg":"web","lines":"50","since":"1764762565926492145:2")");
    auto message = make_request("logs", std::string("web"), {std::string("5"), std::nullopt});
    ASSERT_TRUE(static_cast<bool>(message));
    EXPECT_TRUE(message->body.ends_with("Z\"}\n")) << message->body;
}

// Lenient like expires_at: a cursor or more of another type is unset, and
// the answer still reads.
TEST(RequestWindow, CursorAndMoreAreReadWhenOfTheirType) {
    auto r = parse_response(R"({"state":"done","cursor":"17:2","more":true})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->cursor, "17:2");
    EXPECT_EQ(r->more, true);
    r = parse_response(R"({"state":"done","cursor":null,"more":null})");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->cursor.has_value());
    EXPECT_FALSE(r->more.has_value());
    r = parse_response(R"({"state":"done","cursor":17,"more":"true"})");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->cursor.has_value());
    EXPECT_FALSE(r->more.has_value());
    r = parse_response(R"({"state":"done","more":false})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->more, false);
}

}  // namespace
}  // namespace hb::client
