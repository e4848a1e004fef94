// Runs the real agent clients (the POSIX sh client under dash, busybox sh
// and bash --posix, and the C++ `hostbridge request`) as child processes
// with a clean environment, and gives tests a scratch spool to watch.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/files.hpp"
#include "tests/support/process.hpp"
#include "tests/support/spool.hpp"

namespace hb::test {

// Agent: `hostbridge-agent request`, the static binary (client/agent/).
enum class ClientKind { Dash, BusyboxSh, BashPosix, Cpp, Agent };
inline constexpr ClientKind kAllClients[] = {ClientKind::Dash, ClientKind::BusyboxSh,
                                             ClientKind::BashPosix, ClientKind::Cpp,
                                             ClientKind::Agent};

// "dash", "busybox_sh", "bash_posix", "cpp", "agent": for test names.
std::string client_name(ClientKind kind);
// The suffix a parameterized test over the clients is named with.
std::string param_name(const ::testing::TestParamInfo<ClientKind>& info);
bool is_shell(ClientKind kind);
// Empty when this machine can run the client; otherwise why not.
std::string client_unavailable(ClientKind kind);

// Creates a spool with every subdirectory docs/PROTOCOL.md lists.
void make_spool(const std::string& dir);
// Now plus `seconds`, in the requested_at format (the host's expires_at).
std::string utc_in(int seconds);
// publish_response and wait_for_json: tests/support/spool.hpp.

struct ClientOptions {
    // Added to the clean environment (PATH, HOME, LANG=C.UTF-8), e.g.
    // "HOSTBRIDGE_SPOOL=...".
    std::vector<std::string> env;
    std::optional<std::string> cwd;
    std::optional<mode_t> umask;
    // Put in front of PATH (e.g. a directory whose `awk` is a given awk).
    std::optional<std::string> path_prefix;
    // Shell clients only: run this file instead of the repo's script (the
    // copy installed into a spool as `request`).
    std::optional<std::string> script;
};

struct ClientResult {
    int exit_code = -1;  // -1: killed by a signal
    std::string out;
    std::string err;
    std::chrono::milliseconds elapsed{0};
};

class ClientProcess {
  public:
    // Starts the client with `args` (what follows the program name).
    ClientProcess(ClientKind kind, const std::vector<std::string>& args,
                  const ClientOptions& options = {});
    ~ClientProcess();  // kills a client still running
    ClientProcess(const ClientProcess&) = delete;
    ClientProcess& operator=(const ClientProcess&) = delete;

    // Waits for the exit; a client still running after `limit` is killed and
    // reported with exit code -1 (the test then fails on it).
    ClientResult wait(std::chrono::milliseconds limit = std::chrono::seconds(60));
    [[nodiscard]] bool running();
    void signal(int signo);
    // Until the client's stderr so far holds `text` (true), or it exited or
    // `limit` passed (false): what it printed, never how long it took, tells
    // a test the client reached a state.
    [[nodiscard]] bool wait_for_err(const std::string& text,
                                    std::chrono::milliseconds limit = std::chrono::seconds(60));

  private:
    TempDir capture_{"client"};
    Child child_;
    std::chrono::steady_clock::time_point started_;
};

ClientResult run_client(ClientKind kind, const std::vector<std::string>& args,
                        const ClientOptions& options = {});

// Runs a program (argv[0] absolute) to its end, with nothing but PATH in
// its environment; its exit code, or -1.
int run_program(const std::vector<std::string>& argv);

// Starts any program (argv[0] absolute) in a process group of its own,
// stdout and stderr appended to `log`; used for the watcher. Child::stop()
// ends it (and any straggler of its group).
Child start_daemon(const std::vector<std::string>& argv, const std::string& log);

}  // namespace hb::test
