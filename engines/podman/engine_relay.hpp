// The engine user's podman socket, reached only through a relay the drain
// runs for the length of one command (docs/ENGINE-USER.md, "What changes for
// you and the agent").
// The socket's directory is the engine user's: an escape as that user can
// put a link to the person's own podman socket in its place, and a podman
// client connecting by name would follow it. So the drain pins the socket
// (common/engine_socket.hpp: no link, owned by the engine user), listens
// on a socket of its own in a fresh 0700 directory of the run dir, and
// starts hostbridge-engine-relay (engines/relay/, bridge.json engine.relay)
// with both, which confines itself to a byte pump's syscalls, connects each
// client that is the person to the pinned socket (never to the name),
// checks the answering peer is the engine user, and copies bytes both
// ways. podman cannot be handed the pinned
// file itself: rootless podman joins its pause process's namespaces even
// as a remote client, and from there /proc/<pid>/fd/<n> is refused
// (measured, podman 4.3.1: EACCES).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "executor/runner.hpp"
#include "ipc/result.hpp"

namespace hb::exec {

class EngineRelay {
  public:
    // Pins the socket, makes <run_dir>/.hostbridge-engine-XXXXXX/s and
    // starts the relay (it dies with the drain: PR_SET_PDEATHSIG); an error
    // when the relay binary cannot be run or its exec failed.
    static Result<EngineRelay> start(const Config& config);
    EngineRelay(EngineRelay&& other) noexcept;
    EngineRelay& operator=(EngineRelay&&) = delete;
    EngineRelay(const EngineRelay&) = delete;
    ~EngineRelay();  // the relay killed and reaped, its directory removed

    // unix://<its socket>, for CONTAINER_HOST.
    [[nodiscard]] const std::string& container_host() const { return host_; }
    [[nodiscard]] pid_t pid() const { return pid_; }

  private:
    EngineRelay() = default;
    pid_t pid_ = -1;
    std::string dir_;
    std::string host_;
};

// With an engine user (bridge.json "engine"): CONTAINER_HOST naming a
// relay to that user's socket as common/engine_socket.hpp pinned it
// (engines/podman/engine_relay.hpp), which makes every podman the argv table
// runs, podman-compose's included, a client of that user's service
// (docs/ENGINE-USER.md); `env` empty otherwise. Every command of the argv
// table gets `env` besides child_environment(), and the relay runs until
// this value goes. An error: the socket is not the engine user's, and
// nothing runs.
struct EngineEnvironment {
    std::optional<EngineRelay> relay;
    std::vector<std::string> env;
};
Result<EngineEnvironment> engine_environment(const Config& config);

// An engine query (engines/podman/settle.hpp): stdout to `out_fd`, stderr to
// `err_fd`, so the answer the sandbox reads holds no warning lines. It asks
// the engine `config` names (engine_environment).
RunResult run_query(const Config& config, const Argv& argv, int out_fd, int err_fd,
                    std::chrono::milliseconds timeout);

}  // namespace hb::exec
