// Readies the sanitizer runtime (in -fsanitize builds only) to report
// from inside the seccomp filter.
#pragma once

namespace hb::sandbox {

// A sanitizer report starts by reading /proc/self/exe, the module list
// and debug info: all opens the filter kills, so the report would die
// before its first line. Symbolizing one address now loads and caches all
// of it while files can still be opened. A no-op in a normal build.
void warm_up_sanitizer_runtime();

}  // namespace hb::sandbox
