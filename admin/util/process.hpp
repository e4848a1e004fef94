// Runs a helper program (git, systemctl, the user's shell, diff) from an
// argv, never through a shell string, with a deadline. The admin tool runs
// these interactively; the executor has its own runner.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "ipc/result.hpp"

namespace hb::admin {

enum class Stream { Capture, Inherit, Null };

struct RunOptions {
    std::chrono::milliseconds timeout{std::chrono::seconds(30)};
    Stream out = Stream::Capture;
    Stream err = Stream::Capture;
    // A new session: no controlling terminal (an interactive shell cannot
    // grab ours) and one process group to kill on timeout.
    bool new_session = true;
    // Default `/`: never the caller's cwd, which is often the agent's
    // checkout (a compose CLI reads its .env, an rc file or prompt runs git).
    std::optional<std::string> cwd;
    std::vector<std::string> env_set;    // "KEY=value", added or replacing
    std::vector<std::string> env_unset;  // "KEY"
};

struct RunResult {
    int exit_code = -1;  // -1 when killed by a signal or timed out
    bool timed_out = false;
    std::string out;
    std::string err;
    [[nodiscard]] bool ok() const { return exit_code == 0 && !timed_out; }
};

// argv[0] must be an absolute path. Fails only when the program could not
// be started at all; a non-zero exit is a RunResult.
Result<RunResult> run_process(const std::vector<std::string>& argv, const RunOptions& options = {});

}  // namespace hb::admin
