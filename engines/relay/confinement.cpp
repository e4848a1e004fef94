// The relay's syscall allowlist beyond the parser's basics: one syscall a
// line, with the reason it is there.
#include "engines/relay/confinement.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hb::relay {
namespace {

scmp_arg_cmp arg_equals(unsigned arg, scmp_datum_t value) {
    return scmp_arg_cmp{arg, SCMP_CMP_EQ, value, 0};
}

sandbox::Allowance allow(int nr, std::string_view name, std::string_view reason,
                         std::vector<scmp_arg_cmp> conditions = {}) {
    return sandbox::Allowance{nr, name, std::move(conditions), reason};
}

#define HB_SYSCALL(name) SCMP_SYS(name), #name

}  // namespace

std::vector<sandbox::Allowance> relay_policy(int listening, pid_t self, bool sanitizer_runtime) {
    sandbox::PolicyBuilder basics;
    basics.allow_exit().allow_memory().allow_stderr_write().allow_once_wake().allow_self_abort(
        self);
    if (sanitizer_runtime) basics.allow_sanitizer_runtime(listening);
    std::vector<sandbox::Allowance> policy = basics.allowances();
    const auto listener = static_cast<scmp_datum_t>(listening);
    for (sandbox::Allowance a : {
             allow(HB_SYSCALL(poll), "wait for any of its sockets"),
             allow(HB_SYSCALL(ppoll), "wait for any of its sockets (glibc's poll may use it)"),
             allow(HB_SYSCALL(accept4), "a client, on its own listening socket only",
                   {arg_equals(0, listener)}),
             allow(HB_SYSCALL(getsockopt), "SO_PEERCRED: whose a client or the engine's end is",
                   {arg_equals(1, SOL_SOCKET), arg_equals(2, SO_PEERCRED)}),
             allow(HB_SYSCALL(socket), "the upstream connection: a unix stream socket only",
                   {arg_equals(0, AF_UNIX), arg_equals(1, SOCK_STREAM | SOCK_CLOEXEC)}),
             allow(HB_SYSCALL(connect),
                   "the upstream, to /proc/self/fd/<pinned>; a unix socket is all socket() makes"),
             allow(HB_SYSCALL(fcntl), "F_GETFL: before making the upstream non-blocking",
                   {arg_equals(1, F_GETFL)}),
             allow(HB_SYSCALL(fcntl), "F_SETFL: the upstream non-blocking",
                   {arg_equals(1, F_SETFL)}),
             allow(HB_SYSCALL(read), "bytes from a client or the engine (it holds no file)"),
             allow(HB_SYSCALL(sendto), "bytes to a client or the engine, MSG_NOSIGNAL only",
                   {arg_equals(3, MSG_NOSIGNAL)}),
             allow(HB_SYSCALL(shutdown), "pass a side's end on: SHUT_WR only",
                   {arg_equals(1, SHUT_WR)}),
             allow(HB_SYSCALL(close), "a connection that ended"),
         })
        policy.push_back(std::move(a));
    return policy;
}

Result<void> confine_relay(int listening) {
    return sandbox::install_seccomp(relay_policy(listening, ::getpid()));
}

}  // namespace hb::relay
