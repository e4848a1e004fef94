#include "snapshot/copy.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "common/sha256.hpp"
#include "ipc/sys.hpp"

namespace hb::snapshot {

using common::sha256_fd;
using common::sha256_hex;

namespace {

using sys::errno_text;

constexpr int kDirOpen = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// O_NONBLOCK: a FIFO swapped in between the listing and the open must not
// hang us, nor a file under another process's write lease (the open would
// wait up to lease-break-time); the fstat that follows refuses both.
constexpr int kFileOpen = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
constexpr std::size_t kChunk = 1u << 30;         // one copy_file_range call at most
constexpr std::size_t kReadBuffer = 256u << 10;  // the read/write loop's buffer
constexpr int kOpenat2Attempts = 64;
constexpr char kHashHeader[] = "hostbridge build snapshot v1\n";
constexpr char kRaiseIt[] = " in bridge.json; raise it if this context is meant to be that large)";

// Names in messages as the audit log shows them (ipc/sys.hpp).
std::string visible(std::string_view raw) {
    return sys::escape_unprintable(raw);
}

std::string octal_mode(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

std::string with_length(const std::string& text) {
    return std::to_string(text.size()) + ":" + text;
}

// One entry of the finished tree, for the hash.
struct Entry {
    char type = 'f';
    std::string path;  // relative to the snapshot root
    mode_t mode = 0;
    std::string payload;
};

// One walk's state.
struct Walk {
    Walk(const SnapshotRequest& request, const std::string& context)
        : budget(request.budget),
          skip_dev(request.skip_dev),
          skip_ino(request.skip_ino),
          shown_prefix(context == "." ? std::string() : context + "/"),
          shown_root(context) {}

    const SnapshotBudget& budget;
    const std::uint64_t skip_dev;  // the directory left out (ipc/snapshot_wire.hpp)
    const std::uint64_t skip_ino;
    const std::string shown_prefix;  // "<context>/", or "" for "."
    const std::string shown_root;    // the context itself
    std::uint64_t listed = 0;        // entries returned by readdir, against max_files
    SnapshotCounts out;
    std::vector<Entry> entries;
    bool try_clone = true;  // off once the filesystem says it cannot
    bool try_range = true;
    std::vector<char> buffer;

    // "build context <path relative to the project dir>".
    [[nodiscard]] std::string shown(const std::string& rel) const {
        return "build context " + visible(rel.empty() ? shown_root : shown_prefix + rel);
    }
    [[nodiscard]] Error fail(const std::string& rel, const std::string& why) const {
        return make_error(shown(rel) + ": " + why);
    }
    [[nodiscard]] Error fail_errno(const std::string& rel, const std::string& what,
                                   int err = errno) const {
        return make_error(shown(rel) + ": " + errno_text(what, err));
    }
};

std::string join(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir + "/" + name;
}

// The names in the directory `dir_fd` (but "." and ".."), sorted bytewise
// and unique, read through a fresh fd; every name counts against max_files
// as readdir returns it.
Result<std::vector<std::string>> list_entries(Walk& walk, int dir_fd, const std::string& rel) {
    UniqueFd fresh(::openat(dir_fd, ".", kDirOpen));
    if (!fresh) return walk.fail_errno(rel, "cannot open to list");
    DIR* stream = ::fdopendir(fresh.get());
    if (stream == nullptr) return walk.fail_errno(rel, "cannot list");
    fresh.release();  // the stream owns it now
    std::vector<std::string> names;
    for (;;) {
        errno = 0;
        const dirent* entry = ::readdir(stream);
        if (entry == nullptr) break;
        const std::string_view name = entry->d_name;
        if (name == "." || name == "..") continue;
        if (++walk.listed > walk.budget.max_files) {
            ::closedir(stream);
            return walk.fail(rel, "more than " + std::to_string(walk.budget.max_files) +
                                      " entries (files, directories and links) in the context " +
                                      "(the limit is build.max_files" + kRaiseIt);
        }
        names.emplace_back(name);
    }
    const int err = errno;
    ::closedir(stream);
    if (err != 0) return walk.fail_errno(rel, "cannot list", err);
    std::sort(names.begin(), names.end());
    // A directory renamed into while it is read may list a name twice.
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

Error bytes_over_budget(const Walk& walk, const std::string& rel) {
    return walk.fail(rel, "the files of the context total more than " +
                              std::to_string(walk.budget.max_bytes) +
                              " bytes (the limit is build.max_bytes" + kRaiseIt);
}

enum class Copied { Cloned, InKernel, ByRead };

// Copies `src` into the empty `dst`, at most `limit` bytes but for a clone
// (it shares extents and takes no time; the caller checks its size). The
// count copied, which is `limit` when the source holds more.
Result<std::uint64_t> copy_bytes(Walk& walk, const std::string& rel, int src, int dst,
                                 std::uint64_t limit, std::uint64_t size_seen, Copied& how) {
    if (walk.try_clone) {
        if (::ioctl(dst, FICLONE, src) == 0) {
            struct stat st {};
            if (::fstat(dst, &st) != 0) return walk.fail_errno(rel, "fstat the copy");
            how = Copied::Cloned;
            return static_cast<std::uint64_t>(st.st_size);
        }
        const int err = errno;
        // The filesystem cannot (ext4, tmpfs) or the two are on different ones:
        // no file of this snapshot will clone. Anything else: this file only.
        if (err == EOPNOTSUPP || err == ENOTTY || err == EXDEV || err == ENOSYS) {
            walk.try_clone = false;
        }
        if (::ftruncate(dst, 0) != 0) return walk.fail_errno(rel, "truncate the copy");
    }
    std::uint64_t copied = 0;
    if (walk.try_range) {
        bool fell_back = false;
        while (copied < limit) {
            const std::size_t want =
                static_cast<std::size_t>(std::min<std::uint64_t>(limit - copied, kChunk));
            const ssize_t n = ::copy_file_range(src, nullptr, dst, nullptr, want, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                const int err = errno;
                if (copied == 0 && (err == EXDEV || err == EOPNOTSUPP || err == ENOSYS ||
                                    err == EINVAL || err == EPERM)) {
                    // Two filesystems, or one that cannot: no file of this
                    // snapshot will do better. EINVAL: this file only.
                    if (err != EINVAL) walk.try_range = false;
                    fell_back = true;
                    break;
                }
                return walk.fail_errno(rel, "cannot copy", err);
            }
            if (n == 0) break;
            copied += static_cast<std::uint64_t>(n);
        }
        // Some filesystems answer 0 for a file that has bytes: read it instead.
        if (!fell_back && (copied > 0 || size_seen == 0)) {
            how = Copied::InKernel;
            return copied;
        }
    }
    if (walk.buffer.empty()) walk.buffer.resize(kReadBuffer);
    if (::lseek(src, 0, SEEK_SET) != 0 || ::lseek(dst, 0, SEEK_SET) != 0 ||
        ::ftruncate(dst, 0) != 0) {
        return walk.fail_errno(rel, "cannot rewind the copy");
    }
    copied = 0;
    while (copied < limit) {
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(limit - copied, walk.buffer.size()));
        const ssize_t n = ::read(src, walk.buffer.data(), want);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return walk.fail_errno(rel, "cannot read");
        if (n == 0) break;
        if (!sys::write_all(dst, std::string_view(walk.buffer.data(), static_cast<std::size_t>(n))))
            return walk.fail_errno(rel, "cannot write the copy");
        copied += static_cast<std::uint64_t>(n);
    }
    how = Copied::ByRead;
    return copied;
}

// Refuses a file with a hole: SEEK_HOLE finds the first one, or answers the
// file's end where there is none (and on a filesystem that cannot tell).
// A compressed file has no hole, so its fewer blocks are not taken for one.
Result<void> check_dense(Walk& walk, int fd, const struct stat& st, const std::string& rel) {
    if (st.st_size == 0) return {};
    const off_t hole = ::lseek(fd, 0, SEEK_HOLE);
    if (hole < 0) return walk.fail_errno(rel, "cannot look for holes in it");
    if (::lseek(fd, 0, SEEK_SET) != 0) return walk.fail_errno(rel, "cannot rewind it");
    if (hole >= st.st_size) return {};
    return walk.fail(rel, "a sparse file (" + std::to_string(st.st_size) +
                              " bytes long, a hole from byte " + std::to_string(hole) +
                              "): its copy would write bytes the checkout does not hold; "
                              "a build context holds no sparse file");
}

Result<void> copy_file(Walk& walk, int src_dir, int dst_dir, const std::string& name,
                       const std::string& rel) {
    struct stat st {};
    auto opened = open_source_file(src_dir, name, st);
    if (!opened) return walk.fail(rel, opened.error().message);
    const std::uint64_t left = walk.budget.max_bytes - walk.out.bytes;
    if (static_cast<std::uint64_t>(st.st_size) > left) return bytes_over_budget(walk, rel);
    // A hole costs the agent nothing and the host a real block once copied
    // (and again in the image layer): a 1 GiB sparse file was 1 GiB of the
    // host's disk and 20 s of the drain. Asked before anything is written.
    if (auto dense = check_dense(walk, opened->get(), st, rel); !dense) return dense;
    UniqueFd copy(
        ::openat(dst_dir, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!copy) return walk.fail_errno(rel, "cannot create its copy");
    // One byte past the size seen: a file that grew since the fstat (an
    // ftruncate after the hole check) is caught without copying more.
    const auto seen = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t limit = seen + 1;
    Copied how = Copied::ByRead;
    auto copied = copy_bytes(walk, rel, opened->get(), copy.get(), limit,
                             static_cast<std::uint64_t>(st.st_size), how);
    if (!copied) return copied.error();
    if (*copied > seen) {
        return walk.fail(rel, "it grew while being copied (the copy stops at the size it had)");
    }
    const mode_t mode = st.st_mode & 0777;  // no setuid, setgid or sticky bit; no owner
    if (::fchmod(copy.get(), mode) != 0) return walk.fail_errno(rel, "chmod its copy");
    if (::lseek(copy.get(), 0, SEEK_SET) != 0) return walk.fail_errno(rel, "rewind its copy");
    auto sha = sha256_fd(copy.get());
    if (!sha) return walk.fail(rel, "hashing its copy: " + sha.error().message);
    walk.out.bytes += *copied;
    ++walk.out.files;
    ++(how == Copied::Cloned     ? walk.out.cloned
       : how == Copied::InKernel ? walk.out.copied_in_kernel
                                 : walk.out.copied_by_read);
    walk.entries.push_back({'f', rel, mode, std::move(*sha)});
    return {};
}

Result<void> copy_link(Walk& walk, int src_dir, int dst_dir, const std::string& name,
                       const std::string& rel) {
    char buffer[PATH_MAX];
    const ssize_t n = ::readlinkat(src_dir, name.c_str(), buffer, sizeof buffer);
    if (n < 0 && errno == ENOENT) return {};  // gone since the listing
    if (n < 0 && errno == EINVAL) return walk.fail(rel, "changed type while being copied");
    if (n < 0) return walk.fail_errno(rel, "cannot read the link");
    if (static_cast<std::size_t>(n) >= sizeof buffer) return walk.fail(rel, "a symlink too long");
    const std::string target(buffer, static_cast<std::size_t>(n));
    if (::symlinkat(target.c_str(), dst_dir, name.c_str()) != 0) {
        return walk.fail_errno(rel, "cannot create its copy");
    }
    ++walk.out.files;
    walk.entries.push_back({'l', rel, 0777, with_length(target)});
    return {};
}

Result<void> copy_tree(Walk& walk, int src_fd, int dst_fd, const std::string& rel, int depth);

Result<void> copy_dir(Walk& walk, int src_dir, int dst_dir, const std::string& name,
                      const std::string& rel, int depth) {
    if (depth > kSnapshotMaxDepth) {
        return walk.fail(rel, "more than " + std::to_string(kSnapshotMaxDepth) +
                                  " directory levels below the context");
    }
    UniqueFd src(::openat(src_dir, name.c_str(), kDirOpen));
    if (!src && errno == ENOENT) return {};  // gone since the listing
    if (!src && (errno == ENOTDIR || errno == ELOOP)) {
        return walk.fail(rel, "changed type while being copied");
    }
    if (!src) return walk.fail_errno(rel, "cannot open");
    struct stat st {};
    if (::fstat(src.get(), &st) != 0) return walk.fail_errno(rel, "fstat");
    // u+rwx always: we must be able to fill it, check links through it and
    // remove it.
    const mode_t mode = (st.st_mode & 0777) | 0700;
    if (::mkdirat(dst_dir, name.c_str(), 0700) != 0) {
        return walk.fail_errno(rel, "cannot create its copy");
    }
    UniqueFd dst(::openat(dst_dir, name.c_str(), kDirOpen));
    if (!dst) return walk.fail_errno(rel, "cannot open its copy");
    ++walk.out.files;
    walk.entries.push_back({'d', rel, mode, "-"});
    if (auto copied = copy_tree(walk, src.get(), dst.get(), rel, depth); !copied) return copied;
    if (::fchmod(dst.get(), mode) != 0) return walk.fail_errno(rel, "chmod its copy");
    return {};
}

Result<void> copy_tree(Walk& walk, int src_fd, int dst_fd, const std::string& rel, int depth) {
    auto names = list_entries(walk, src_fd, rel);
    if (!names) return names.error();
    for (const std::string& name : *names) {
        const std::string child = join(rel, name);
        struct stat st {};
        if (::fstatat(src_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue;  // gone since the listing
            return walk.fail_errno(child, "fstat");
        }
        Result<void> copied;
        const bool skipped = (walk.skip_dev != 0 || walk.skip_ino != 0) &&
                             st.st_dev == walk.skip_dev && st.st_ino == walk.skip_ino;
        if (S_ISDIR(st.st_mode) && skipped) continue;
        if (S_ISDIR(st.st_mode)) {
            copied = copy_dir(walk, src_fd, dst_fd, name, child, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            copied = copy_file(walk, src_fd, dst_fd, name, child);
        } else if (S_ISLNK(st.st_mode)) {
            copied = copy_link(walk, src_fd, dst_fd, name, child);
        } else {
            copied = walk.fail(child, sys::file_type_text(st.st_mode) +
                                          "; a build context holds only regular files, " +
                                          "directories and symlinks");
        }
        if (!copied) return copied;
    }
    return {};
}

std::string tree_hash(std::vector<Entry>& entries) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.path < b.path; });
    std::string canonical = kHashHeader;
    for (const Entry& entry : entries) {
        canonical += entry.type;
        canonical += ' ' + octal_mode(entry.mode) + ' ' + with_length(entry.path) + ' ' +
                     entry.payload + '\n';
    }
    return sha256_hex(canonical);
}

}  // namespace

Result<SnapshotCounts> copy_context(int context_fd, int root_fd, const SnapshotRequest& request) {
    Walk walk(request, request.context);
    UniqueFd src(::openat(context_fd, ".", kDirOpen));
    if (!src) return walk.fail_errno("", "cannot open");
    if (auto copied = copy_tree(walk, src.get(), root_fd, "", 0); !copied) return copied.error();
    walk.out.sha256 = tree_hash(walk.entries);
    return std::move(walk.out);
}

Result<UniqueFd> open_source_file(int dir_fd, const std::string& name, struct stat& st) {
    UniqueFd fd(::openat(dir_fd, name.c_str(), kFileOpen));
    // In the confined child, Landlock refuses (EACCES) a file renamed out of
    // the context while it is opened; the name may hold something else
    // by now: ask again, a few times, so the refusal says what is there.
    for (int attempt = 0; !fd && errno == EACCES && attempt < kOpenat2Attempts; ++attempt) {
        fd.reset(::openat(dir_fd, name.c_str(), kFileOpen));
    }
    if (!fd) {
        const int err = errno;
        struct stat now {};
        if (::fstatat(dir_fd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISREG(now.st_mode)) {
            return make_error(sys::file_type_text(now.st_mode) +
                              " (it changed type while being copied); a build context holds " +
                              "only regular files, directories and symlinks");
        }
        if (err == EWOULDBLOCK) {
            return make_error("another process holds a lease on it (opening it would wait)");
        }
        return make_error(errno_text("cannot open", err));
    }
    if (::fstat(fd.get(), &st) != 0) return make_error(errno_text("fstat"));
    if (!S_ISREG(st.st_mode)) {
        return make_error(sys::file_type_text(st.st_mode) +
                          " (it changed type while being copied); a build context holds only " +
                          "regular files, directories and symlinks");
    }
    return fd;
}

}  // namespace hb::snapshot
