#include "cli/engine_user.hpp"

#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <vector>

namespace hb::cli {

std::string engine_socket_in(const std::string& home) {
    return home + "/engine/podman.sock";
}

Result<EngineIdentity> engine_identity_of(const std::string& name) {
    if (!is_user_name(name)) return make_error(name + " is not a login name");
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found)
        return make_error("no user " + name +
                          " on this host (`hostbridge engine setup`, as root, "
                          "creates it: docs/ENGINE-USER.md)");
    if (found->pw_uid == 0)
        return make_error(name + " is root: the engine user must own nothing of yours");
    if (found->pw_uid == ::geteuid())
        return make_error(name + " is you: the engine user must be another user");
    const std::string home = found->pw_dir ? found->pw_dir : "";
    if (home.size() < 2 || home[0] != '/' || home.find("/.") != std::string::npos ||
        home.find("//") != std::string::npos || home.back() == '/')
        return make_error(name + "'s home directory \"" + home +
                          "\" is not a normal absolute path");
    return EngineIdentity{name, engine_socket_in(home)};
}

std::vector<std::string> same_user_reach(const std::string& home, const std::string& installs_root,
                                         const std::string& slug) {
    std::vector<std::string> reach;
    const auto present = [](const std::string& path) {
        struct stat st {};
        return ::lstat(path.c_str(), &st) == 0;
    };
    for (const char* rel :
         {".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json",
          ".netrc", ".git-credentials", ".config/gh", ".password-store", ".local/share/keyrings"}) {
        if (present(home + "/" + rel)) reach.push_back("~/" + std::string(rel));
    }
    // Groups whose members can become root or read what root reads.
    std::vector<gid_t> groups(static_cast<std::size_t>(std::max(::getgroups(0, nullptr), 0)));
    if (!groups.empty() && ::getgroups(static_cast<int>(groups.size()), groups.data()) < 0)
        groups.clear();
    std::set<std::string> powerful;
    for (const gid_t gid : groups) {
        const group* g = ::getgrgid(gid);
        if (g == nullptr || g->gr_name == nullptr) continue;
        const std::string name = g->gr_name;
        for (const char* strong : {"sudo", "wheel", "admin", "docker", "lxd", "libvirt", "adm",
                                   "disk", "shadow", "systemd-journal"}) {
            if (name == strong) powerful.insert(name);
        }
    }
    for (const auto& name : powerful) reach.push_back("group " + name);
    std::size_t others = 0;
    if (DIR* d = ::opendir(installs_root.c_str())) {
        while (const dirent* e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name != "." && name != ".." && name != slug &&
                present(installs_root + "/" + name + "/bridge.json"))
                ++others;
        }
        ::closedir(d);
    }
    if (others > 0)
        reach.push_back(std::to_string(others) + " other bridge" + (others == 1 ? "'s" : "s'") +
                        " bridge.json and policy");
    reach.push_back("this bridge's bridge.json, policy and audit log");
    return reach;
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
           "ExecStart=" +
           podman + " system service --time=0\n";
}

}  // namespace hb::cli
