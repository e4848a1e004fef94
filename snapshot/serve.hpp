// One run of `hostbridge-snapshot` (snapshot/main.cpp): take the request and
// the two directory fds from the executor (ipc/snapshot_wire.hpp), confine
// this process to them (sandbox/confine.hpp) before anything of the
// checkout is read, copy (snapshot/copy.hpp), answer. A process that could
// not be confined copies nothing and answers why.
#pragma once

#include <functional>

#include "sandbox/confine.hpp"

namespace hb::snapshot {

// For the tests' stand-ins only (tests/executor/snapshot_probe.cpp);
// snapshot/main.cpp passes the defaults. `max_abi` is the Landlock ABI the
// process is confined at; `after_copy`, when set, runs confined after a
// copy, with the snapshot root's fd, to try what a bug could.
struct ServeOptions {
    int max_abi = sandbox::kLandlockAbi;
    std::function<void(int root_fd)> after_copy;
};

// `sock`: the executor's socket. 0 when an answer was sent (a snapshot or
// a refusal), else the exit code of main.cpp's table.
int serve(int sock, const ServeOptions& options);

inline constexpr int kExitProtocol = 2;  // the executor's messages out of shape
inline constexpr int kExitIo = 3;        // the answer could not be sent

}  // namespace hb::snapshot
