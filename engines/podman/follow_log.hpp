// A windowed `logs` (docs/PROTOCOL.md, "Following logs"): the service's
// container found as the look finds it (engines/podman/settle.hpp ask_engine,
// its JSON read in the sandbox), its log read with window_log() of
// engines/argv_table.hpp into a sealed memfd, the lines chosen in the sandbox
// (engines/podman/log_lines_client.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "common/config.hpp"
#include "engines/podman/log_lines_client.hpp"
#include "engines/podman/rows.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

struct FollowOutcome {
    bool ok = false;
    std::string reason;  // when not ok: what failed, in a sentence
    LogSelection selection;
};

// `service`: an index into config.services (checked by argv_for).
// Engine warnings and the answer's lines also go to `log_fd`.
FollowOutcome follow_log(const Config& config, const Posture& posture, std::size_t service,
                         const LogWindow& window, int log_fd,
                         std::chrono::steady_clock::time_point deadline);

}  // namespace hb::exec
