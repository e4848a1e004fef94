#include "admin/install/engine_reach.hpp"

#include <dirent.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <set>

#include "admin/install/engine_user.hpp"

namespace hb::admin {

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

std::optional<OtherUser> other_user(const std::string& name) {
    const std::optional<Account> found = account(name);
    if (!found) return std::nullopt;
    int n = 64;
    std::vector<gid_t> groups(static_cast<std::size_t>(n));
    if (::getgrouplist(name.c_str(), found->gid, groups.data(), &n) < 0) {
        groups.resize(static_cast<std::size_t>(n));
        if (::getgrouplist(name.c_str(), found->gid, groups.data(), &n) < 0) return std::nullopt;
    }
    groups.resize(static_cast<std::size_t>(n));
    return OtherUser{found->uid, groups};
}

namespace {

// The access ACL as Linux stores it (linux/posix_acl_xattr.h): a
// little-endian version 2, then {tag u16, perm u16, id u32} entries.
struct AclEntry {
    std::uint16_t tag;
    std::uint16_t perm;
    std::uint32_t id;
};
constexpr std::uint16_t kAclUserObj = 0x01, kAclUser = 0x02, kAclGroupObj = 0x04, kAclGroup = 0x08,
                        kAclMask = 0x10, kAclOther = 0x20;

std::uint32_t le(const unsigned char* p, int bytes) {
    std::uint32_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

// nullopt: no ACL beyond the mode (or one this code does not understand,
// read then as the mode alone: the kernel would refuse such an ACL too).
std::optional<std::vector<AclEntry>> access_acl(const std::string& path) {
    std::vector<unsigned char> raw;
    ssize_t n = -1;
    // Sized first, then read; an ACL that grew in between is asked again.
    for (int tries = 0; tries < 3; ++tries) {
        const ssize_t size = ::lgetxattr(path.c_str(), "system.posix_acl_access", nullptr, 0);
        if (size <= 0) return std::nullopt;
        raw.resize(static_cast<std::size_t>(size));
        n = ::lgetxattr(path.c_str(), "system.posix_acl_access", raw.data(), raw.size());
        if (n >= 0 || errno != ERANGE) break;
    }
    if (n < 4 || (n - 4) % 8 != 0 || le(raw.data(), 4) != 2) return std::nullopt;
    std::vector<AclEntry> entries;
    for (ssize_t off = 4; off < n; off += 8) {
        const unsigned char* e = raw.data() + off;
        entries.push_back({static_cast<std::uint16_t>(le(e, 2)),
                           static_cast<std::uint16_t>(le(e + 2, 2) & 7), le(e + 4, 4)});
    }
    return entries;
}

}  // namespace

unsigned access_bits(const std::string& path, const OtherUser& who) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return 0;
    const auto in_group = [&](gid_t g) {
        return std::find(who.groups.begin(), who.groups.end(), g) != who.groups.end();
    };
    if (who.uid == st.st_uid) return (st.st_mode >> 6) & 7;
    // The kernel reads the ACL only while the mask (the mode's group bits)
    // is not zero (fs/namei.c acl_permission_check); else the mode alone.
    const auto acl = (st.st_mode & 070) != 0 ? access_acl(path) : std::nullopt;
    if (!acl) {
        if (in_group(st.st_gid)) return (st.st_mode >> 3) & 7;
        return st.st_mode & 7;
    }
    unsigned mask = 7, other = 0, groups = 0;
    bool group_matched = false;
    std::optional<unsigned> named;
    for (const AclEntry& e : *acl) {
        if (e.tag == kAclMask) mask = e.perm;
        if (e.tag == kAclOther) other = e.perm;
        if (e.tag == kAclUser && e.id == who.uid) named = e.perm;
        if ((e.tag == kAclGroupObj && in_group(st.st_gid)) ||
            (e.tag == kAclGroup && in_group(static_cast<gid_t>(e.id)))) {
            group_matched = true;
            groups |= e.perm;
        }
    }
    if (named) return *named & mask;
    if (group_matched) return groups & mask;
    return other;
}

HomeExposure home_exposure(const std::string& home, const OtherUser& engine) {
    HomeExposure exposure;
    if (first_closed_dir(home, engine)) return exposure;
    exposure.passes = true;
    DIR* d = ::opendir(home.c_str());
    if (d == nullptr) return exposure;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        const std::string path = home + "/" + name;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
        const unsigned bits = access_bits(path, engine);
        const bool dir = S_ISDIR(st.st_mode);
        if ((bits & 4) == 0 && !(dir && (bits & 1) != 0)) continue;
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        exposure.entries.push_back(name + (dir ? "/" : "") + " (" + mode + ")");
    }
    ::closedir(d);
    std::sort(exposure.entries.begin(), exposure.entries.end());
    return exposure;
}

std::optional<std::string> first_closed_dir(const std::string& dir, const OtherUser& who) {
    if (dir.empty() || dir[0] != '/') return dir;  // only an absolute path is walked
    std::string path = "/";
    std::size_t at = 1;
    while (true) {
        if ((access_bits(path, who) & 1) == 0) return path;
        if (at >= dir.size()) return std::nullopt;
        const std::size_t slash = dir.find('/', at);
        const std::size_t end = slash == std::string::npos ? dir.size() : slash;
        path = dir.substr(0, end);
        at = end + 1;
    }
}

}  // namespace hb::admin
