// The image-config reader (parser/image_config.cpp) on what Debian 12's
// podman 4.3.1 saved of a docker-format image with two ONBUILD triggers and
// a label full of JSON punctuation: its config
// (data/podman-4.3.1-onbuild-config.json) and, through a remote client,
// the whole `save --format docker-archive` tar
// (data/podman-4.3.1-remote-save-onbuild.tar); and on what no engine writes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <algorithm>
#include <cstring>

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

// --- the tar ---------------------------------------------------------

std::string file_text(const std::string& name) {
    std::ifstream in(std::string(HB_TEST_DATA) + "/" + name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

ImageConfigAnswer walk(const std::string& tar) {
    std::size_t at = 0;
    return read_image_archive(
        [&](std::uint8_t* buf, std::size_t size) {
            // In small pieces, as a pipe or a slow file would give them.
            const std::size_t n = std::min({size, tar.size() - at, std::size_t{700}});
            std::memcpy(buf, tar.data() + at, n);
            at += n;
            return static_cast<ssize_t>(n);
        },
        4);
}

// One ustar entry: header (checksum filled in) and data padded to 512.
std::string entry(const std::string& name, const std::string& data, char type = '0') {
    std::string h(512, '\0');
    h.replace(0, name.size(), name);
    std::snprintf(h.data() + 100, 8, "%07o", 0444);
    std::snprintf(h.data() + 124, 12, "%011o", static_cast<unsigned>(data.size()));
    h[156] = type;
    h.replace(257, 8,
              std::string("ustar\0"
                          "00",
                          8));
    h.replace(148, 8, "        ");
    unsigned sum = 0;
    for (const char c : h) sum += static_cast<unsigned char>(c);
    std::snprintf(h.data() + 148, 8, "%06o", sum);
    std::string padded = data;
    padded.resize((data.size() + 511) / 512 * 512, '\0');
    return h + padded;
}

const std::string kEnd(1024, '\0');
const std::string kHex(64, 'a');

TEST(ImageArchive, FindsTheConfigOfARealRemoteSave) {
    const std::string tar = file_text("podman-4.3.1-remote-save-onbuild.tar");
    ASSERT_GT(tar.size(), 1024u);
    EXPECT_EQ(walk(tar), (ImageConfigAnswer{4, ImageConfigStatus::Ok, 2}));
}

TEST(ImageArchive, ReadsPastLayersLinksAndDirectories) {
    const std::string tar = entry(std::string(64, '1') + ".tar", std::string(5000, 'x')) +
                            entry(kHex + "/", "", '5') + entry(kHex + "/layer.tar", "", '2') +
                            entry(kHex + "/json", "{\"config\":{\"OnBuild\":[\"RUN a\"]}}") +
                            entry("./" + kHex + ".json", R"({"config": {"OnBuild": ["RUN x"]}})") +
                            entry("manifest.json", "[]") + kEnd;
    EXPECT_EQ(walk(tar), (ImageConfigAnswer{4, ImageConfigStatus::Ok, 1}));
}

TEST(ImageArchive, APaxPathOrSizeAppliesToTheNextEntry) {
    // A PAX record renames an innocent entry to the config's name.
    const std::string pax = "78 path=" + kHex + ".json\n";
    ASSERT_EQ(pax.size(), 78u);
    const std::string tar = entry("PaxHeaders/x", pax, 'x') +
                            entry("innocent", R"({"config": {"OnBuild": ["A", "B", "C"]}})") + kEnd;
    EXPECT_EQ(walk(tar), (ImageConfigAnswer{4, ImageConfigStatus::Ok, 3}));
}

TEST(ImageArchive, WhatPodmanDoesNotWriteIsRefused) {
    const std::string config = entry(kHex + ".json", "{}");
    EXPECT_EQ(walk(config + kEnd).status, ImageConfigStatus::Ok);
    // No config, two, one in a subdirectory (a legacy layer's `json` is not one).
    EXPECT_EQ(walk(entry("manifest.json", "[]") + kEnd).status, ImageConfigStatus::NotOneConfig);
    EXPECT_EQ(walk(config + config + kEnd).status, ImageConfigStatus::NotOneConfig);
    EXPECT_EQ(walk(entry("sub/" + kHex + ".json", "{}") + kEnd).status,
              ImageConfigStatus::NotOneConfig);
    EXPECT_EQ(walk(entry(std::string(64, 'A') + ".json", "{}") + kEnd).status,
              ImageConfigStatus::NotOneConfig);
    // Cut short: no end blocks, a header cut, data cut.
    EXPECT_EQ(walk(config).status, ImageConfigStatus::BadArchive);
    EXPECT_EQ(walk(config.substr(0, 300)).status, ImageConfigStatus::BadArchive);
    EXPECT_EQ(walk(entry("big", std::string(2000, 'x')).substr(0, 1024)).status,
              ImageConfigStatus::BadArchive);
    EXPECT_EQ(walk("").status, ImageConfigStatus::BadArchive);
    // A header whose checksum or size is not a number, or wrong.
    std::string bad = config;
    bad[0] = 'b';
    EXPECT_EQ(walk(bad + kEnd).status, ImageConfigStatus::BadArchive);
    bad = config;
    bad[130] = '9';
    EXPECT_EQ(walk(bad + kEnd).status, ImageConfigStatus::BadArchive);
    // A link or directory with data.
    EXPECT_EQ(walk(entry("l", "data", '2') + config + kEnd).status, ImageConfigStatus::BadArchive);
    // A PAX record out of shape.
    EXPECT_EQ(walk(entry("p", "5 x\n", 'x') + config + kEnd).status, ImageConfigStatus::BadArchive);
    // A config too large is refused unread; one out of shape as in read_image_config.
    EXPECT_EQ(walk(entry(kHex + ".json", "[]") + kEnd).status, ImageConfigStatus::BadShape);
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
