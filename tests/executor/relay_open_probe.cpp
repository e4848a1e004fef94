// relay_open_probe [--unconfined] FILE: loads the engine relay's seccomp
// filter (engines/relay/confinement.hpp) as hostbridge-engine-relay does,
// for a socket at fd 3, then opens FILE. Exit 0: it opened;
// 2: the open failed with an error; 1: it could not set up. Confined, the
// filter kills it (SIGSYS) before the open returns. --unconfined skips the
// filter: the control, which shows the open itself would succeed.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "engines/relay/confinement.hpp"

int main(int argc, char** argv) {
    const bool unconfined = argc == 3 && std::strcmp(argv[1], "--unconfined") == 0;
    if (argc != 2 && !unconfined) return 1;
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (s < 0 || ::dup2(s, 3) != 3) return 1;
    if (!unconfined && !hb::relay::confine_relay(3)) return 1;
    const int fd = ::open(argv[argc - 1], O_RDONLY | O_CLOEXEC);
    return fd >= 0 ? 0 : 2;
}
