#pragma once
// One round trip to a one-shot reader in the parser's sandbox
// (hostbridge-parser --screen, --inspect, --image-config, --log-lines):
// start it, hand it the request and the fd it reads, wait for one answer.
// The callers (screen_client.cpp, inspect_client.cpp, image_config_client.cpp,
// log_lines_client.cpp) decode the answer with their own ipc/ decoder and
// check its sequence number.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ipc/result.hpp"

namespace hb::exec {

struct OneshotReader {
    const char* mode;         // the parser's argv[1], e.g. "--screen"
    const char* name;         // for messages: "the screen", "the inspect reader"
    std::size_t answer_size;  // the largest answer its wire allows
    int timeout_ms;           // only a bound on a hung reader
};

// A reader's bound in this build: sanitized builds run several times slower
// (as ParserClient::kRoundTripTimeout, executor/parser_client.hpp).
constexpr int reader_timeout_ms([[maybe_unused]] int plain_ms, [[maybe_unused]] int sanitized_ms) {
#ifdef HB_SANITIZED
    return sanitized_ms;
#else
    return plain_ms;
#endif
}

// The answer's bytes, or why there is none. The child is killed and reaped
// before this returns, whatever happened.
Result<std::vector<std::uint8_t>> ask_oneshot_reader(const std::string& parser_path,
                                                     const OneshotReader& reader,
                                                     std::span<const std::uint8_t> request, int fd);

}  // namespace hb::exec
