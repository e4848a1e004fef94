#include "engines/relay/pump.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <initializer_list>

namespace hb::relay {
namespace {

// One direction of a pair: bytes read from `from` not yet written to `to`.
// Every socket is non-blocking and each direction keeps its own buffer, so a
// reader that stops reading (podman keeps an attach or events stream open
// while it waits on another connection) stalls only its own direction, never
// the relay's other connections.
struct Flow {
    int from = -1;
    int to = -1;
    bool open = true;    // `from` may still send
    bool ended = false;  // its end was passed on (`to` shut for writing)
    std::size_t start = 0;
    std::size_t size = 0;
    char buf[65536];
};

// One client and its upstream.
struct Pair {
    bool used = false;
    Flow up;    // client -> engine
    Flow down;  // engine -> client
};

uid_t peer_uid(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return static_cast<uid_t>(-1);
    return cred.uid;
}

// Connects to the upstream socket (the pinned one by this process's own
// descriptor of it, /proc/self/fd/<n>), which must answer as the engine user.
int connect_upstream(const char* upstream, uid_t engine_uid) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", upstream);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        peer_uid(fd) != engine_uid) {
        ::close(fd);
        return -1;
    }
    return fd;
}

void close_pair(Pair& p) {
    ::close(p.up.from);
    ::close(p.up.to);
    p.used = false;
}

// Moves what it can along one flow without blocking; false when the pair
// must end (a side gone while it still had bytes to take).
bool step(Flow& f) {
    if (f.size == 0 && f.open) {
        const ssize_t n = ::read(f.from, f.buf, sizeof f.buf);
        if (n > 0) {
            f.start = 0;
            f.size = static_cast<std::size_t>(n);
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            f.open = false;
        }
    }
    if (f.size > 0) {
        // MSG_NOSIGNAL: a side that went away ends its pair, not the relay.
        const ssize_t n = ::send(f.to, f.buf + f.start, f.size, MSG_NOSIGNAL);
        if (n < 0 && errno != EINTR && errno != EAGAIN) return false;
        if (n > 0) {
            f.start += static_cast<std::size_t>(n);
            f.size -= static_cast<std::size_t>(n);
        }
    }
    if (!f.open && f.size == 0 && !f.ended) {
        ::shutdown(f.to, SHUT_WR);
        f.ended = true;
    }
    return true;
}

// What poll waits for on one side of a pair: to read while its flow's
// buffer is empty, to write while the other flow's holds bytes. A side is
// also watched once its flow has ended, for nothing but its hang-up: a
// podman that exited while the engine keeps its stream open (an attach
// nobody reads) frees its slot then, not when the engine next speaks.
short interest(const Flow& out_of, const Flow& into) {
    short events = 0;
    if (!out_of.ended && out_of.size == 0 && out_of.open) events |= POLLIN;
    if (!into.ended && into.size > 0) events |= POLLOUT;
    return events;
}

bool set_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

}  // namespace

void pump(int listening, const char* upstream_path, uid_t person_uid, uid_t engine_uid) {
    static Pair pairs[kMaxPairs];  // 4 MiB of buffers: not on the stack
    for (;;) {
        pollfd fds[1 + 2 * kMaxPairs];
        int slot[1 + 2 * kMaxPairs];  // the pair of fds[k]
        nfds_t n = 0;
        fds[n++] = {listening, POLLIN, 0};
        for (int i = 0; i < kMaxPairs; ++i) {
            const Pair& p = pairs[i];
            if (!p.used) continue;
            const short client = interest(p.up, p.down);
            const short upstream = interest(p.down, p.up);
            if (client != 0 || p.up.ended) {
                slot[n] = i;
                fds[n++] = {p.up.from, client, 0};
            }
            if (upstream != 0 || p.down.ended) {
                slot[n] = i;
                fds[n++] = {p.down.from, upstream, 0};
            }
        }
        if (::poll(fds, n, -1) < 0) {
            if (errno == EINTR) continue;
            ::_exit(1);
        }
        for (nfds_t k = 1; k < n; ++k) {
            if (fds[k].revents == 0) continue;
            Pair& p = pairs[slot[k]];
            if (!p.used) continue;
            const bool gone = (fds[k].revents & POLLHUP) != 0 &&
                              (fds[k].fd == p.up.from ? p.up.ended : p.down.ended);
            if (!step(p.up) || !step(p.down) || gone || (p.up.ended && p.down.ended)) close_pair(p);
        }
        if ((fds[0].revents & (POLLERR | POLLNVAL)) != 0) ::_exit(1);
        if (fds[0].revents != 0) {
            const int client = ::accept4(listening, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (client < 0) continue;
            // Only the person (the drain's uid, and so the relay's) is relayed.
            Pair* free_slot = nullptr;
            for (auto& p : pairs) {
                if (!p.used) {
                    free_slot = &p;
                    break;
                }
            }
            const int upstream = free_slot != nullptr && peer_uid(client) == person_uid
                                     ? connect_upstream(upstream_path, engine_uid)
                                     : -1;
            if (upstream < 0 || !set_nonblocking(upstream)) {
                if (upstream >= 0) ::close(upstream);
                ::close(client);
                continue;
            }
            free_slot->used = true;
            free_slot->up.from = client;
            free_slot->up.to = upstream;
            free_slot->down.from = upstream;
            free_slot->down.to = client;
            for (Flow* f : {&free_slot->up, &free_slot->down}) {
                f->open = true;
                f->ended = false;
                f->start = f->size = 0;
            }
        }
    }
}

}  // namespace hb::relay
