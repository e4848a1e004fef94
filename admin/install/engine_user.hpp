// The engine user (docs/ENGINE-USER.md): a dedicated unprivileged account
// whose rootless podman service owns a project's containers and builds, so
// that an engine escape lands as a user who owns nothing of the person's.
// What install and `hostbridge engine` agree on: where its socket is, and
// the two systemd --user units that serve it.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

// A login account as the password database has it: the engine user, the
// person, or a user doctor weighs (admin/install/engine_reach.cpp).
struct Account {
    std::string name;
    uid_t uid = 0;
    gid_t gid = 0;
    std::string home;
};
std::optional<Account> account(const std::string& name);

// <home>/engine/podman.sock: the socket `hostbridge engine setup` serves.
std::string engine_socket_in(const std::string& home);

// bridge.json's "engine" for the existing user `name`: refused when it is
// root or the user running this (an engine user must be another identity).
// Its socket is podman's, or with `docker` its docker.sock (docker_socket_in).
Result<EngineIdentity> engine_identity_of(const std::string& name, bool docker = false);

// The engine user's units, under its ~/.config/systemd/user. The socket unit
// grants `person` alone read-write on the socket after each start: podman
// and systemd make it 0600 with no ACL, every time.
inline constexpr const char* kEngineSocketUnit = "hostbridge-engine.socket";
inline constexpr const char* kEngineServiceUnit = "hostbridge-engine.service";
std::string engine_socket_unit_text(const std::string& person, const std::string& slug,
                                    const std::string& setfacl);
std::string engine_service_unit_text(const std::string& person, const std::string& slug,
                                     const std::string& podman);

// The docker engine user's units (docs/DOCKER.md): its rootless dockerd
// (`root` is where the docker packages are unpacked, "/" for the system's),
// the person's socket ~/engine/docker.sock, and the relay that socket starts,
// which passes only `person_uid`'s connections on to the daemon.
inline constexpr const char* kDockerSocketUnit = "hostbridge-docker.socket";
inline constexpr const char* kDockerRelayUnit = "hostbridge-docker.service";
inline constexpr const char* kDockerDaemonUnit = "hostbridge-dockerd.service";
std::string docker_socket_in(const std::string& home);
std::string docker_socket_unit_text(const std::string& person, const std::string& slug,
                                    const std::string& setfacl);
std::string docker_relay_unit_text(const std::string& person, uid_t person_uid,
                                   const std::string& slug, const std::string& relay);
std::string docker_daemon_unit_text(const std::string& person, const std::string& slug,
                                    const std::string& root);

}  // namespace hb::admin
