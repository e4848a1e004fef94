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

int main(int argc, char** argv) {
    unsigned engine_uid = 0;
    const std::string_view uid = argc == 2 ? argv[1] : "";
    const auto [end, ec] = std::from_chars(uid.data(), uid.data() + uid.size(), engine_uid);
    if (uid.empty() || ec != std::errc() || end != uid.data() + uid.size())
        fail("usage: hostbridge-engine-relay ENGINE_UID, with fds 3 and 4 set by the drain");
    if (!is_socket(kListening) || !is_listening(kListening)) fail("fd 3 is not a listening socket");
    if (!is_socket(kPinned)) fail("fd 4 is not the pinned engine socket");
    const uid_t person = ::getuid();
    if (auto confined = hb::relay::confine_relay(kListening); !confined)
        fail(confined.error().message);
    hb::relay::pump(kListening, kPinned, person, static_cast<uid_t>(engine_uid));
}
