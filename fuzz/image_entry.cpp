// Invariants of the saved-image reader (parser/image_config.cpp, run before
// a build with an engine user) on arbitrary bytes, read in pieces of every
// size: it never crashes, reads past the end or loops, answers the same for
// the same bytes however they arrive, and every answer is one the executor
// accepts (decode_image_config_answer): a known status, a count only when
// the status is Ok.
#include <algorithm>
#include <cstring>

#include "fuzz/check.hpp"
#include "fuzz/entry.hpp"
#include "parser/image_config.hpp"

namespace hb::fuzz {

namespace {

hb::ImageConfigAnswer walk(const std::uint8_t* data, std::size_t size, std::size_t piece) {
    std::size_t at = 0;
    return parser::read_image_archive(
        [&](std::uint8_t* buf, std::size_t want) {
            const std::size_t n = std::min({want, size - at, piece});
            std::memcpy(buf, data + at, n);
            at += n;
            return static_cast<ssize_t>(n);
        },
        9);
}

}  // namespace

void image_one(const std::uint8_t* data, std::size_t size) {
    const hb::ImageConfigAnswer whole = walk(data, size, size + 1);
    HB_FUZZ_CHECK(whole.seq == 9);
    HB_FUZZ_CHECK(whole.status <= hb::kLastImageConfigStatus);
    HB_FUZZ_CHECK(whole.status == hb::ImageConfigStatus::Ok || whole.triggers == 0);
    HB_FUZZ_CHECK(walk(data, size, 1 + size % 613) == whole);
    const auto bytes = hb::encode_image_config_answer(whole);
    const auto back = hb::decode_image_config_answer(bytes);
    HB_FUZZ_CHECK(back && *back == whole);
}

}  // namespace hb::fuzz
