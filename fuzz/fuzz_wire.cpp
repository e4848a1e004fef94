// libFuzzer target: the wire decoders. See wire_entry.cpp.
#include "fuzz/entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    hb::fuzz::wire_one(data, size);
    return 0;
}
