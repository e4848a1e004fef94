// A real host for hostbridge-agent tests: a temp project with a spool,
// bridge.json, policy.conf, the tool manifest install would drop
// (admin/install/agent_manifest.hpp), a stack script, and `hostbridge-executor
// watch` on it. And McpSession: `hostbridge-agent mcp` as a child process
// driven line by line over pipes, as an MCP client drives it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tests/client/client_harness.hpp"

namespace hb::test {

struct HostOptions {
    // Written into policy.conf after the manifest: the manifest still
    // offers them, the host refuses them.
    std::vector<std::string> denied_later;
    // Denied before the manifest is written: not offered at all.
    std::vector<std::string> denied;
    // MODE_<verb>=ask: offered, and each call waits for a person (the tests
    // answer such calls by hand: this host does not hold requests).
    std::vector<std::string> asked;
    // More policy.conf lines, before the manifest (per-service rules).
    std::vector<std::string> extra_policy;
    int mutating_count = 20;
    // The manifest says `log_window`, as a podman-compose install with
    // settle would: this host is the stack backend, whose executor refuses
    // a window, so the tests that use it answer by hand.
    bool log_window = false;
};

class AgentHost {
  public:
    static std::string unavailable();
    explicit AgentHost(const HostOptions& options = {});
    ~AgentHost();
    AgentHost(const AgentHost&) = delete;
    AgentHost& operator=(const AgentHost&) = delete;

    void start();
    void stop();
    // Lets `uid` (a user of the test's own, not root) use the spool as the
    // agent does: the path to it searchable, requests/ and tmp/ its own.
    // Returns a copy of hostbridge-agent it may run.
    std::string hand_spool_to(uid_t uid) const;
    [[nodiscard]] const std::string& spool() const { return spool_; }
    [[nodiscard]] std::string manifest() const { return spool_ + "/bin/hostbridge-agent.json"; }
    [[nodiscard]] std::string log() const;

  private:
    TempDir dir_{"agent"};
    std::string root_;
    std::string spool_;
    std::string config_;
    Child daemon_;  // hostbridge-executor watch, once started
};

// The server run as `uid` (gid the same, no supplementary groups) with
// RLIMIT_NPROC `nproc`: a pids limit of its own, as a container's.
struct Confined {
    uid_t uid;
    rlim_t nproc;
    std::string binary;  // AgentHost::hand_spool_to's copy
};

class McpSession {
  public:
    // Runs `hostbridge-agent mcp ARGS` with HOSTBRIDGE_SPOOL=spool.
    McpSession(const std::string& spool, const std::vector<std::string>& args = {},
               const std::optional<Confined>& confined = std::nullopt);
    ~McpSession();
    McpSession(const McpSession&) = delete;
    McpSession& operator=(const McpSession&) = delete;

    void send_raw(const std::string& bytes);
    void send(const nlohmann::json& message) { send_raw(message.dump() + "\n"); }
    // The next message from the server, or nullopt after `limit`.
    std::optional<nlohmann::json> next(std::chrono::milliseconds limit = std::chrono::seconds(30));
    // Sends a request and returns its answer; notifications that arrive
    // first are kept in `seen`.
    nlohmann::json request(int id, const std::string& method,
                           const nlohmann::json& params = nlohmann::json::object());
    nlohmann::json initialize(const std::string& version = "2025-11-25");
    nlohmann::json call(int id, const std::string& tool,
                        const nlohmann::json& arguments = nlohmann::json::object());
    // Closes stdin; the exit code (-1 when it had to be killed).
    int close_and_wait();
    [[nodiscard]] bool running() { return child_.running(); }
    [[nodiscard]] std::string err() const;

    std::vector<nlohmann::json> seen;

  private:
    TempDir capture_{"mcp"};
    Child child_;
    int in_ = -1;
    int out_ = -1;
    std::string buffer_;
};

}  // namespace hb::test
