#include "engines/podman/bind_pin.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sys/sysmacros.h>

#include <cerrno>
#include <cstdio>
#include <string_view>

#include "ipc/pin_paths.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

std::string fd_path(int fd) {
    return "/proc/self/fd/" + std::to_string(fd);
}

// Every mount stacked on the pin root goes: the last command's tmpfs (and a
// stale one, should two ever stack) is detached; running containers keep
// their own copies of the binds.
Result<void> unmount_all(const std::string& root) {
    for (int i = 0; i <= 16; ++i) {
        if (::umount2(root.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) == 0) continue;
        if (errno == EINVAL || errno == ENOENT) return {};  // not (or no longer) a mount point
        return make_error(sys::errno_text("unmount " + root));
    }
    return make_error(root + " has more than 16 mounts stacked on it");
}

// The host-side dir under the tmpfs: ours, a directory, 0500 and empty, so
// without the tmpfs a pinned path is "no such file" (and podman-compose's
// makedirs of it fails), never an empty dir handed to a container.
Result<void> prepare_root(int run_fd, const std::string& root) {
    if (::mkdirat(run_fd, ".hostbridge-binds", 0500) != 0 && errno != EEXIST) {
        return make_error(sys::errno_text("mkdir " + root));
    }
    UniqueFd dir(
        ::openat(run_fd, ".hostbridge-binds", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!dir || ::fstat(dir.get(), &st) != 0) return make_error(sys::errno_text("open " + root));
    if (st.st_uid != ::geteuid()) return make_error(root + " is not owned by this user");
    if ((st.st_mode & 07777) != 0500 && ::fchmod(dir.get(), 0500) != 0) {
        return make_error(sys::errno_text("chmod 0500 " + root));
    }
    // Anything in it (a compose CLI run by hand on the rendered file
    // `makedirs` a missing pin) would be what a container gets once the
    // tmpfs is gone: refuse until a person removes it.
    UniqueFd list(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    DIR* d = list ? ::fdopendir(list.release()) : nullptr;
    if (d == nullptr) return make_error(sys::errno_text("read " + root));
    std::string found;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view n = e->d_name;
        if (n != "." && n != "..") {
            found = std::string(n);
            break;
        }
    }
    ::closedir(d);
    if (!found.empty()) {
        return make_error(root + " holds " + found +
                          ", which a container would get once the pins are gone: remove it "
                          "(it must stay empty)");
    }
    return {};
}

Result<UniqueFd> open_source(int project_fd, const std::string& source) {
    open_how how{};
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    // Resolved by the kernel in one go: no symlink anywhere on the way, and
    // never above the project dir.
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, project_fd, source.c_str(), &how, sizeof how);
    if (fd < 0) {
        const int err = errno;
        if (err == ELOOP || err == EXDEV) {
            return make_error(source + " (a bind source) is a symlink or lies under one");
        }
        return make_error(sys::errno_text(source + " (a bind source) cannot be opened", err));
    }
    return UniqueFd(static_cast<int>(fd));
}

Result<PinnedSource> pin_one(int project_fd, int tmpfs_fd, const std::string& run_dir,
                             const std::string& source) {
    auto src = open_source(project_fd, source);
    if (!src) return src.error();
    struct stat st {};
    if (::fstat(src->get(), &st) != 0) return make_error(sys::errno_text("stat " + source));
    const std::string path = bind_pin_path(run_dir, source);
    const std::string name = path.substr(path.rfind('/') + 1);
    if (S_ISDIR(st.st_mode)) {
        if (::mkdirat(tmpfs_fd, name.c_str(), 0700) != 0) {
            return make_error(sys::errno_text("mkdir " + path));
        }
    } else if (S_ISREG(st.st_mode)) {
        // A second name is a file that lives elsewhere too (a host file the
        // agent hard-linked into the checkout): never hand it to a container.
        if (st.st_nlink != 1) {
            return make_error(source + " (a bind source) has " + std::to_string(st.st_nlink) +
                              " hard links: a file bound into a container must have one name");
        }
        // An empty regular file to bind onto, made without opening it: the
        // seccomp filter (engines/podman/pin_main.cpp) lets no open write.
        if (::mknodat(tmpfs_fd, name.c_str(), S_IFREG | 0600, 0) != 0) {
            return make_error(sys::errno_text("create " + path));
        }
    } else if (S_ISLNK(st.st_mode)) {  // O_PATH|O_NOFOLLOW opens a last-component link itself
        return make_error(source + " (a bind source) is a symlink or lies under one");
    } else {
        return make_error(source + " (a bind source) is neither a directory nor a regular file");
    }
    // Both ends through their fds: the kernel binds exactly the inode the
    // no-follow open found onto the name made just now in our own tmpfs.
    const std::string target = fd_path(tmpfs_fd) + "/" + name;
    if (::mount(fd_path(src->get()).c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) !=
        0) {
        return make_error(sys::errno_text("bind " + source + " onto " + path));
    }
    UniqueFd mounted(::openat(tmpfs_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat now {};
    if (!mounted || ::fstat(mounted.get(), &now) != 0) {
        return make_error(sys::errno_text("stat " + path));
    }
    if (now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
        return make_error(path + " is not " + source + " after the bind");
    }
    return PinnedSource{source, st.st_dev, st.st_ino};
}

}  // namespace

Result<std::vector<PinnedSource>> pin_bind_sources(const std::string& project_dir,
                                                   const std::string& run_dir,
                                                   const std::vector<std::string>& sources) {
    UniqueFd project(::open(project_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!project) return make_error(sys::errno_text("open " + project_dir));
    UniqueFd run(::open(run_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!run) return make_error(sys::errno_text("open " + run_dir));
    const std::string root = bind_pin_root(run_dir);
    if (auto gone = unmount_all(root); !gone) return gone.error();
    if (auto ready = prepare_root(run.get(), root); !ready) return ready.error();
    if (::mount("hostbridge-binds", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "mode=0700,size=64k,nr_inodes=4096") != 0) {
        return make_error(sys::errno_text("mount a tmpfs on " + root));
    }
    UniqueFd tmpfs(
        ::openat(run.get(), ".hostbridge-binds", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct statfs fs {};
    if (!tmpfs || ::fstatfs(tmpfs.get(), &fs) != 0 || fs.f_type != TMPFS_MAGIC) {
        return make_error(root + " is not the tmpfs just mounted");
    }
    std::vector<PinnedSource> pinned;
    for (const std::string& source : sources) {
        auto one = pin_one(project.get(), tmpfs.get(), run_dir, source);
        if (!one) return one.error();
        pinned.push_back(std::move(*one));
    }
    return pinned;
}

int run_pin(int argc, char** argv, Result<void> (*confine)()) {
    if (argc < 3 || argv[0][0] != '/' || argv[1][0] != '/') {
        std::fputs("usage: hostbridge-pin pin PROJECT_DIR RUN_DIR SOURCE...\n", stderr);
        return 2;
    }
    std::vector<std::string> sources;
    for (int i = 2; i < argc; ++i) {
        if (!is_checkout_path(argv[i])) {
            std::fprintf(stderr, "hostbridge-pin pin: %s is not \".\" or a normal relative path\n",
                         argv[i]);
            return 2;
        }
        sources.emplace_back(argv[i]);
    }
    if (confine != nullptr) {
        if (auto confined = confine(); !confined) {
            std::fprintf(stderr, "hostbridge-pin pin: %s\n", confined.error().message.c_str());
            return 1;
        }
    }
    auto pinned = pin_bind_sources(argv[0], argv[1], sources);
    if (!pinned) {
        std::fprintf(stderr, "hostbridge-pin pin: %s\n", pinned.error().message.c_str());
        return 1;
    }
    for (const PinnedSource& p : *pinned) {
        std::printf("pinned %s (device %u:%u, inode %llu)\n", p.source.c_str(), major(p.dev),
                    minor(p.dev), static_cast<unsigned long long>(p.ino));
    }
    return 0;
}

}  // namespace hb::exec
