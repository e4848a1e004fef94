// The engine relay's byte pump (docs/ENGINE-USER.md, "What changes for you
// and the agent"): the loop of hostbridge-engine-relay (engines/relay/
// main.cpp), which the drain starts for the length of one command
// (engines/podman/engine_relay.hpp).
// It accepts each client on its listening socket, relays only the person's
// (SO_PEERCRED), connects each to the engine user's socket (for the drain,
// through the pinned descriptor, /proc/self/fd/<n>, never the name; for the
// engine user's docker socket, docs/DOCKER.md, the daemon's socket in the
// engine user's own runtime dir), checks that the answering peer is the
// engine user, and copies bytes both ways, passing each side's end of
// writing on (docker's run and exec streams end on it). It opens no file: everything it touches is
// a socket it was handed or made (engines/relay/confinement.hpp holds it to that).
#pragma once

#include <sys/types.h>

namespace hb::relay {

// At most this many connections at once (podman opens a few per command).
inline constexpr int kMaxPairs = 32;

// Never returns: it ends when the drain kills it, or exits 1 when its
// listening socket fails.
// `upstream_path` is a unix socket's path (at most 107 bytes).
[[noreturn]] void pump(int listening, const char* upstream_path, uid_t person_uid,
                       uid_t engine_uid);

}  // namespace hb::relay
