// The engine's time as text (ipc/rfc3339.hpp): the executor writes it into
// `--since` (engines/podman/rows.cpp), the tests into emulated logs.
#include <cstdio>

#include "ipc/rfc3339.hpp"
#include "ipc/sys.hpp"

namespace hb {

std::string rfc3339_utc_ns(std::int64_t ns) {
    std::string stamp = sys::format_utc(ns / 1000000000);  // "YYYY-MM-DDTHH:MM:SSZ"
    char frac[16];
    std::snprintf(frac, sizeof frac, ".%09lldZ", static_cast<long long>(ns % 1000000000));
    stamp.pop_back();
    return stamp + frac;
}

}  // namespace hb
