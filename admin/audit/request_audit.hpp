// `hostbridge request` run on the host checks its answer against the audit
// log (docs/PROTOCOL.md, "A client on the host"): the request's last final
// event, and what its `started` event says ran, read from the log of the
// install whose spool it used (client/request/host_install.hpp). The agent
// client (client/agent/) has no such view.
#pragma once

#include <optional>
#include <string>

#include "client/request/request.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

// The AuditLookup of client/request/request.hpp for this user's installs.
Result<client::AuditCheck> audit_check(const client::HostInstall& install,
                                       const std::string& request_name);

// The outcome a final event stands for; nullopt for any other event
// (`started`, `held`, `allowed`, ...), which ends nothing.
std::optional<client::ResponseState> final_state_of(std::string_view event);

}  // namespace hb::admin
