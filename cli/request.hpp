// `hostbridge request [--project-dir DIR] [--timeout SECONDS] [--no-wait] VERB [ARG]`:
// the agent client of docs/PROTOCOL.md ("Agent clients") in C++, waiting on the
// response with inotify instead of polling. Needs no host config, so it
// also runs inside a container.
#pragma once

#include <string_view>

namespace hb::cli {

// Exit codes of every agent client (docs/PROTOCOL.md), not the admin tool's.
inline constexpr int kRequestDone = 0;
inline constexpr int kRequestUsage = 64;
inline constexpr int kRequestRefused = 70;  // denied, expired or failed
inline constexpr int kRequestNoAnswer = 75;

// argv[0] .. argv[argc - 1] are the arguments after the word `request`
// (the admin tool calls run_request(argc - 2, argv + 2)). Returns the exit
// code; never throws. `program` names the command in messages and usage
// (hostbridge-agent runs the same client).
int run_request(int argc, char** argv, std::string_view program = "hostbridge request");

}  // namespace hb::cli
