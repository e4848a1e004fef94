// libFuzzer target: the windowed logs' line chooser. See loglines_entry.cpp.
#include "fuzz/entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hb::fuzz::loglines_one(data, size);
    return 0;
}
