// The strings a hostile agent writes to act on, hide or line up text on a
// person's terminal (issue 45), and the check of what a terminal received
// (tests/cli/test_screen_escapes.cpp, tests/agent/test_mcp_server.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hb::test {

std::string utf8_of(std::uint32_t cp);
std::string repeated(const std::string& piece, std::size_t n);

// C0 and C1 controls, ESC sequences (OSC 52, a title, CSI erase, DCS),
// bidi controls, zero-width characters, runs of U+3000, NBSP and U+2800,
// other Unicode blanks, combining marks, bytes that are not UTF-8, a
// 64 KiB line; then `mixes` seeded random mixes of them.
std::vector<std::string> hostile_strings(std::size_t mixes = 24);

// One code point at `i`, or len 0 when `s` is not UTF-8 there.
struct Cp {
    std::uint32_t cp = 0;
    std::size_t len = 0;
};
Cp decode_at(const std::string& s, std::size_t i);

// What a terminal received holds nothing it would act on or draw blank:
// no ESC or other C0 but its own line ends and tabs, no DEL, no C1, no
// byte that is not UTF-8, no bidi, zero-width, Unicode blank or combining
// mark. The first offence, or empty.
std::string offence(const std::string& shown);

}  // namespace hb::test
