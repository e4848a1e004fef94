// libFuzzer target: `hostbridge-agent mcp`'s message reader. See mcp_entry.cpp.
#include "fuzz/entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hb::fuzz::mcp_one(data, size);
    return 0;
}
