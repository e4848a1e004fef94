// fd hygiene shared by the parser's lockdown and the executor's runner.
#pragma once

#include "ipc/result.hpp"

namespace hb::sandbox {

// Closes every fd >= 3 except `keep` (-1: keep none). Uses close_range(2),
// falling back to walking /proc/self/fd where the kernel lacks it.
Result<void> close_fds_from_3(int keep = -1);

}  // namespace hb::sandbox
