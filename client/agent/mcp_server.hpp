// `hostbridge-agent mcp`: an MCP server on stdin/stdout (JSON-RPC 2.0, one
// message a line) whose tools are this install's verbs (client/agent/tools.hpp).
// A tools/call writes a request exactly as the `request` client does and
// waits for the answer the same way (client/request/request_wait.hpp); see docs/MCP.md.
#pragma once

#include <optional>
#include <string>

#include "client/agent/tools.hpp"
#include "client/request/host_install.hpp"

namespace hb::agent {

struct ServerOptions {
    std::string spool;  // an existing spool directory
    // On the host: the install it belongs to, opened beneath its project
    // dir (client/request/request_spool.hpp, Spool::open).
    std::optional<client::HostInstall> install;
    Manifest manifest;
    int take_up_timeout_seconds = 120;
    int progress_interval_seconds = 5;
};

// Serves until stdin ends; returns the exit code. Diagnostics go to stderr.
int run_mcp_server(const ServerOptions& options, int in_fd, int out_fd);

}  // namespace hb::agent
