#pragma once
// One round trip to a one-shot reader in the parser's sandbox
// (hostbridge-parser --screen, --inspect, --image-config): start it, hand it
// the request and the fd it reads, wait for one answer. The callers
// (screen_client.cpp, inspect_client.cpp, image_config_client.cpp) decode the
// answer with their own ipc/ decoder and check its sequence number.

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

// The answer's bytes, or why there is none. The child is killed and reaped
// before this returns, whatever happened.
Result<std::vector<std::uint8_t>> ask_oneshot_reader(const std::string& parser_path,
                                                     const OneshotReader& reader,
                                                     std::span<const std::uint8_t> request, int fd);

}  // namespace hb::exec
