// fd hygiene. Both paths are async-signal-safe (no allocation on success):
// executor/parser_client.cpp, executor/runner.cpp and admin/util/process.cpp call
// this in a forked child.
#include "sandbox/fds.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace hb::sandbox {
namespace {

// close_range(2) through syscall(2): the result does not depend on whether
// this glibc has the wrapper, and ENOSYS reaches us unchanged.
bool close_range_raw(unsigned first, unsigned last, FdAction action) {
    const unsigned flags = action == FdAction::CloseOnExec ? CLOSE_RANGE_CLOEXEC : 0U;
    return ::syscall(SYS_close_range, first, last, flags) == 0;
}

// "123" -> 123; anything else ("." and "..") -> -1. No strtol: no locale.
int parse_fd_name(const char* name) {
    if (*name == '\0') return -1;
    long value = 0;
    for (const char* p = name; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9') return -1;
        value = value * 10 + (*p - '0');
        if (value > 0x7fffffff) return -1;
    }
    return static_cast<int>(value);
}

}  // namespace

Result<void> close_fds_from_3(int keep, FdAction action) {
    if (keep >= 0 && keep < 3) keep = -1;  // 0-2 stay open anyway
    bool ok = false;
    if (keep < 0) {
        ok = close_range_raw(3, ~0U, action);
    } else {
        const auto k = static_cast<unsigned>(keep);
        ok = (k == 3 || close_range_raw(3, k - 1, action)) && close_range_raw(k + 1, ~0U, action);
    }
    if (ok) return {};
    // ENOSYS (kernel < 5.9) or anything unexpected: the slow path is complete too.
    return close_fds_by_proc_walk(keep, action);
}

Result<void> close_fds_by_proc_walk(int keep, FdAction action) {
    if (keep >= 0 && keep < 3) keep = -1;
    const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return make_error(
            "cannot close inherited fds: close_range failed and /proc/self/fd cannot be opened");

    alignas(struct dirent64) char buf[4096];
    // Closing while listing may make the listing skip entries: list again
    // until a pass closes nothing.
    for (bool closed_any = true; closed_any;) {
        closed_any = false;
        if (::lseek(dir, 0, SEEK_SET) != 0) {
            ::close(dir);
            return make_error("cannot rewind /proc/self/fd");
        }
        for (;;) {
            const ssize_t n = ::getdents64(dir, buf, sizeof buf);
            if (n < 0) {
                ::close(dir);
                return make_error("cannot list /proc/self/fd");
            }
            if (n == 0) break;
            for (ssize_t off = 0; off < n;) {
                const auto* entry = reinterpret_cast<const struct dirent64*>(buf + off);
                off += entry->d_reclen;
                const int fd = parse_fd_name(entry->d_name);
                if (fd < 3 || fd == dir || fd == keep) continue;
                if (action == FdAction::CloseOnExec) {
                    ::fcntl(fd, F_SETFD, FD_CLOEXEC);  // the listing stays as it is
                    continue;
                }
                ::close(fd);  // on Linux the fd is gone even when close reports an error
                closed_any = true;
            }
        }
    }
    ::close(dir);
    return {};
}

}  // namespace hb::sandbox
