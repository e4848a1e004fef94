// hostbridge-engine-relay: the engine user's socket, relayed for the length
// of one command (docs/ENGINE-USER.md, "What changes for you and the
// agent"). The drain starts it (engines/podman/engine_relay.cpp) as
//
//   hostbridge-engine-relay ENGINE_UID
//
// with its listening socket on fd 3 and the engine user's socket, pinned
// (O_PATH, common/engine_socket.hpp), on fd 4; nothing else of the drain's
// above fd 2. It checks both, confines itself to what a byte pump needs
// (engines/relay/confinement.hpp) and pumps (engines/relay/pump.hpp) until
// the drain kills it. Exit 1: it was started wrongly or could not confine
// itself, and relays nothing.
//
//   hostbridge-engine-relay --activated PERSON_UID UPSTREAM
//
// is the engine user's own relay in front of its rootless dockerd
// (docs/DOCKER.md): systemd hands it the listening socket on fd 3 (socket
// activation), and it relays PERSON_UID's connections to the unix socket
// UPSTREAM, which must answer as the relay's own user, the engine user.
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <string>
#include <string_view>

#include "engines/relay/confinement.hpp"
#include "engines/relay/pump.hpp"

namespace {

constexpr int kListening = 3;
constexpr int kPinned = 4;

[[noreturn]] void fail(std::string_view what) {
    std::string line = "hostbridge-engine-relay: ";
    line.append(what);
    line.push_back('\n');
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
    ::_exit(1);
}

bool is_socket(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

bool is_listening(int fd) {
    int on = 0;
    socklen_t len = sizeof on;
    return ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on == 1;
}

}  // namespace

bool parse_uid(std::string_view text, unsigned& uid) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), uid);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

int main(int argc, char** argv) {
    unsigned uid = 0;
    const bool activated = argc == 4 && std::string_view(argv[1]) == "--activated";
    if (activated) {
        const std::string_view upstream = argv[3];
        if (!parse_uid(argv[2], uid) || upstream.empty() || upstream[0] != '/' ||
            upstream.size() >= 108)
            fail("usage: hostbridge-engine-relay --activated PERSON_UID UPSTREAM_SOCKET");
    } else if (argc != 2 || !parse_uid(argv[1], uid)) {
        fail("usage: hostbridge-engine-relay ENGINE_UID, with fds 3 and 4 set by the drain");
    }
    if (!is_socket(kListening) || !is_listening(kListening)) fail("fd 3 is not a listening socket");
    if (!activated && !is_socket(kPinned)) fail("fd 4 is not the pinned engine socket");
    const std::string pinned = "/proc/self/fd/" + std::to_string(kPinned);
    const uid_t self = ::getuid();  // before the filter, which has no getuid
    if (auto confined = hb::relay::confine_relay(kListening); !confined)
        fail(confined.error().message);
    if (activated)  // the engine user's relay: PERSON_UID's clients, to its own daemon
        hb::relay::pump(kListening, argv[3], static_cast<uid_t>(uid), self);
    // The drain's: its own (the person's) clients, to the engine user's socket.
    hb::relay::pump(kListening, pinned.c_str(), self, static_cast<uid_t>(uid));
}
