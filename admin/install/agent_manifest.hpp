// The manifest `install` writes beside hostbridge-agent in the spool
// (bin/hostbridge-agent.json): this install's verbs with their policy mode,
// services, buildable services, limits and TTL, from which the agent's MCP
// server builds its tool list (docs/MCP.md). A convenience for the agent,
// never a security input: the host decides every request as always.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/config.hpp"
#include "common/policy.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

inline constexpr const char* kAgentBinDir = "bin";
inline constexpr const char* kAgentBinary = "hostbridge-agent";
inline constexpr const char* kAgentManifest = "hostbridge-agent.json";

// One JSON object and a final newline; the same install and policy give
// the same bytes, so a re-install that changes nothing rewrites nothing.
std::string render_agent_manifest(const Config& config, const common::Policy& policy,
                                  const std::string& spool_rel);

// Writes bin/ beneath the pinned spool fd `spool_fd` (created 0755 when
// absent, never through a link), then bin/hostbridge-agent (0755, when
// `binary` holds its bytes) and the manifest (0644), each as a temp file
// renamed over the old one: a running agent keeps the inode it runs.
// Returns each path shown with what happened ("created", "no change", ...).
Result<std::vector<std::pair<std::string, std::string>>> drop_agent(
    int spool_fd, const std::string& spool_shown, const std::optional<std::string>& binary,
    const std::string& manifest);

}  // namespace hb::admin
