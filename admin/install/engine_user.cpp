#include "admin/install/engine_user.hpp"

#include <pwd.h>
#include <unistd.h>

#include <vector>

namespace hb::admin {

std::optional<Account> account(const std::string& name) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
        return std::nullopt;
    return Account{name, found->pw_uid, found->pw_gid, found->pw_dir ? found->pw_dir : ""};
}

std::string engine_socket_in(const std::string& home) {
    return home + "/engine/podman.sock";
}

Result<EngineIdentity> engine_identity_of(const std::string& name, bool docker) {
    if (!is_user_name(name)) return make_error(name + " is not a login name");
    const std::optional<Account> found = account(name);
    if (!found)
        return make_error("no user " + name +
                          " on this host (`hostbridge engine setup`, as root, "
                          "creates it: docs/ENGINE-USER.md)");
    if (found->uid == 0)
        return make_error(name + " is root: the engine user must own nothing of yours");
    if (found->uid == ::geteuid())
        return make_error(name + " is you: the engine user must be another user");
    const std::string& home = found->home;
    if (home.size() < 2 || home[0] != '/' || home.find("/.") != std::string::npos ||
        home.find("//") != std::string::npos || home.back() == '/')
        return make_error(name + "'s home directory \"" + home +
                          "\" is not a normal absolute path");
    // The relay is the install's own copy: install names it (admin/commands/install.cpp).
    return EngineIdentity{name, docker ? docker_socket_in(home) : engine_socket_in(home), ""};
}

std::string engine_socket_unit_text(const std::string& person, const std::string& slug,
                                    const std::string& setfacl) {
    return "# Written by `hostbridge engine setup` for " + person + "'s bridge " + slug +
           " (docs/ENGINE-USER.md).\n"
           "[Unit]\n"
           "Description=hostbridge engine socket for " +
           person + " (" + slug +
           ")\n\n"
           "[Socket]\n"
           "ListenStream=%h/engine/podman.sock\n"
           "SocketMode=0600\n"
           "DirectoryMode=0700\n"
           "# Made new at every start with no ACL: the person alone may open it.\n"
           "ExecStartPost=" +
           setfacl + " -m u:" + person +
           ":rw %h/engine/podman.sock\n\n"
           "[Install]\n"
           "WantedBy=sockets.target\n";
}

std::string engine_service_unit_text(const std::string& person, const std::string& slug,
                                     const std::string& podman) {
    return "# Written by `hostbridge engine setup` for " + person + "'s bridge " + slug +
           " (docs/ENGINE-USER.md).\n"
           "[Unit]\n"
           "Description=hostbridge engine (rootless podman API) for " +
           person + " (" + slug +
           ")\n"
           "Requires=" +
           kEngineSocketUnit +
           "\n"
           "After=" +
           kEngineSocketUnit +
           "\n\n"
           "[Service]\n"
           "Type=exec\n"
           "# The containers' conmon processes outlive a restart of the service.\n"
           "KillMode=process\n"
           "Delegate=true\n"
           "# Builds keep their temporary files (buildah's cache of a mount among\n"
           "# them) in the engine user's 0700 home, not in the /var/tmp every user\n"
           "# shares (SECURITY.md, \"Two postures\").\n"
           "Environment=TMPDIR=%h/engine/tmp\n"
           "ExecStartPre=/bin/mkdir -p -m 0700 %h/engine/tmp\n"
           "ExecStart=" +
           podman + " system service --time=0\n";
}

namespace {

std::string written_by(const std::string& person, const std::string& slug) {
    return "# Written by `hostbridge engine setup --engine docker` for " + person + "'s bridge " +
           slug + " (docs/DOCKER.md).\n";
}

// `root` + "/usr/..." without a doubled slash for the system's "/".
std::string under(const std::string& root, const std::string& path) {
    return (root == "/" ? "" : root) + path;
}

}  // namespace

std::string docker_socket_in(const std::string& home) {
    return home + "/engine/docker.sock";
}

std::string docker_socket_unit_text(const std::string& person, const std::string& slug,
                                    const std::string& setfacl) {
    return written_by(person, slug) + "[Unit]\nDescription=hostbridge docker socket for " + person +
           " (" + slug +
           ")\n\n"
           "[Socket]\n"
           "ListenStream=%h/engine/docker.sock\n"
           "SocketMode=0600\n"
           "DirectoryMode=0700\n"
           "# Made new at every start with no ACL: the person alone may open it.\n"
           "ExecStartPost=" +
           setfacl + " -m u:" + person +
           ":rw %h/engine/docker.sock\n\n"
           "[Install]\n"
           "WantedBy=sockets.target\n";
}

std::string docker_relay_unit_text(const std::string& person, uid_t person_uid,
                                   const std::string& slug, const std::string& relay) {
    return written_by(person, slug) + "[Unit]\nDescription=hostbridge docker relay for " + person +
           " (" + slug + ")\nRequires=" + kDockerDaemonUnit + " " + kDockerSocketUnit +
           "\nAfter=" + kDockerDaemonUnit + " " + kDockerSocketUnit +
           "\n\n"
           "[Service]\n"
           "# dockerd cannot take the socket itself under rootlesskit, and\n"
           "# systemd-socket-proxyd loses run and exec output (no half-close).\n"
           "ExecStart=" +
           relay + " --activated " + std::to_string(person_uid) + " %t/docker.sock\n";
}

std::string docker_daemon_unit_text(const std::string& person, const std::string& slug,
                                    const std::string& root) {
    return written_by(person, slug) +
           "[Unit]\nDescription=hostbridge engine (rootless dockerd) for " + person + " (" + slug +
           ")\n\n"
           "[Service]\n"
           "# dockerd-rootless.sh runs the rootlesskit on PATH (the host's own), then\n"
           "# dockerd inside its namespaces; runc is the host's (/usr/sbin).\n"
           "Environment=PATH=" +
           under(root, "/usr/bin") + ":" + under(root, "/usr/sbin") +
           ":/usr/sbin:/usr/bin:/sbin:/bin\n"
           "# slirp4netns without the host's loopback; never pasta, which reached it.\n"
           "Environment=DOCKERD_ROOTLESS_ROOTLESSKIT_NET=slirp4netns\n"
           "Environment=DOCKERD_ROOTLESS_ROOTLESSKIT_DISABLE_HOST_LOOPBACK=true\n"
           "Environment=DOCKERD_ROOTLESS_ROOTLESSKIT_PORT_DRIVER=builtin\n"
           "ExecStart=" +
           under(root, "/usr/share/docker.io/contrib/dockerd-rootless.sh") +
           "\n"
           "Type=notify\n"
           "# dockerd, a child of rootlesskit, says it is ready.\n"
           "NotifyAccess=all\n"
           "KillMode=mixed\n"
           "Delegate=yes\n"
           "TimeoutSec=120\n";
}

}  // namespace hb::admin
