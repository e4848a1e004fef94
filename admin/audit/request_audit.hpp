// `hostbridge request` run on the host checks its answer against the audit
// log (docs/PROTOCOL.md, "A client on the host"): the install whose spool
// it used is found among this user's, and the request's last final event
// read from its log. The agent client (client/agent/) has no such view.
#pragma once

#include <optional>
#include <string>

#include "client/request/request.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

// The AuditLookup of client/request/request.hpp for this user's installs.
Result<std::optional<client::AuditCheck>> audit_check(const std::string& spool_path,
                                                      const std::string& request_name);

// The outcome a final event stands for; nullopt for any other event
// (`started`, `held`, `allowed`, ...), which ends nothing.
std::optional<client::ResponseState> final_state_of(std::string_view event);

}  // namespace hb::admin
