#include "admin/install/tcb.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "admin/util/fs_util.hpp"
#include "common/integrity_gate.hpp"
#include "common/sha256.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {
namespace {

// The gate reads no more either (common/integrity_gate.hpp).
constexpr std::size_t kMaxTcbFile = common::kMaxPinnedBytes;

Result<std::string> read_fd(int fd, const std::string& shown) {
    std::string content;
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return make_error("cannot read " + shown + ": " + std::strerror(errno));
        }
        if (n == 0) return content;
        content.append(buf, static_cast<std::size_t>(n));
        if (content.size() > kMaxTcbFile) return make_error(shown + " is larger than 16 MiB");
    }
}

}  // namespace

Result<TcbSnapshot> snapshot_tcb_file(const std::string& project_dir, const std::string& rel) {
    TcbSnapshot snap;
    snap.rel = rel;
    const std::string shown = project_dir + "/" + rel;
    UniqueFd dir(::open(project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return make_error("cannot open " + project_dir + ": " + std::strerror(errno));
    std::size_t pos = 0;
    while (true) {
        std::size_t slash = rel.find('/', pos);
        const std::string part = rel.substr(pos, slash == std::string::npos ? slash : slash - pos);
        if (slash == std::string::npos) {
            UniqueFd fd(
                ::openat(dir.get(), part.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            if (!fd) {
                if (errno == ENOENT) return snap;
                if (errno == ELOOP) return make_error(shown + " is a symlink");
                return make_error("cannot read " + shown + ": " + std::strerror(errno));
            }
            struct stat st {};
            if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
                return make_error(shown + " is not a regular file");
            }
            // Too large or sparse: said from its fstat, never read.
            if (const common::Observed unfit = common::check_extent(fd.get(), st);
                unfit.state != common::FileState::Regular)
                return make_error(shown +
                                  (unfit.state == common::FileState::Sparse ? " is a sparse file ("
                                   : unfit.state == common::FileState::TooLarge
                                       ? " is larger than 16 MiB ("
                                       : " cannot be read (") +
                                  unfit.error + ")");
            auto content = read_fd(fd.get(), shown);
            if (!content) return content.error();
            snap.sha256 = common::sha256_hex(*content);
            snap.content = std::move(*content);
            return snap;
        }
        UniqueFd next(
            ::openat(dir.get(), part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!next) {
            if (errno == ENOENT) return snap;
            if (errno == ELOOP || errno == ENOTDIR) {
                struct stat st {};
                if (::fstatat(dir.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISLNK(st.st_mode)) {
                    return make_error(project_dir + "/" + rel.substr(0, slash) + " is a symlink");
                }
                return make_error(project_dir + "/" + rel.substr(0, slash) + " is not a directory");
            }
            return make_error("cannot open " + project_dir + "/" + rel.substr(0, slash) + ": " +
                              std::strerror(errno));
        }
        dir = std::move(next);
        pos = slash + 1;
    }
}

Result<std::string> project_relative(const std::string& project_dir, const std::string& path) {
    std::string abs = lexically_normal(path[0] == '/' ? path : project_dir + "/" + path);
    if (abs == project_dir || !path_is_within(abs, project_dir)) {
        return make_error(abs + " is not inside the project directory " + project_dir);
    }
    return abs.substr(project_dir.size() + 1);
}

std::string approved_copy_path(const InstallPaths& paths, const std::string& rel) {
    return paths.approved_dir + "/" + rel;
}

Result<std::optional<std::string>> read_approved_copy(const InstallPaths& paths,
                                                      const std::string& rel) {
    return read_file_if_exists(approved_copy_path(paths, rel), kMaxTcbFile);
}

Result<void> store_approved_copy(const InstallPaths& paths, const TcbSnapshot& snapshot) {
    const std::string copy = approved_copy_path(paths, snapshot.rel);
    if (!snapshot.content) {
        auto removed = remove_file(copy);
        if (!removed) return removed.error();
        return {};
    }
    auto slash = copy.rfind('/');
    auto made = make_dirs(copy.substr(0, slash), 0700);
    if (!made) return made;
    return write_file_atomic(copy, *snapshot.content, 0600);
}

}  // namespace hb::admin
