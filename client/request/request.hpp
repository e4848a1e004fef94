// `hostbridge request [--project-dir DIR] [--timeout SECONDS] [--no-wait]
// [--lines N] [--since CURSOR] VERB [ARG]`:
// the agent client of docs/PROTOCOL.md ("Agent clients") in C++, waiting on the
// response with inotify instead of polling. Needs no host config, so it
// also runs inside a container.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "client/request/host_install.hpp"
#include "client/request/request_response.hpp"

namespace hb::client {

// Exit codes of every agent client (docs/PROTOCOL.md), not the admin tool's.
inline constexpr int kRequestDone = 0;
inline constexpr int kRequestUsage = 64;
inline constexpr int kRequestRefused = 70;  // denied, expired or failed
inline constexpr int kRequestNoAnswer = 75;

// What the executor recorded about one request: its last final event in
// the install's audit log (common/audit_log.hpp), read on the host by the
// host clients (client/request/audit_lookup.hpp). The agent can forge any file in
// responses/, never this.
struct RecordedOutcome {
    ResponseState state = ResponseState::Other;  // what the event stands for
    std::string event;                           // "succeeded", "denied", ...
    std::optional<std::int64_t> exit_code;
    std::optional<std::string> reason;
};
// What the executor took the request to ask: verb and service of its
// `started` event (of the final event when it never started), the log
// window of the final event's detail (docs/AUDIT-LOG.md). The agent can
// replace a request file in requests/ under the same name.
struct RecordedAsk {
    bool started = false;
    std::string verb;
    std::optional<std::string> arg;
    std::optional<std::string> lines;
    std::optional<std::string> since;
};
struct AuditCheck {
    std::string log;                         // where it was read, for messages
    std::optional<RecordedOutcome> outcome;  // none: no final event names it
    std::optional<RecordedAsk> asked;        // none: no event of it names a verb
};
// The install whose spool the client used (client/request/host_install.hpp);
// an error: its log cannot be read.
using AuditLookup =
    std::function<Result<AuditCheck>(const HostInstall& install, const std::string& request_name)>;

// argv[0] .. argv[argc - 1] are the arguments after the word `request`
// (the admin tool calls run_request(argc - 2, argv + 2)). Returns the exit
// code; never throws. `program` names the command in messages and usage
// (hostbridge-agent runs the same client). With `audit` (the admin tool on
// the host), a final answer is reported as the audit log records it, and
// where the spool's answer differs, that is said (docs/PROTOCOL.md).
int run_request(int argc, char** argv, std::string_view program = "hostbridge request",
                AuditLookup audit = nullptr);

}  // namespace hb::client
