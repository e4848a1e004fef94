#include "executor/spool.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "common/integrity_gate.hpp"
#include "ipc/enum_names.hpp"
#include "ipc/path_component.hpp"
#include "ipc/sys.hpp"

namespace hb::exec {

using common::FileState;
using common::open_pinned;
using common::Opened;
using common::Resolver;

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr std::string_view kStuckPrefix = ".stuck-";
constexpr std::size_t kNameMax = NAME_MAX;
constexpr int kMaxQuarantineSuffix = 99;
constexpr std::size_t kShortenedName = 200;  // leaves room for "." + 16 hex digits

// What an open failure means for a directory that must be a real one.
std::string describe_dir_error(const std::string& path, int err) {
    switch (err) {
        case ELOOP:
            return path + " is or contains a symlink";
        case ENOTDIR:
            return path + " is not a directory (or has a non-directory on the way)";
        case ENOENT:
            return path + " does not exist";
        case EXDEV:
            return path + " escapes the project directory";
        default:
            return sys::errno_text(path, err);
    }
}

// The directory `rel` beneath `dirfd`, opened as the integrity gate opens a
// pinned path (common/integrity_gate.hpp): openat2 with RESOLVE_BENEATH
// and no symlinks, or one O_NOFOLLOW component at a time.
Result<UniqueFd> open_beneath(int dirfd, const std::string& rel, const std::string& path,
                              Spool::Resolve resolve) {
    const bool walk = resolve == Spool::Resolve::ComponentWalk;
    Opened opened = open_pinned(dirfd, rel, /*directory=*/true,
                                walk ? Resolver::ComponentWise : Resolver::Openat2);
    // openat2 reports a final symlink as "not a directory"; the walk names
    // the culprit. It is only a diagnosis: the open has failed either way.
    if (!opened.fd && !walk && opened.state == FileState::NotRegular) {
        Opened diagnosis = open_pinned(dirfd, rel, /*directory=*/true, Resolver::ComponentWise);
        if (!diagnosis.fd) opened = std::move(diagnosis);
    }
    if (opened.fd) return std::move(opened.fd);
    switch (opened.state) {
        case FileState::Symlink:
            return make_error(describe_dir_error(path, ELOOP));
        case FileState::NotRegular:
            return make_error(describe_dir_error(path, ENOTDIR));
        case FileState::Absent:
            return make_error(describe_dir_error(path, ENOENT));
        case FileState::BadPath:
            return make_error(describe_dir_error(path, EXDEV));
        default:
            return make_error(path + ": " + opened.error);
    }
}

std::string strip_trailing_slashes(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

}  // namespace

const char* apply_file_mode(int fd, const FileMode& mode) {
    if (mode.gid && ::fchown(fd, static_cast<uid_t>(-1), *mode.gid) != 0) return "group";
    if (::fchmod(fd, mode.mode) != 0) return "mode";
    return nullptr;
}

std::string_view spool_dir_name(SpoolDir dir) {
    static constexpr auto kNames = dense_names<SpoolDir::Diagnostics>(
        {"tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"},
        "?");
    return name_of(kNames, dir);
}

std::string random_hex(std::size_t bytes) {
    std::string raw(bytes, '\0');
    std::size_t got = 0;
    while (got < bytes) {
        const ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        // getrandom on an initialised pool does not fail; abort rather than
        // hand out a predictable name.
        if (n <= 0) std::abort();
        got += static_cast<std::size_t>(n);
    }
    return sys::lower_hex(raw.data(), raw.size());
}

Result<Spool> Spool::open(const std::string& project_dir_in, const std::string& spool_dir_in,
                          Resolve resolve) {
    const std::string project_dir = strip_trailing_slashes(project_dir_in);
    const std::string spool_dir = strip_trailing_slashes(spool_dir_in);
    const std::string prefix = project_dir == "/" ? "/" : project_dir + "/";
    if (spool_dir.size() <= prefix.size() || spool_dir.compare(0, prefix.size(), prefix) != 0) {
        return make_error("spool_dir " + spool_dir + " does not lie inside project_dir " +
                          project_dir);
    }
    const std::string rel = spool_dir.substr(prefix.size());
    if (!is_plain_relative(rel)) {
        return make_error(spool_dir + " must be a plain path beneath the project directory");
    }

    UniqueFd project(::open(project_dir.c_str(), kDirFlags));
    if (!project) return make_error("project_dir " + describe_dir_error(project_dir, errno));

    Spool spool;
    spool.path_ = spool_dir;
    auto root = open_beneath(project.get(), rel, "spool " + spool_dir, resolve);
    if (!root) return root.error();
    spool.root_ = std::move(*root);
    struct stat root_st {};
    if (::fstat(spool.root_.get(), &root_st) != 0 || !S_ISDIR(root_st.st_mode)) {
        return make_error("spool " + spool_dir + " is not a directory");
    }

    for (SpoolDir dir : kAllSpoolDirs) {
        const std::string name(spool_dir_name(dir));
        const std::string path = spool_dir + "/" + name;
        auto sub = open_beneath(spool.root_.get(), name, "spool directory " + path, resolve);
        if (!sub) return sub.error();
        struct stat st {};
        if (::fstat(sub->get(), &st) != 0 || !S_ISDIR(st.st_mode)) {
            return make_error("spool directory " + path + " is not a directory");
        }
        // Renames between subdirectories must stay on one filesystem; a
        // mount planted over one of them is refused.
        if (st.st_dev != root_st.st_dev) {
            return make_error("spool directory " + path + " is on another device than the spool");
        }
        spool.dirs_[static_cast<std::size_t>(dir)] = std::move(*sub);
    }
    return spool;
}

int Spool::fd(SpoolDir dir) const {
    return dirs_[static_cast<std::size_t>(dir)].get();
}

Result<std::vector<std::string>> Spool::list(SpoolDir dir) const {
    std::vector<std::string> names;
    if (!sys::list_dir(fd(dir), names)) {
        return make_error("cannot list " + std::string(spool_dir_name(dir)) + sys::errno_text("/"));
    }
    return names;
}

bool Spool::contains(SpoolDir dir, const std::string& name) const {
    return sys::exists_at(fd(dir), name);
}

int Spool::move(SpoolDir from, SpoolDir to, const std::string& name, bool no_replace) const {
    const int rc = ::renameat2(fd(from), name.c_str(), fd(to), name.c_str(),
                               no_replace ? RENAME_NOREPLACE : 0);
    return rc == 0 ? 0 : errno;
}

Result<std::string> Spool::quarantine(SpoolDir from, const std::string& name) const {
    const auto try_name = [&](const std::string& target) {
        return ::renameat2(fd(from), name.c_str(), fd(SpoolDir::Quarantine), target.c_str(),
                           RENAME_NOREPLACE) == 0
                   ? 0
                   : errno;
    };
    int err = try_name(name);
    if (err == 0) return name;
    for (int i = 1; err == EEXIST && i <= kMaxQuarantineSuffix; ++i) {
        const std::string target = name + "." + std::to_string(i);
        if (target.size() > kNameMax) break;
        err = try_name(target);
        if (err == 0) return target;
    }
    // Taken 99 times over, or too long for a suffix: a random one on a
    // shortened name. A collision of 64 random bits is only retried.
    for (int attempt = 0; (err == EEXIST || err == ENAMETOOLONG) && attempt < 8; ++attempt) {
        const std::string target = name.substr(0, kShortenedName) + "." + random_hex(8);
        err = try_name(target);
        if (err == 0) return target;
    }
    return make_error(sys::errno_text("cannot move into quarantine/", err));
}

Result<std::string> Spool::mark_stuck(const std::string& name) const {
    const std::string target = std::string(kStuckPrefix) + name;
    if (target.size() > kNameMax) return make_error("name too long to mark as stuck");
    if (::renameat2(fd(SpoolDir::Requests), name.c_str(), fd(SpoolDir::Requests), target.c_str(),
                    RENAME_NOREPLACE) != 0) {
        return make_error(sys::errno_text("cannot rename within requests/", errno));
    }
    return target;
}

Result<Inspected> Spool::inspect(SpoolDir dir, const std::string& name) const {
    Inspected out;
    out.path_fd.reset(::openat(fd(dir), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!out.path_fd) return make_error(sys::errno_text("cannot look at the file", errno));
    if (::fstat(out.path_fd.get(), &out.st) != 0) {
        return make_error(sys::errno_text("cannot stat the file", errno));
    }
    return out;
}

Result<UniqueFd> Spool::open_for_reading(SpoolDir dir, const std::string& name,
                                         const Inspected& inspected) const {
    if (!S_ISREG(inspected.st.st_mode)) return make_error("not a regular file");
    constexpr int kReadFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    char proc_path[64];
    std::snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", inspected.path_fd.get());
    UniqueFd fd_read(::open(proc_path, kReadFlags));
    if (!fd_read && errno == ENOENT) {
        // No /proc: open by name again, and let the fstat below prove it is
        // the same inode.
        fd_read.reset(::openat(fd(dir), name.c_str(), kReadFlags | O_NOFOLLOW));
    }
    if (!fd_read) return make_error(sys::errno_text("cannot open the file for reading", errno));
    struct stat st {};
    if (::fstat(fd_read.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_dev != inspected.st.st_dev || st.st_ino != inspected.st.st_ino) {
        return make_error("the file changed while it was opened");
    }
    return fd_read;
}

Result<bool> Spool::publish(SpoolDir dir, const std::string& name, std::string_view bytes,
                            Publish how, const FileMode& mode) const {
    const int tmp = fd(SpoolDir::Tmp);
    // A name the agent cannot predict, created exclusively: nothing it
    // planted in tmp/ can be opened instead.
    const std::string temp = std::string(kTempPrefix) + random_hex(8);
    UniqueFd out(
        ::openat(tmp, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return make_error(sys::errno_text("cannot create a file in tmp/", errno));
    const auto fail = [&](const std::string& what) -> Result<bool> {
        const int err = errno;
        ::unlinkat(tmp, temp.c_str(), 0);
        return make_error(sys::errno_text(what, err));
    };
    if (!sys::write_all(out.get(), bytes)) return fail("cannot write a file in tmp/");
    if (const char* unset = apply_file_mode(out.get(), mode)) {
        return fail(std::string("cannot set the ") + unset + " of a published file");
    }
    out.reset();
    const unsigned flags = how == Publish::NoReplace ? RENAME_NOREPLACE : 0;
    if (::renameat2(tmp, temp.c_str(), fd(dir), name.c_str(), flags) != 0) {
        if (errno == EEXIST && how == Publish::NoReplace) {
            ::unlinkat(tmp, temp.c_str(), 0);
            return false;
        }
        return fail("cannot rename into " + std::string(spool_dir_name(dir)) + "/");
    }
    return true;
}

Result<std::size_t> Spool::prune(SpoolDir dir, std::time_t cutoff, std::string_view prefix) const {
    auto names = list(dir);
    if (!names) return names.error();
    std::size_t removed = 0;
    for (const std::string& name : *names) {
        if (!name.starts_with(prefix)) continue;
        struct stat st {};
        if (::fstatat(fd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;
        if (st.st_mtime >= cutoff) continue;
        if (::unlinkat(fd(dir), name.c_str(), 0) == 0) ++removed;
    }
    return removed;
}

}  // namespace hb::exec
