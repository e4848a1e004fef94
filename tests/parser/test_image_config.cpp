// The image-config reader (parser/image_config.cpp) on the real config
// Debian 12's podman 4.3.1 saved (`podman save --format docker-dir`) of a
// docker-format image with two ONBUILD triggers and a label full of JSON
// punctuation (data/podman-4.3.1-onbuild-config.json), and on what no
// engine writes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parser/image_config.hpp"

namespace hb::parser {
namespace {

ImageConfigAnswer read(const std::string& text) {
    const std::vector<std::uint8_t> bytes(text.begin(), text.end());
    return read_image_config(bytes, 9);
}

TEST(ImageConfig, CountsTheTriggersOfARealSavedConfig) {
    std::ifstream in(std::string(HB_TEST_DATA) + "/podman-4.3.1-onbuild-config.json",
                     std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    ASSERT_FALSE(s.str().empty());
    EXPECT_EQ(read(s.str()), (ImageConfigAnswer{9, ImageConfigStatus::Ok, 2}));
}

TEST(ImageConfig, NoTriggersIsZero) {
    for (const char* text :
         {"{}", R"({"config": null})", R"({"config": {}})",
          R"({"config": {"OnBuild": null, "Env": ["A=1"]}})", R"({"config": {"OnBuild": []}})"}) {
        SCOPED_TRACE(text);
        EXPECT_EQ(read(text), (ImageConfigAnswer{9, ImageConfigStatus::Ok, 0}));
    }
    // Only config.OnBuild is what the builder runs; container_config is history.
    EXPECT_EQ(read(R"({"container_config": {"OnBuild": ["RUN x"]}, "config": {}})").triggers, 0u);
}

TEST(ImageConfig, WhatNoEngineWritesIsRefused) {
    EXPECT_EQ(read("").status, ImageConfigStatus::NotJson);
    EXPECT_EQ(read("{").status, ImageConfigStatus::NotJson);
    EXPECT_EQ(read(std::string(100, '[') + std::string(100, ']')).status,
              ImageConfigStatus::NotJson);
    for (const char* text :
         {"[]", "1", R"({"config": []})", R"({"config": "x"})",
          R"({"config": {"OnBuild": "RUN x"}})", R"({"config": {"OnBuild": [1]}})",
          R"({"config": {"OnBuild": ["RUN x", null]}})"}) {
        SCOPED_TRACE(text);
        EXPECT_EQ(read(text), (ImageConfigAnswer{9, ImageConfigStatus::BadShape, 0}));
    }
    EXPECT_EQ(read(std::string(kMaxImageConfigBytes + 1, ' ')).status, ImageConfigStatus::TooLarge);
}

TEST(ImageConfigWire, DecodesExactlyWhatItEncodes) {
    const ImageConfigAnswer a{77, ImageConfigStatus::Ok, 3};
    auto bytes = encode_image_config_answer(a);
    auto back = decode_image_config_answer(bytes);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, a);
    auto request = encode_image_config_request(5);
    EXPECT_EQ(*decode_image_config_request(request), 5u);

    auto bad = bytes;
    bad[0] ^= 1;  // magic
    EXPECT_FALSE(decode_image_config_answer(bad));
    bad = bytes;
    bad[10] = 1;  // padding
    EXPECT_FALSE(decode_image_config_answer(bad));
    bad = bytes;
    bad[8] = static_cast<std::uint8_t>(kLastImageConfigStatus) + 1;
    EXPECT_FALSE(decode_image_config_answer(bad));
    // A count with a failed status, and a count no image holds.
    EXPECT_FALSE(decode_image_config_answer(
        encode_image_config_answer({1, ImageConfigStatus::BadShape, 1})));
    EXPECT_FALSE(decode_image_config_answer(
        encode_image_config_answer({1, ImageConfigStatus::Ok, kMaxImageTriggers + 1})));
    EXPECT_FALSE(decode_image_config_answer(std::span(bytes).first(15)));
    EXPECT_FALSE(decode_image_config_request(std::span(request).first(7)));
}

}  // namespace
}  // namespace hb::parser
