// libFuzzer target: the Containerfile screen. See screen_entry.cpp.
#include "fuzz/entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hb::fuzz::screen_one(data, size);
    return 0;
}
