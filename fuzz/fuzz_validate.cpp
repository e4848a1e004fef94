// libFuzzer target: the pure validator. See validate_entry.cpp.
#include "fuzz/entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hb::fuzz::validate_one(data, size);
    return 0;
}
