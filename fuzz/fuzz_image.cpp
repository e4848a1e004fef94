// libFuzzer target: the saved-image reader. See image_entry.cpp.
#include "fuzz/entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hb::fuzz::image_one(data, size);
    return 0;
}
