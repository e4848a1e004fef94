// sendmsg/recvmsg with SCM_RIGHTS, strict on the receiving side.
#include "ipc/fd_passing.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace hb {
namespace {

Error errno_error(const char* what) {
    return make_error(std::string(what) + ": " + std::strerror(errno));
}

Result<void> send_impl(int sock, std::span<const std::uint8_t> bytes, int fd) {
    if (bytes.empty()) return make_error("send: refusing an empty message");
    iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    for (;;) {
        // MSG_NOSIGNAL: a dead peer is an error value, not a SIGPIPE.
        ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error("sendmsg");
        if (static_cast<std::size_t>(n) != bytes.size()) return make_error("sendmsg: short send");
        return {};
    }
}

// Room for more fds than we ever accept plus a credentials message, so that a
// peer sending a few extra fds or an unexpected cmsg is seen and its fds are
// closed by us; anything beyond this sets MSG_CTRUNC and the kernel drops
// the excess without installing it.
constexpr std::size_t kFdRoom = 16;
constexpr std::size_t kControlSize =
    CMSG_SPACE(sizeof(int) * kFdRoom) + CMSG_SPACE(sizeof(int) * 3 /* struct ucred */);

Result<Received> recv_impl(int sock, std::size_t max_size, FdPolicy policy) {
    Received out;
    out.bytes.resize(max_size);
    iovec iov{out.bytes.data(), max_size};
    alignas(cmsghdr) char control[kControlSize];
    msghdr msg{};
    ssize_t n;
    for (;;) {
        msg = msghdr{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof(control);
        n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_error("recvmsg");
        break;
    }

    // Take ownership of every fd that arrived before judging anything, so
    // each early return below closes them.
    std::vector<UniqueFd> fds;
    bool unexpected_cmsg = false;
    const auto* end = reinterpret_cast<const unsigned char*>(control) + msg.msg_controllen;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
            unexpected_cmsg = true;
            continue;
        }
        const unsigned char* data = CMSG_DATA(c);
        const unsigned char* data_end =
            std::min(reinterpret_cast<const unsigned char*>(c) + c->cmsg_len, end);
        for (const unsigned char* p = data; p + sizeof(int) <= data_end; p += sizeof(int)) {
            int fd;
            std::memcpy(&fd, p, sizeof(int));
            fds.emplace_back(fd);
        }
    }

    if (msg.msg_flags & MSG_CTRUNC) return make_error("recvmsg: control message truncated");
    if (msg.msg_flags & MSG_TRUNC) return make_error("recvmsg: message larger than expected");
    if (unexpected_cmsg) return make_error("recvmsg: unexpected control message");
    if (n == 0) {
        if (!fds.empty()) return make_error("recvmsg: fd on an empty message");
        out.kind = Received::Kind::Eof;
        out.bytes.clear();
        return out;
    }
    const std::size_t want = policy == FdPolicy::ExactlyOne ? 1 : 0;
    if (fds.size() != want) {
        return make_error("recvmsg: " + std::to_string(fds.size()) + " fds attached, expected " +
                          std::to_string(want));
    }
    if (want == 1) out.fd = std::move(fds[0]);
    out.bytes.resize(static_cast<std::size_t>(n));
    return out;
}

std::int64_t now_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

Result<void> send_message(int sock, std::span<const std::uint8_t> bytes) {
    return send_impl(sock, bytes, -1);
}

Result<void> send_message_with_fd(int sock, std::span<const std::uint8_t> bytes, int fd) {
    if (fd < 0) return make_error("send: invalid fd");
    return send_impl(sock, bytes, fd);
}

Result<Received> recv_message(int sock, std::size_t max_size, FdPolicy fds) {
    return recv_impl(sock, max_size, fds);
}

Result<Received> recv_message_timeout(int sock, std::size_t max_size, FdPolicy fds,
                                      int timeout_ms) {
    const std::int64_t deadline = now_ms() + std::max(timeout_ms, 0);
    for (;;) {
        const std::int64_t left = std::max<std::int64_t>(deadline - now_ms(), 0);
        pollfd p{sock, POLLIN, 0};
        int r = ::poll(&p, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;  // retried with the time that is left
        if (r < 0) return errno_error("poll");
        if (r == 0) {
            Received out;
            out.kind = Received::Kind::Timeout;
            return out;
        }
        // Readable, hung up or in error: recvmsg reports which.
        return recv_impl(sock, max_size, fds);
    }
}

}  // namespace hb
