#include "tests/support/mounts.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace hb::test {

std::string enter_private_mounts() {
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (uid != 0) {
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
            return std::string("unshare(CLONE_NEWUSER|CLONE_NEWNS): ") + std::strerror(errno);
        std::ofstream("/proc/self/setgroups") << "deny";
        std::ofstream("/proc/self/uid_map") << "0 " << uid << " 1";
        std::ofstream("/proc/self/gid_map") << "0 " << gid << " 1";
    } else if (::unshare(CLONE_NEWNS) != 0) {
        return std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno);
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return std::string("make / private: ") + std::strerror(errno);
    return "";
}

std::string enter_private_mount_namespace() {
    static const std::string why = [] {
        if (::geteuid() != 0) return std::string("needs root to mount a small tmpfs");
        if (::unshare(CLONE_NEWNS) != 0) {
            return "unshare(CLONE_NEWNS) failed: " + std::string(std::strerror(errno));
        }
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
            return "cannot make / private: " + std::string(std::strerror(errno));
        }
        return std::string();
    }();
    return why;
}

std::string mount_tmpfs(const std::string& dir, const std::string& options) {
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
        return "cannot mount a tmpfs on " + dir + ": " + std::strerror(errno);
    }
    return {};
}

bool remount(const std::string& dir, unsigned long flags, const std::string& options) {
    return ::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | flags, options.c_str()) == 0;
}

bool fill_filesystem(const std::string& dir, const std::string& name) {
    const int fd =
        ::open((dir + "/" + name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    static const std::string block(1 << 16, 'x');
    for (std::size_t chunk = block.size(); chunk >= 1; chunk /= 2) {
        while (::write(fd, block.data(), chunk) == static_cast<ssize_t>(chunk)) {
        }
    }
    const bool full = ::write(fd, "x", 1) < 0 && errno == ENOSPC;
    ::close(fd);
    return full;
}

std::optional<int> exhaust_inodes(const std::string& dir, const std::string& subdir) {
    const std::string base = dir + "/" + subdir;
    if (::mkdir(base.c_str(), 0700) != 0) return std::nullopt;
    for (int i = 0;; ++i) {
        const int fd = ::open((base + "/" + std::to_string(i)).c_str(),
                              O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) return errno == ENOSPC ? std::optional<int>(i) : std::nullopt;
        ::close(fd);
    }
}

}  // namespace hb::test
