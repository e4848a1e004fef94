#include "common/integrity_gate.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/sha256.hpp"
#include "ipc/path_component.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::common {
namespace {

// O_NONBLOCK: a FIFO planted at a pinned path must not hang the drain; it is
// refused by the fstat that follows.
constexpr int kFileFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

std::vector<std::string_view> split_components(std::string_view path) {
    std::vector<std::string_view> parts;
    while (true) {
        const auto slash = path.find('/');
        parts.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    return parts;
}

Observed from_errno(int err) {
    switch (err) {
        case ENOENT:
            return {FileState::Absent, {}, {}};
        case ELOOP:
            return {FileState::Symlink, {}, {}};
        case ENOTDIR:
            return {FileState::NotRegular, {}, {}};
        case EXDEV:
            return {FileState::BadPath, {}, {}};  // would leave the project dir
        default:
            return {FileState::Unreadable, {}, std::strerror(err)};
    }
}

// openat2 beneath the project dir; -errno on failure, -ENOSYS where the
// kernel (or a seccomp filter) does not offer it.
int open_with_openat2(int dirfd, const std::string& path, int flags) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    for (int attempt = 0; attempt < 8; ++attempt) {
        const long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
        if (fd >= 0) return static_cast<int>(fd);
        // EAGAIN: a concurrent rename raced the beneath check; retry a little.
        if (errno != EAGAIN && errno != EINTR) break;
    }
    return errno == E2BIG || errno == EPERM ? -ENOSYS : -errno;
}

// One component at a time, each with O_NOFOLLOW. A symlinked directory gives
// ELOOP (or ENOTDIR on some paths): lstat tells which.
int open_component_wise(int dirfd, std::string_view path, int last_flags) {
    const std::vector<std::string_view> parts = split_components(path);
    UniqueFd current;
    int at = dirfd;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string name(parts[i]);
        const bool last = i + 1 == parts.size();
        const int fd = ::openat(at, name.c_str(), last ? last_flags : kDirFlags);
        if (fd < 0) {
            const int err = errno;
            struct stat st {};
            if ((err == ELOOP || err == ENOTDIR) &&
                ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
            }
            return -err;
        }
        current.reset(fd);
        at = current.get();
    }
    return current.release();
}

std::string short_hash(const std::string& hex) {
    return hex.substr(0, 12);
}

}  // namespace

Opened open_pinned(int dirfd, std::string_view rel_path, bool directory, Resolver resolver) {
    if (!is_plain_relative(rel_path)) return {UniqueFd(), FileState::BadPath, {}};
    const int flags = directory ? kDirFlags : kFileFlags;
    const std::string path(rel_path);
    int fd = -ENOSYS;
    if (resolver == Resolver::Openat2) fd = open_with_openat2(dirfd, path, flags);
    if (fd == -ENOSYS) fd = open_component_wise(dirfd, rel_path, flags);
    if (fd < 0) {
        Observed seen = from_errno(-fd);
        return {UniqueFd(), seen.state, std::move(seen.error)};
    }
    return {UniqueFd(fd), FileState::Regular, {}};
}

Observed check_extent(int fd, const struct stat& st) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > kMaxPinnedBytes) {
        return {FileState::TooLarge,
                {},
                std::to_string(size) + " bytes, over the " + std::to_string(kMaxPinnedBytes) +
                    " a pinned file may hold"};
    }
    // A hole: SEEK_HOLE answers the file's end where there is none (and on
    // a filesystem that cannot tell), as engines/build_input/build_snapshot.cpp's
    // check_dense asks it.
    if (size == 0) return {FileState::Regular, {}, {}};
    const off_t hole = ::lseek(fd, 0, SEEK_HOLE);
    if (hole < 0 || ::lseek(fd, 0, SEEK_SET) != 0)
        return {FileState::Unreadable, {}, std::strerror(errno)};
    if (static_cast<std::uint64_t>(hole) < size) {
        return {FileState::Sparse,
                {},
                std::to_string(size) + " bytes long, a hole from byte " + std::to_string(hole)};
    }
    return {FileState::Regular, {}, {}};
}

Observed observe_pinned(int project_dirfd, std::string_view rel_path, Resolver resolver,
                        Contents contents) {
    Opened opened = open_pinned(project_dirfd, rel_path, /*directory=*/false, resolver);
    if (!opened.fd) return {opened.state, {}, opened.error};
    struct stat st {};
    if (::fstat(opened.fd.get(), &st) != 0)
        return {FileState::Unreadable, {}, std::strerror(errno)};
    if (!S_ISREG(st.st_mode)) return {FileState::NotRegular, {}, {}};
    if (contents == Contents::TypeOnly) return {FileState::Regular, {}, {}};
    if (Observed unfit = check_extent(opened.fd.get(), st); unfit.state != FileState::Regular)
        return unfit;
    // One byte past the bound: a file grown since the fstat is not read on.
    auto hash = sha256_fd(opened.fd.get(), kMaxPinnedBytes);
    if (!hash) return {FileState::Unreadable, {}, hash.error().message};
    return {FileState::Regular, std::move(hash.value()), {}};
}

GateReport check_tcb(const std::string& project_dir, const std::vector<TcbPin>& pins,
                     Resolver resolver) {
    GateReport report;
    UniqueFd dir(::open(project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) {
        const std::string why = std::string("the project directory ") + project_dir +
                                " cannot be opened (" + std::strerror(errno) + ")";
        for (const TcbPin& pin : pins) report.problems.push_back({pin.path, why});
        return report;
    }
    for (const TcbPin& pin : pins) {
        // Pinned absent: only whether it is there counts, never its bytes.
        const Observed seen = observe_pinned(dir.get(), pin.path, resolver,
                                             pin.sha256 ? Contents::Hash : Contents::TypeOnly);
        std::string problem;
        switch (seen.state) {
            case FileState::Regular:
                if (!pin.sha256) {
                    problem = "exists but was pinned as absent";
                } else if (seen.sha256 != *pin.sha256) {
                    problem = "changed since it was approved (sha256 " + short_hash(seen.sha256) +
                              "..., approved " + short_hash(*pin.sha256) + "...)";
                }
                break;
            case FileState::Absent:
                if (pin.sha256) problem = "is missing";
                break;
            case FileState::Symlink:
                problem = "is a symlink or lies under one (pinned files must be regular files)";
                break;
            case FileState::NotRegular:
                problem = "is not a regular file (or a directory on its path is not a directory)";
                break;
            case FileState::BadPath:
                problem = "is not a plain path inside the project directory";
                break;
            case FileState::Unreadable:
                problem = "cannot be read (" + seen.error + ")";
                break;
            case FileState::TooLarge:
                problem = "is too large to be a pinned file (" + seen.error + "); not read";
                break;
            case FileState::Sparse:
                problem =
                    "is a sparse file (" + seen.error + "), which no pinned file is; not read";
                break;
        }
        if (!problem.empty()) report.problems.push_back({pin.path, std::move(problem)});
    }
    return report;
}

std::string GateReport::detail() const {
    std::string text;
    for (const TcbProblem& p : problems) {
        if (!text.empty()) text += "; ";
        text += p.path + " " + p.problem;
    }
    if (!text.empty()) text += "; fix: check the change, then run `hostbridge approve`";
    return text;
}

}  // namespace hb::common
