// The engine user's podman socket as the bridge connects to it
// (docs/ENGINE-USER.md, "The socket"). An escape contained as the engine
// user owns the socket's directory: it can put a link to the person's own
// podman socket in the socket's place, and the person's podman client,
// which connects by path, would follow it and run the next unattended
// `up` on the person's own engine (SECURITY.md, "Two postures"). So the
// name is opened once with no link followed and must be a socket the
// engine user owns (only that user, or root, makes one such); the drain's
// relay (engines/podman/engine_relay.hpp) connects to that open file, which a
// later swap of the name does not change. The drain and `doctor` make this
// one check.
#pragma once

#include <sys/types.h>

#include <string>

#include "common/config.hpp"
#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::common {

struct PinnedEngineSocket {
    UniqueFd fd;    // O_PATH of the socket: connect to /proc/self/fd/<fd>
    uid_t uid = 0;  // the engine user's, who owns it and must answer there
};

// Why `engine.socket` is not the engine user's socket (a link, not a
// socket, another owner, no such user), or the pinned socket.
Result<PinnedEngineSocket> pin_engine_socket(const EngineIdentity& engine);

}  // namespace hb::common
