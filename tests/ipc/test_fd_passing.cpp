// SCM_RIGHTS over a real SOCK_SEQPACKET socketpair, with real fds. "Closed"
// is checked the way it matters: the write end of a pipe that was passed
// and then rejected must be gone, so the read end sees end-of-file.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <dirent.h>
#include <array>
#include <cstring>
#include <vector>

#include "ipc/fd_passing.hpp"

namespace hb {
namespace {

using Bytes = std::vector<std::uint8_t>;

struct Pair {
    UniqueFd a, b;
    Pair() {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
        a.reset(sv[0]);
        b.reset(sv[1]);
    }
};

struct Pipe {
    UniqueFd r, w;
    Pipe() {
        int p[2];
        if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) std::abort();
        r.reset(p[0]);
        w.reset(p[1]);
    }
    // True when no write end exists any more anywhere: read returns EOF.
    [[nodiscard]] bool writer_gone() const {
        char c;
        return ::read(r.get(), &c, 1) == 0;
    }
};

int count_open_fds() {
    int n = 0;
    DIR* d = ::opendir("/proc/self/fd");
    if (d == nullptr) return -1;
    while (::readdir(d) != nullptr) ++n;
    ::closedir(d);
    return n;
}

// Sends `bytes` with any number of fds in one SCM_RIGHTS message, or with a
// hand-made control message.
void raw_send(int sock, const Bytes& bytes, const std::vector<int>& fds) {
    iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
    if (!fds.empty()) {
        msg.msg_control = control.data();
        msg.msg_controllen = control.size();
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    ASSERT_EQ(::sendmsg(sock, &msg, 0), static_cast<ssize_t>(bytes.size()));
}

const Bytes kMsg = {1, 2, 3, 4, 5};

TEST(FdPassing, MessageWithoutFd) {
    Pair p;
    ASSERT_TRUE(send_message(p.a.get(), kMsg));
    auto r = recv_message(p.b.get(), 16, FdPolicy::None);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->kind, Received::Kind::Message);
    EXPECT_EQ(r->bytes, kMsg);
    EXPECT_FALSE(r->fd.valid());
}

TEST(FdPassing, OneRealFdArrivesCloexecAndWorks) {
    Pair p;
    Pipe pipe;
    ASSERT_TRUE(send_message_with_fd(p.a.get(), kMsg, pipe.w.get()));
    pipe.w.reset();  // only the passed copy keeps the pipe writable now
    auto r = recv_message(p.b.get(), 16, FdPolicy::ExactlyOne);
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->bytes, kMsg);
    ASSERT_TRUE(r->fd.valid());
    EXPECT_TRUE(::fcntl(r->fd.get(), F_GETFD) & FD_CLOEXEC);
    ASSERT_EQ(::write(r->fd.get(), "x", 1), 1);
    char c = 0;
    ASSERT_EQ(::read(pipe.r.get(), &c, 1), 1);
    EXPECT_EQ(c, 'x');
    r->fd.reset();
    EXPECT_TRUE(pipe.writer_gone());
}

TEST(FdPassing, MissingFdIsAnError) {
    Pair p;
    ASSERT_TRUE(send_message(p.a.get(), kMsg));
    EXPECT_FALSE(recv_message(p.b.get(), 16, FdPolicy::ExactlyOne));
}

TEST(FdPassing, UnexpectedFdIsAnErrorAndClosed) {
    Pair p;
    Pipe pipe;
    const int before = count_open_fds();
    ASSERT_TRUE(send_message_with_fd(p.a.get(), kMsg, pipe.w.get()));
    pipe.w.reset();
    EXPECT_FALSE(recv_message(p.b.get(), 16, FdPolicy::None));
    EXPECT_TRUE(pipe.writer_gone());
    EXPECT_EQ(count_open_fds(), before - 1);  // minus our own write end
}

TEST(FdPassing, TwoFdsAreAnErrorAndBothClosed) {
    Pair p;
    Pipe one, two;
    const int before = count_open_fds();
    raw_send(p.a.get(), kMsg, {one.w.get(), two.w.get()});
    one.w.reset();
    two.w.reset();
    EXPECT_FALSE(recv_message(p.b.get(), 16, FdPolicy::ExactlyOne));
    EXPECT_TRUE(one.writer_gone());
    EXPECT_TRUE(two.writer_gone());
    EXPECT_EQ(count_open_fds(), before - 2);
}

TEST(FdPassing, TruncatedControlMessageIsAnErrorAndNothingLeaks) {
    // More fds than the receiver makes room for: the kernel sets MSG_CTRUNC,
    // installs what fits (we close those) and drops the rest.
    Pair p;
    std::vector<Pipe> pipes(40);
    std::vector<int> fds;
    for (auto& pp : pipes) fds.push_back(pp.w.get());
    const int before = count_open_fds();
    raw_send(p.a.get(), kMsg, fds);
    for (auto& pp : pipes) pp.w.reset();
    auto r = recv_message(p.b.get(), 16, FdPolicy::ExactlyOne);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("truncated"), std::string::npos) << r.error().message;
    for (auto& pp : pipes) EXPECT_TRUE(pp.writer_gone());
    EXPECT_EQ(count_open_fds(), before - 40);
}

TEST(FdPassing, UnexpectedControlMessageTypeIsAnErrorAndFdClosed) {
    // With SO_PASSCRED the receiver gets an SCM_CREDENTIALS message too.
    Pair p;
    int on = 1;
    ASSERT_EQ(::setsockopt(p.b.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof on), 0);
    Pipe pipe;
    ASSERT_TRUE(send_message_with_fd(p.a.get(), kMsg, pipe.w.get()));
    pipe.w.reset();
    auto r = recv_message(p.b.get(), 16, FdPolicy::ExactlyOne);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("unexpected control"), std::string::npos) << r.error().message;
    EXPECT_TRUE(pipe.writer_gone());
}

TEST(FdPassing, OversizedMessageIsAnErrorAndFdClosed) {
    Pair p;
    Pipe pipe;
    ASSERT_TRUE(send_message_with_fd(p.a.get(), Bytes(100, 7), pipe.w.get()));
    pipe.w.reset();
    auto r = recv_message(p.b.get(), 99, FdPolicy::ExactlyOne);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("larger"), std::string::npos) << r.error().message;
    EXPECT_TRUE(pipe.writer_gone());
}

TEST(FdPassing, ExactSizeIsFine) {
    Pair p;
    ASSERT_TRUE(send_message(p.a.get(), Bytes(100, 7)));
    auto r = recv_message(p.b.get(), 100, FdPolicy::None);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->bytes.size(), 100U);
}

TEST(FdPassing, EofWhenPeerCloses) {
    Pair p;
    p.a.reset();
    auto r = recv_message(p.b.get(), 16, FdPolicy::ExactlyOne);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->kind, Received::Kind::Eof);
}

TEST(FdPassing, FdOnAnEmptyMessageIsAnErrorAndClosed) {
    // An empty message with an fd must not pass for end-of-stream.
    Pair p;
    Pipe pipe;
    raw_send(p.a.get(), {}, {pipe.w.get()});
    pipe.w.reset();
    EXPECT_FALSE(recv_message(p.b.get(), 16, FdPolicy::ExactlyOne));
    EXPECT_TRUE(pipe.writer_gone());
}

TEST(FdPassing, EmptyMessageAndBadFdRefusedOnSend) {
    Pair p;
    EXPECT_FALSE(send_message(p.a.get(), {}));
    EXPECT_FALSE(send_message_with_fd(p.a.get(), kMsg, -1));
}

TEST(FdPassing, SendToClosedPeerIsAnErrorNotSigpipe) {
    Pair p;
    p.b.reset();
    EXPECT_FALSE(send_message(p.a.get(), kMsg));  // SIGPIPE would kill the test
}

TEST(FdPassing, RecvWithTimeout) {
    Pair p;
    auto quiet = recv_message_timeout(p.b.get(), 16, FdPolicy::None, 20);
    ASSERT_TRUE(quiet);
    EXPECT_EQ(quiet->kind, Received::Kind::Timeout);

    ASSERT_TRUE(send_message(p.a.get(), kMsg));
    auto got = recv_message_timeout(p.b.get(), 16, FdPolicy::None, 5000);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->kind, Received::Kind::Message);
    EXPECT_EQ(got->bytes, kMsg);

    p.a.reset();
    auto eof = recv_message_timeout(p.b.get(), 16, FdPolicy::None, 5000);
    ASSERT_TRUE(eof);
    EXPECT_EQ(eof->kind, Received::Kind::Eof);
}

}  // namespace
}  // namespace hb
