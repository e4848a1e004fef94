#include "engines/podman/engine_relay.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "common/engine_socket.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

// The relay's fds, as engines/relay/main.cpp expects them.
constexpr int kRelayListening = 3;
constexpr int kRelayPinned = 4;

// Runs in the forked child: only async-signal-safe calls, then exec. A
// failure is reported as its errno on `report` (close-on-exec: an exec
// that succeeds closes it unwritten).
[[noreturn]] void exec_relay(const char* path, char* const argv[], int listening, int pinned,
                             int report, pid_t parent) {
    // It dies with the drain: PR_SET_PDEATHSIG survives the exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sys::reset_signals();
    // Above 5 first, so that no dup2 below overwrites another's source.
    const int r = ::fcntl(report, F_DUPFD_CLOEXEC, 6);
    const int l = ::fcntl(listening, F_DUPFD_CLOEXEC, 6);
    const int p = ::fcntl(pinned, F_DUPFD_CLOEXEC, 6);
    if (r < 0) ::_exit(127);
    // dup2 clears FD_CLOEXEC: 3 and 4 cross the exec, the report (5) does not.
    if (l < 0 || p < 0 || ::dup2(l, kRelayListening) < 0 || ::dup2(p, kRelayPinned) < 0 ||
        ::dup3(r, 5, O_CLOEXEC) < 0 || ::close_range(6, ~0U, 0) != 0) {
        const int err = errno;
        [[maybe_unused]] ssize_t n = ::write(r, &err, sizeof err);
        ::_exit(127);
    }
    char* const envp[] = {nullptr};
    ::execve(path, argv, envp);
    const int err = errno;
    [[maybe_unused]] ssize_t n = ::write(5, &err, sizeof err);
    ::_exit(127);
}

}  // namespace

Result<EngineRelay> EngineRelay::start(const Config& config) {
    const std::string& binary = config.engine->relay;
    // Checked before anything is made: without its relay the engine user's
    // engine is out of reach, and nothing runs.
    if (::access(binary.c_str(), X_OK) != 0)
        return make_error("the engine relay " + binary +
                          " (bridge.json engine.relay) cannot be run (" + std::strerror(errno) +
                          "), so no command can reach the engine user's podman; `hostbridge "
                          "doctor` says how to reinstall it");
    auto pinned = common::pin_engine_socket(*config.engine);
    if (!pinned) return pinned.error();

    std::string dir = config.run_dir + "/.hostbridge-engine-XXXXXX";
    if (::mkdtemp(dir.data()) == nullptr)
        return make_error(
            sys::errno_text("cannot make the engine relay's directory in " + config.run_dir));
    EngineRelay out;
    out.dir_ = dir;  // removed by the destructor from here on
    const std::string path = dir + "/s";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return make_error("the engine relay's socket path " + path + " is too long for a socket");
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd listening(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listening ||
        ::bind(listening.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listening.get(), 64) != 0)
        return make_error(sys::errno_text("cannot listen on " + path));
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return make_error(sys::errno_text("cannot start the engine relay"));
    UniqueFd report_read(pipe_fds[0]);
    UniqueFd report_write(pipe_fds[1]);
    // Built before fork: the child must not allocate.
    std::string uid = std::to_string(pinned->uid);
    std::string name = "hostbridge-engine-relay";
    char* const argv[] = {name.data(), uid.data(), nullptr};
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return make_error(sys::errno_text("cannot fork the engine relay"));
    if (pid == 0)
        exec_relay(binary.c_str(), argv, listening.get(), pinned->fd.get(), report_write.get(),
                   parent);
    out.pid_ = pid;  // killed and reaped by the destructor from here on
    report_write.reset();
    int err = 0;
    ssize_t n;
    while ((n = ::read(report_read.get(), &err, sizeof err)) < 0 && errno == EINTR) {
    }
    if (n != 0) return make_error(sys::errno_text("cannot start the engine relay " + binary, err));
    out.host_ = "unix://" + path;
    return out;
}

EngineRelay::EngineRelay(EngineRelay&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      dir_(std::move(other.dir_)),
      host_(std::move(other.host_)) {
    other.dir_.clear();
}

EngineRelay::~EngineRelay() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    if (!dir_.empty()) {
        ::unlink((dir_ + "/s").c_str());
        ::rmdir(dir_.c_str());
    }
}

Result<EngineEnvironment> engine_environment(const Config& config) {
    EngineEnvironment out;
    if (!config.engine) return out;
    auto relay = EngineRelay::start(config);
    if (!relay) return relay.error();
    out.env.push_back("CONTAINER_HOST=" + relay->container_host());
    // docker's client reads its own name (a docker engine user,
    // docs/DOCKER.md); the relay reaches the one socket bridge.json names.
    out.env.push_back("DOCKER_HOST=" + relay->container_host());
    // Without its buildx plugin, docker's build falls back to the legacy
    // builder, another parser than the screen's, with a warning alone; this
    // makes that an error (docs/DOCKER.md).
    out.env.push_back("DOCKER_BUILDKIT=1");
    out.relay.emplace(std::move(*relay));
    return out;
}

RunResult run_query(const Config& config, const Argv& argv, int out_fd, int err_fd,
                    std::chrono::milliseconds timeout) {
    auto engine = engine_environment(config);
    if (!engine) {
        RunResult failed;
        failed.error = engine.error().message;
        return failed;
    }
    return run_to(argv, out_fd, err_fd, timeout, engine->env);
}

}  // namespace hb::exec
