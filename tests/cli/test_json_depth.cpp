// ipc/json_depth.cpp, and the readers of agent-written JSON that use it.
#include <gtest/gtest.h>

#include <string>

#include "client/request/request_response.hpp"
#include "ipc/json_depth.hpp"

namespace hb::admin {
using client::parse_response;
namespace {

std::string nested(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

TEST(JsonDepth, CountsArraysAndObjectsOutsideStrings) {
    EXPECT_TRUE(json_depth_within(nested(64)));
    EXPECT_FALSE(json_depth_within(nested(65)));
    EXPECT_TRUE(json_depth_within("{\"a\":{\"b\":[1,{\"c\":[]}]}}", 5));
    EXPECT_FALSE(json_depth_within("{\"a\":{\"b\":[1,{\"c\":[]}]}}", 4));
    // In a string, with escaped quotes and backslashes around them.
    EXPECT_TRUE(json_depth_within("[\"" + std::string(1000, '[') + "\\\"\\\\\"]", 1));
    EXPECT_FALSE(json_depth_within("[\"\\\\\"" + std::string(3, '['), 3));
    // Unbalanced closers do not buy depth.
    EXPECT_FALSE(json_depth_within(std::string(10, ']') + nested(5), 4));
}

// The agent can write anything into responses/: a deep one is refused,
// not parsed (nlohmann recurses on it).
TEST(JsonDepth, ADeeplyNestedResponseIsRefused) {
    auto deep = parse_response("{\"state\":\"done\",\"output\":" + nested(100000) + "}");
    ASSERT_FALSE(deep);
    EXPECT_EQ(deep.error().message, "nested too deeply");
    auto fine = parse_response("{\"state\":\"done\",\"request\":\"x\"}");
    EXPECT_TRUE(fine || fine.error().message != "nested too deeply");
}

}  // namespace
}  // namespace hb::admin
