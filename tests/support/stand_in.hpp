// A stand-in program's behaviour, for the fakes of a process the executor
// starts with a fixed argv (tests/executor/fake_parser.cpp,
// fake_snapshot.cpp): the path a test puts in bridge.json is the one
// argument a test has, and the kernel hands it over as AT_EXECFN, whatever
// argv[0] says. Header only: the fakes link nothing but what they fake.
#pragma once

#include <sys/auxv.h>

#include <string_view>

namespace hb::test {

// What follows `prefix` in the executed path's last component; empty when
// it was executed by another name.
inline std::string_view behaviour_from_name(std::string_view prefix) {
    const char* path = reinterpret_cast<const char*>(::getauxval(AT_EXECFN));
    std::string_view name = path != nullptr ? path : "";
    name = name.substr(name.rfind('/') + 1);
    return name.starts_with(prefix) ? name.substr(prefix.size()) : std::string_view{};
}

}  // namespace hb::test
