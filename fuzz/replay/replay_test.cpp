// Replays every committed corpus file through the fuzz entry functions.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz/entry.hpp"

namespace {

namespace fs = std::filesystem;

std::size_t replay(const char* sub, void (*entry)(const std::uint8_t*, std::size_t)) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(fs::path(HB_CORPUS_DIR) / sub)) {
        if (!e.is_regular_file()) continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                        std::istreambuf_iterator<char>());
        SCOPED_TRACE(e.path().string());
        entry(bytes.data(), bytes.size());  // aborts on a broken invariant
        ++n;
    }
    return n;
}

TEST(FuzzReplay, ValidateCorpus) {
    EXPECT_GE(replay("validate", hb::fuzz::validate_one), 20U);
}

// The MCP corpus, and the parser's (request bodies are JSON too).
TEST(FuzzReplay, McpCorpus) {
    EXPECT_GE(replay("mcp", hb::fuzz::mcp_one), 5U);
    EXPECT_GE(replay("validate", hb::fuzz::mcp_one), 20U);
}

TEST(FuzzReplay, WireCorpus) {
    EXPECT_GE(replay("wire", hb::fuzz::wire_one), 10U);
}

TEST(FuzzReplay, ScreenCorpus) {
    EXPECT_GE(replay("screen", hb::fuzz::screen_one), 10U);
}

TEST(FuzzReplay, ImageCorpus) {
    EXPECT_GE(replay("image", hb::fuzz::image_one), 4U);
}

TEST(FuzzReplay, LoglinesCorpus) {
    EXPECT_GE(replay("loglines", hb::fuzz::loglines_one), 4U);
}

}  // namespace
