// hostbridge-agent: the agent's side of hostbridge in one static binary,
// dropped by `install` into the spool (bin/hostbridge-agent). It runs only
// inside the agent's container: the copy in the checkout is the agent's to
// replace (docs/agent-clients.md).
//   hostbridge-agent request [OPTIONS] VERB [SERVICE]   the request client
//   hostbridge-agent mcp [OPTIONS]                      an MCP server on stdio
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "client/agent/mcp_server.hpp"
#include "client/agent/tools.hpp"
#include "client/request/audit_lookup.hpp"
#include "client/request/request.hpp"
#include "client/request/request_spool.hpp"
#include "packaging/version.hpp"

namespace {

constexpr const char* kUsage =
    "usage: hostbridge-agent request [--project-dir DIR] [--timeout SECONDS] [--no-wait]\n"
    "                                [--lines N] [--since CURSOR] VERB [SERVICE]\n"
    "       hostbridge-agent mcp [--project-dir DIR] [--timeout SECONDS] [--manifest FILE]\n"
    "       hostbridge-agent --version\n"
    "\n"
    "The agent's client for hostbridge; run it only inside the agent's container.\n"
    "`request` asks the host to run one verb (see `hostbridge-agent request --help`).\n"
    "`mcp` serves this install's verbs as MCP tools on stdin/stdout (docs/MCP.md):\n"
    "  --project-dir DIR  the spool is DIR/untracked/hostbridge\n"
    "  --timeout SECONDS  how long a call waits for the host to take it up (default 120)\n"
    "  --manifest FILE    the tool manifest (default: bin/hostbridge-agent.json in the spool)\n"
    "\n"
    "The spool: --project-dir, else $HOSTBRIDGE_SPOOL, else the spool this binary lies in\n"
    "(SPOOL/bin/hostbridge-agent), else $REPO_ROOT/untracked/hostbridge, else\n"
    "untracked/hostbridge in the git top level. On the host (this user has a\n"
    "hostbridge config directory) only the spool of one of this user's installs:\n"
    "the install whose project directory is DIR, else the one $HOSTBRIDGE_SPOOL\n"
    "names, else the one whose project directory holds the current directory.\n"
    "\n"
    "Exit: `mcp` 0 when stdin ends, 64 on a usage error or when no spool is found,\n"
    "70 on an internal error; `request` as `hostbridge-agent request --help` says.\n";

// The spool this binary was dropped into, if it runs from SPOOL/bin/.
std::optional<std::string> own_spool() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return std::nullopt;
    std::string path(buf, static_cast<std::size_t>(n));
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return std::nullopt;
    std::string dir = path.substr(0, slash);
    if (dir.size() < 4 || dir.compare(dir.size() - 4, 4, "/bin") != 0) return std::nullopt;
    std::string spool = dir.substr(0, dir.size() - 4);
    if (spool.empty() || !hb::client::is_spool(spool)) return std::nullopt;
    return spool;
}

// Ranks the binary's own spool right after $HOSTBRIDGE_SPOOL (and
// --project-dir, which find_spool puts first anyway).
void prefer_own_spool() {
    const char* set = std::getenv("HOSTBRIDGE_SPOOL");
    if (set != nullptr && *set != '\0') return;
    if (auto spool = own_spool()) ::setenv("HOSTBRIDGE_SPOOL", spool->c_str(), 1);
}

int mcp_usage(const std::string& text) {
    std::fprintf(stderr, "hostbridge-agent mcp: %s\n%s", text.c_str(), kUsage);
    return 64;
}

int run_mcp(int argc, char** argv) {
    std::optional<std::string> project_dir, manifest_path;
    int timeout = 120;
    for (int i = 0; i < argc; ++i) {
        std::string_view arg = argv[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= argc) return std::nullopt;
            return std::string(argv[++i]);
        };
        if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (arg == "--project-dir") {
            project_dir = value();
            if (!project_dir) return mcp_usage("--project-dir needs a directory");
        } else if (arg == "--manifest") {
            manifest_path = value();
            if (!manifest_path) return mcp_usage("--manifest needs a file");
        } else if (arg == "--timeout") {
            auto v = value();
            if (!v || v->empty() || v->size() > 6 ||
                v->find_first_not_of("0123456789") != std::string::npos)
                return mcp_usage("--timeout takes whole seconds");
            timeout = std::stoi(*v);
        } else {
            return mcp_usage("unknown argument: " + std::string(arg).substr(0, 64));
        }
    }
    // A client that closed our stdout is gone: writes fail (EPIPE) and the
    // end of stdin ends the server, rather than a silent SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    auto spool = hb::client::find_spool(project_dir);
    if (!spool) {
        std::fprintf(stderr, "hostbridge-agent mcp: %s\n", spool.error().message.c_str());
        return 64;
    }
    hb::agent::ServerOptions options;
    options.spool = spool->path;
    options.install = spool->install;
    options.take_up_timeout_seconds = timeout;
    options.manifest = hb::agent::load_manifest(
        manifest_path.value_or(spool->path + "/bin/hostbridge-agent.json"));
    if (!options.manifest.found)
        std::fprintf(stderr,
                     "hostbridge-agent mcp: no tool manifest (%s): offering every verb; the "
                     "host still decides\n",
                     options.manifest.problem.c_str());
    return hb::agent::run_mcp_server(options, STDIN_FILENO, STDOUT_FILENO);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fputs(kUsage, stderr);
        return 64;
    }
    const std::string_view command = argv[1];
    if (command == "--version") {
        std::printf("hostbridge-agent %s\n", std::string(hb::kVersion).c_str());
        return 0;
    }
    if (command == "--help" || command == "-h" || command == "help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    prefer_own_spool();
    if (command == "request")
        return hb::client::run_request(argc - 2, argv + 2, "hostbridge-agent request",
                                       hb::client::audit_check);
    if (command == "mcp") {
        try {
            return run_mcp(argc - 2, argv + 2);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "hostbridge-agent mcp: internal error: %s\n", e.what());
            return 70;
        }
    }
    std::fprintf(stderr, "hostbridge-agent: unknown command '%.64s'\n%s", argv[1], kUsage);
    return 64;
}
