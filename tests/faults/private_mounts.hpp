// Small filesystems for the disk-full tests, mounted in a private mount
// namespace: the test process unshares its mount namespace once (the
// executors it spawns inherit it), so nothing it mounts is ever visible to
// the rest of the machine, and every mount disappears with the process.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace hb::test {

// Empty on success, else why the tests must skip. Idempotent.
inline std::string enter_private_mount_namespace() {
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

// Mounts a tmpfs of `options` (e.g. "size=256k") over `dir`; empty on success.
inline std::string mount_tmpfs(const std::string& dir, const std::string& options) {
    if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
        return "cannot mount a tmpfs on " + dir + ": " + std::strerror(errno);
    }
    return {};
}

inline bool remount(const std::string& dir, unsigned long flags, const std::string& options) {
    return ::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | flags, options.c_str()) == 0;
}

// Fills the filesystem of `dir` to the last byte with `dir`/<name>: writes
// in shrinking chunks until even one byte is refused (ENOSPC). Files that
// already exist keep the slack of their last page, as on a real full disk.
inline bool fill_filesystem(const std::string& dir, const std::string& name = "filler") {
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

// Uses up every inode of the filesystem of `dir` with empty files in
// `dir`/<subdir>/. Returns how many it created, or nullopt on another error.
inline std::optional<int> exhaust_inodes(const std::string& dir, const std::string& subdir) {
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
