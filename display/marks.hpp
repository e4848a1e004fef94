// Combining marks: characters drawn over the one before them, which can
// strike text through, stack out of its line or make one letter pass for
// another. display/visible.cpp shows each as an escape.
#pragma once

#include <cstdint>

namespace hb::display {

// Whether `cp` is of general category Mn or Me (display/marks.py).
bool is_combining_mark(std::uint32_t cp);

}  // namespace hb::display
