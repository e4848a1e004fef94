// mcp_host_run [--mutating N] [--deny VERB]... [--deny-later VERB]... -- CMD ARGS...
// Sets up a real host (AgentHost: a temp project, its manifest, and
// `hostbridge-executor watch`), runs CMD with HOSTBRIDGE_SPOOL and
// HB_AGENT_BIN set, and exits with its exit code; on failure prints the
// watch log. How the tests with clients of other authors (the MCP SDK, the
// Inspector) get a bridge to talk to.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/agent/agent_host.hpp"
#include "tests/support/files.hpp"
#include "tests/support/process.hpp"

int main(int argc, char** argv) {
    hb::test::HostOptions options;
    int i = 1;
    for (; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (i + 1 >= argc) break;
        if (arg == "--mutating")
            options.mutating_count = std::atoi(argv[++i]);
        else if (arg == "--deny")
            options.denied.emplace_back(argv[++i]);
        else if (arg == "--deny-later")
            options.denied_later.emplace_back(argv[++i]);
        else
            break;
    }
    if (i >= argc) {
        std::fprintf(
            stderr,
            "usage: mcp_host_run [--mutating N] [--deny VERB] [--deny-later VERB] -- CMD...\n");
        return 2;
    }
    if (auto why = hb::test::AgentHost::unavailable(); !why.empty()) {
        std::fprintf(stderr, "mcp_host_run: %s\n", why.c_str());
        return 2;
    }
    hb::test::AgentHost host(options);
    host.start();
    ::setenv("HOSTBRIDGE_SPOOL", host.spool().c_str(), 1);
    ::setenv("HB_AGENT_BIN", HB_AGENT_BIN, 1);
    // The agent's side, as in its container: no host configuration. The
    // runner's own ~/.config/hostbridge would make the client a host client
    // that uses only this user's installs (docs/agent-clients.md, "On the host").
    hb::test::TempDir agent_home{"agent-home"};
    ::setenv("HOME", agent_home.path().c_str(), 1);
    ::unsetenv("XDG_CONFIG_HOME");
    hb::test::Command command;
    command.argv.assign(argv + i, argv + argc);
    command.search_path = true;
    command.in = command.out = command.err = "";  // the caller's streams
    const int status = hb::test::Child(command).wait();
    const int code = status < 0 ? 1 : status;  // killed by a signal: a failure
    if (code != 0) std::fprintf(stderr, "mcp_host_run: watch log:\n%s", host.log().c_str());
    return code;
}
