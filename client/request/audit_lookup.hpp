// A request client run by a person on the host checks its answer against
// the audit log (docs/PROTOCOL.md, "A client on the host"): the request's
// last final event, and what its `started` event says ran, read from the
// state dir of the install whose spool it used (host_install.hpp). The log
// is the person's, out of the agent's reach; `hostbridge request`,
// `hostbridge-agent request` and its MCP server on the host all read it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "client/request/request.hpp"
#include "ipc/result.hpp"

namespace hb::client {

// The AuditLookup of request.hpp.
Result<AuditCheck> audit_check(const HostInstall& install, const std::string& request_name);

// The outcome a final event stands for; nullopt for any other event
// (`started`, `held`, `allowed`, ...), which ends nothing.
std::optional<ResponseState> final_state_of(std::string_view event);

// What a client sent, as the log's events name it.
struct SentAsk {
    std::string verb;
    std::optional<std::string> arg;
    std::optional<std::string> lines;
    std::optional<std::string> since;
};

// The answer to report once the spool's final answer was checked against
// the log: the state, exit code and reason the log records; a sentence
// (visible) when they differ or cannot be confirmed; `refused` when the
// client must not report success whatever `state` says (the log could not
// be read, records no end, or records another request than the one sent).
struct Confirmed {
    ResponseState state = ResponseState::Other;
    std::optional<std::int64_t> exit_code;
    std::optional<std::string> reason;
    std::optional<std::string> note;
    bool refused = false;
};
Confirmed confirm_answer(const Response& response, const Result<AuditCheck>& checked,
                         const SentAsk& sent, const std::string& name);

}  // namespace hb::client
