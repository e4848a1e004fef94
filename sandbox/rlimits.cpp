#include "sandbox/rlimits.hpp"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace hb::sandbox {

namespace {
// 0, 1, 2, the socket, one request fd, and three spare.
constexpr rlim_t kMinNofile = 8;
}  // namespace

rlim_t nofile_limit_for(int highest_fd) {
    return std::max<rlim_t>(kMinNofile, static_cast<rlim_t>(highest_fd) + 5);
}

Result<void> apply_parser_rlimits(int highest_fd) {
    struct Limit {
        int resource;
        rlim_t value;
        const char* name;  // why each: docs/SANDBOX.md, step 2
    };
    const Limit limits[] = {
        {RLIMIT_CORE, 0, "RLIMIT_CORE"},  // no core file with request bytes in it
        {RLIMIT_NOFILE, nofile_limit_for(highest_fd), "RLIMIT_NOFILE"},  // no fd hoarding
        {RLIMIT_FSIZE, 0, "RLIMIT_FSIZE"},        // cannot grow any file, even fd 2
        {RLIMIT_NPROC, 0, "RLIMIT_NPROC"},        // no new process (seccomp stops it first)
        {RLIMIT_MEMLOCK, 0, "RLIMIT_MEMLOCK"},    // no locked memory
        {RLIMIT_MSGQUEUE, 0, "RLIMIT_MSGQUEUE"},  // no POSIX message queues
    };
    for (const Limit& limit : limits) {
        const struct rlimit value = {limit.value, limit.value};
        if (::setrlimit(limit.resource, &value) != 0) {
            return make_error(std::string("setrlimit(") + limit.name +
                              "): " + std::strerror(errno));
        }
    }
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    if (::sigaction(SIGXFSZ, &ignore, nullptr) != 0) {
        return make_error(std::string("sigaction(SIGXFSZ): ") + std::strerror(errno));
    }
    return {};
}

}  // namespace hb::sandbox
