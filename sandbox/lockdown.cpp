// The order matters: see each step's comment and docs/SANDBOX.md.
#include "sandbox/lockdown.hpp"

#include <sys/personality.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sandbox/capabilities.hpp"
#include "sandbox/fds.hpp"
#include "sandbox/namespaces.hpp"
#include "sandbox/rlimits.hpp"
#include "sandbox/sanitizer_runtime.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace hb::sandbox {
namespace {

Error step_error(const char* step, const Error& cause) {
    return make_error(std::string("lockdown: ") + step + ": " + cause.message);
}
Error errno_step_error(const char* step) {
    return make_error(std::string("lockdown: ") + step + ": " + std::strerror(errno));
}

}  // namespace

Result<LockdownReport> lock_down(int socket_fd) {
    if (socket_fd < 0) return make_error("lockdown: no socket fd");
    LockdownReport report;

    // 0. Sanitized builds only: load what a sanitizer report reads from
    //    files, while files can be opened (step 1 closes what it leaves).
    warm_up_sanitizer_runtime();

    // 1. Nothing inherited by accident: only 0-2 and the socket. First,
    //    while the /proc fallback may still open a directory.
    if (auto r = close_fds_from_3(socket_fd); !r) return step_error("closing fds", r.error());

    // 2. Limits before the uid change, while every limit is ours to lower.
    if (auto r = apply_parser_rlimits(socket_fd > 2 ? socket_fd : 2); !r) {
        return step_error("rlimits", r.error());
    }

    // 3. Root becomes nobody, before the user namespace: the namespace
    //    belongs to its creator, and it should belong to nobody.
    auto dropped = drop_root_to_nobody();
    if (!dropped) return step_error("dropping root", dropped.error());
    report.changed_uid = *dropped;

    // 4. Best effort: unprivileged user namespaces may be disabled.
    report.namespaces_errno = try_unshare_namespaces();
    report.new_namespaces = report.namespaces_errno == 0;

    // 5. The new user namespace granted a full set inside it: clear all
    //    of them again, the bounding set included.
    auto cleared = clear_capabilities();
    if (!cleared) return step_error("clearing capabilities", cleared.error());
    report.bounding_set_cleared = *cleared;

    // A personality with READ_IMPLIES_EXEC would make every readable
    // mapping executable and defeat the filter's no-PROT_EXEC rule.
    const int persona = ::personality(0xffffffff);
    if (persona < 0) return errno_step_error("personality");
    if ((persona & READ_IMPLIES_EXEC) != 0) {
        return make_error("lockdown: personality has READ_IMPLIES_EXEC");
    }

    // 6. No execve can ever grant privileges again (setuid bits, file caps).
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno_step_error("no_new_privs");
    if (::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
        return make_error("lockdown: no_new_privs not set");

    // 7. No core dump, no ptrace attach by same-uid processes, /proc/<pid>
    //    owned by root.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return errno_step_error("dumpable");

    // 8. Last: after this the process can no longer do steps 1-7.
    if (auto r = install_seccomp(parser_policy(socket_fd, ::getpid())); !r) {
        return step_error("seccomp", r.error());
    }
    return report;
}

}  // namespace hb::sandbox
