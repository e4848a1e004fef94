#include "engines/podman/engine_relay.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/engine_socket.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

// At most this many connections at once (podman opens a few per command).
constexpr int kMaxPairs = 32;

// One client and its upstream: what each side has left to say.
struct Pair {
    int client = -1;
    int upstream = -1;
    bool client_open = true;    // the client may still send
    bool upstream_open = true;  // the engine may still send
};

uid_t peer_uid(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return static_cast<uid_t>(-1);
    return cred.uid;
}

bool send_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        // MSG_NOSIGNAL: a side that went away ends its pair, not the relay.
        const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

// Connects to the pinned socket, by this process's own descriptor of it.
int connect_pinned(int pinned, uid_t engine_uid) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d", pinned);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        peer_uid(fd) != engine_uid) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void close_pair(Pair& p) {
    ::close(p.client);
    ::close(p.upstream);
    p = Pair{};
}

// Copies what `from` has to `to`; at its end, passes the end on.
void pump(int from, int to, bool& open) {
    char buf[65536];
    const ssize_t n = ::read(from, buf, sizeof buf);
    if (n > 0 && send_all(to, buf, static_cast<std::size_t>(n))) return;
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    open = false;
    ::shutdown(to, SHUT_WR);
}

[[noreturn]] void relay(int listening, int pinned, uid_t engine_uid) {
    Pair pairs[kMaxPairs];
    for (;;) {
        pollfd fds[1 + 2 * kMaxPairs];
        int slot[1 + 2 * kMaxPairs];
        nfds_t n = 0;
        fds[n++] = {listening, POLLIN, 0};
        for (int i = 0; i < kMaxPairs; ++i) {
            if (pairs[i].client < 0) continue;
            if (pairs[i].client_open) {
                slot[n] = i;
                fds[n++] = {pairs[i].client, POLLIN, 0};
            }
            if (pairs[i].upstream_open) {
                slot[n] = -i - 1;
                fds[n++] = {pairs[i].upstream, POLLIN, 0};
            }
        }
        if (::poll(fds, n, -1) < 0) {
            if (errno == EINTR) continue;
            ::_exit(1);
        }
        for (nfds_t k = 1; k < n; ++k) {
            if (fds[k].revents == 0) continue;
            const bool from_client = slot[k] >= 0;
            Pair& p = pairs[from_client ? slot[k] : -slot[k] - 1];
            if (p.client < 0) continue;
            if (from_client)
                pump(p.client, p.upstream, p.client_open);
            else
                pump(p.upstream, p.client, p.upstream_open);
            if (!p.client_open && !p.upstream_open) close_pair(p);
        }
        if ((fds[0].revents & (POLLERR | POLLNVAL)) != 0) ::_exit(1);
        if (fds[0].revents != 0) {
            const int client = ::accept4(listening, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) continue;
            // Only the person (the drain's own uid) is relayed.
            Pair* free_slot = nullptr;
            for (auto& p : pairs) {
                if (p.client < 0) {
                    free_slot = &p;
                    break;
                }
            }
            const int upstream = free_slot != nullptr && peer_uid(client) == ::getuid()
                                     ? connect_pinned(pinned, engine_uid)
                                     : -1;
            if (upstream < 0) {
                ::close(client);
                continue;
            }
            *free_slot = Pair{client, upstream, true, true};
        }
    }
}

}  // namespace

Result<EngineRelay> EngineRelay::start(const Config& config) {
    auto pinned = common::pin_engine_socket(*config.engine);
    if (!pinned) return pinned.error();
    const uid_t engine_uid = pinned->uid;

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
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return make_error(sys::errno_text("cannot fork the engine relay"));
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(0);
        // Nothing of the drain's but the two it needs (its log, its spool).
        const int a = listening.get();
        const int b = pinned->fd.get();
        const int low = std::min(a, b);
        const int high = std::max(a, b);
        ::close_range(3, static_cast<unsigned>(low) - 1, 0);
        ::close_range(static_cast<unsigned>(low) + 1, static_cast<unsigned>(high) - 1, 0);
        ::close_range(static_cast<unsigned>(high) + 1, ~0U, 0);
        relay(listening.get(), pinned->fd.get(), engine_uid);
    }
    out.pid_ = pid;
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
