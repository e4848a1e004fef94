#include "engines/build_input/build_snapshot.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
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
#include "executor/run_tree.hpp"
#include "ipc/path_component.hpp"
#include "ipc/sys.hpp"
#include "sandbox/confine.hpp"

namespace hb::exec {

using common::sha256_fd;
using common::sha256_hex;

namespace {

using sys::errno_text;

constexpr int kDirOpen = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kPathOpen = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// O_NONBLOCK: a FIFO swapped in between the listing and the open must not
// hang us, nor a file under another process's write lease (the open would
// wait up to lease-break-time); the fstat that follows refuses both.
constexpr int kFileOpen = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
constexpr std::size_t kChunk = 1u << 30;         // one copy_file_range call at most
constexpr std::size_t kReadBuffer = 256u << 10;  // the read/write loop's buffer
constexpr int kOpenat2Attempts = 64;
constexpr char kHashHeader[] = "hostbridge build snapshot v1\n";
// The longest answer of the confined copy: an error names a path, each of
// its bytes shown as up to four.
constexpr std::size_t kMaxAnswer = 64u << 10;
constexpr char kRaiseIt[] = " in bridge.json; raise it if this context is meant to be that large)";

// Names in messages as the audit log shows them (ipc/sys.hpp).
std::string visible(std::string_view raw) {
    return sys::escape_unprintable(raw);
}

std::string type_name(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISLNK(mode)) return "a symlink";
    return "an entry of unknown type";
}

std::string octal_mode(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

std::string with_length(const std::string& text) {
    return std::to_string(text.size()) + ":" + text;
}

bool normal_context(const std::string& context) {
    return context == "." || is_plain_relative(context);
}

// One entry of the finished tree, for the hash.
struct Entry {
    char type = 'f';
    std::string path;  // relative to the snapshot root
    mode_t mode = 0;
    std::string payload;
};

struct Link {
    std::string path;
    std::string target;
};

// One walk's state.
struct Walk {
    Walk(const SnapshotBudget& limits, const std::string& context)
        : budget(limits),
          shown_prefix(context == "." ? std::string() : context + "/"),
          shown_root(context) {}

    const SnapshotBudget& budget;
    const std::string shown_prefix;  // "<context>/", or "" for "."
    const std::string shown_root;    // the context itself
    std::uint64_t listed = 0;        // entries returned by readdir, against max_files
    Snapshot out;
    std::vector<Entry> entries;
    std::vector<Link> links;
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

// Whether `target`, read as text from the directory of `link` (relative to
// the root), climbs above the root: each ".." takes one name off, and there
// must be one to take. The kernel check (check_links) does not see this in a
// dangling link: missing/../../x stops at "missing" (ENOENT), but a resolver
// that cleans the path as text before opening it lands outside.
bool climbs_out(const std::string& link, const std::string& target) {
    std::size_t depth = static_cast<std::size_t>(std::count(link.begin(), link.end(), '/'));
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = target.find('/', start);
        const std::string_view part = std::string_view(target).substr(
            start, slash == std::string::npos ? slash : slash - start);
        if (part == "..") {
            if (depth == 0) return true;
            --depth;
        } else if (!part.empty() && part != ".") {
            ++depth;
        }
        if (slash == std::string::npos) return false;
        start = slash + 1;
    }
}

// A link's text: not empty, not absolute, not climbing above the root.
Result<void> check_link_text(const Walk& walk, const std::string& rel, const std::string& target) {
    if (target.empty()) return walk.fail(rel, "an empty symlink");
    if (target.front() == '/' || climbs_out(rel, target)) {
        return walk.fail(rel, "a symlink to " + visible(target) + ", outside the context");
    }
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
    if (auto lexical = check_link_text(walk, rel, target); !lexical) return lexical;
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
    if (depth > kMaxSnapshotDepth) {
        return walk.fail(rel, "more than " + std::to_string(kMaxSnapshotDepth) +
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
        if (S_ISDIR(st.st_mode)) {
            copied = copy_dir(walk, src_fd, dst_fd, name, child, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            copied = copy_file(walk, src_fd, dst_fd, name, child);
        } else if (S_ISLNK(st.st_mode)) {
            copied = copy_link(walk, src_fd, dst_fd, name, child);
        } else {
            copied = walk.fail(child, type_name(st.st_mode) +
                                          "; a build context holds only regular files, " +
                                          "directories and symlinks");
        }
        if (!copied) return copied;
    }
    return {};
}

// Every link must resolve beneath the snapshot root or not at all. The
// lexical check (climbs_out) is not enough: with sub/d -> .. and
// sub/a -> d/../x, sub/a reads as sub/x but the kernel resolves d first (to
// the root), then .. above it. So the kernel resolves each one: openat2 with
// RESOLVE_BENEATH fails with EXDEV whenever the resolution would leave the
// root, at any step, through any link. A link that resolves to nothing
// (ENOENT, or ENOTDIR: a name on the way is not a directory) is allowed: it
// leads nowhere, in the kernel and in a resolver that checks each name on
// the way (Go's filepath.EvalSymlinks).
Result<void> check_links(const Walk& walk, int root_fd) {
    for (const Link& link : walk.links) {
        open_how how{};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
        long fd = -1;
        int err = 0;
        for (int attempt = 0; attempt < kOpenat2Attempts; ++attempt) {
            fd = ::syscall(SYS_openat2, root_fd, link.path.c_str(), &how, sizeof how);
            err = fd < 0 ? errno : 0;
            // EAGAIN: a rename anywhere raced the beneath check; try again.
            if (fd >= 0 || (err != EAGAIN && err != EINTR)) break;
        }
        if (fd >= 0) {
            ::close(static_cast<int>(fd));
            continue;
        }
        const std::string target = visible(link.target);
        switch (err) {
            case ENOENT:
            case ENOTDIR:
                continue;  // dangling inside: resolves to nothing, anywhere
            case EXDEV:
                return walk.fail(link.path,
                                 "a symlink to " + target + ", which resolves outside the context");
            case ELOOP:
                return walk.fail(link.path, "a symlink to " + target +
                                                ", which loops (or passes through too many links)");
            case ENOSYS:
            case E2BIG:
            case EPERM:
                return walk.fail(link.path,
                                 "a symlink to " + target +
                                     ", which cannot be checked: this kernel offers no " +
                                     "openat2 (Linux 5.6 or later)");
            default:
                return walk.fail_errno(link.path, "checking the symlink to " + target, err);
        }
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

// Opens `context` beneath the project dir one component at a time, none a
// link.
Result<UniqueFd> open_context(const std::string& project_dir, const std::string& context) {
    UniqueFd at(::open(project_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!at) return make_error(errno_text("cannot open the project dir " + visible(project_dir)));
    if (context == ".") return at;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = context.find('/', start);
        const std::string part = context.substr(start, slash - start);
        const std::string shown = "build context " + visible(context.substr(0, slash));
        UniqueFd next(::openat(at.get(), part.c_str(), kPathOpen));
        if (!next) {
            const int err = errno;
            struct stat st {};
            if ((err == ELOOP || err == ENOTDIR) &&
                ::fstatat(at.get(), part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISLNK(st.st_mode)) {
                    char target[PATH_MAX];
                    const ssize_t n = ::readlinkat(at.get(), part.c_str(), target, sizeof target);
                    std::string to;
                    if (n > 0 && n < PATH_MAX) {
                        to =
                            " to " + visible(std::string_view(target, static_cast<std::size_t>(n)));
                    }
                    return make_error(shown + ": a symlink" + to +
                                      "; a build context is never reached through a link");
                }
                return make_error(shown + ": " + type_name(st.st_mode) + ", not a directory");
            }
            if (err == ENOENT) return make_error(shown + ": does not exist");
            return make_error(shown + ": " + errno_text("cannot open", err));
        }
        at = std::move(next);
        if (slash == std::string::npos) return at;
        start = slash + 1;
    }
}

// The parent of `dest`, opened: a directory of ours that nobody else can
// write, so nobody but us names anything in it.
Result<UniqueFd> open_dest_parent(const std::string& dest, std::string& name) {
    const std::size_t slash = dest.rfind('/');
    if (dest.empty() || dest.front() != '/' || dest.find('\0') != std::string::npos) {
        return make_error("the snapshot dir " + visible(dest) + " is not an absolute path");
    }
    name = dest.substr(slash + 1);
    if (!is_plain_name(name)) {
        return make_error("the snapshot dir " + visible(dest) + " does not end in a name");
    }
    const std::string parent = slash == 0 ? "/" : dest.substr(0, slash);
    UniqueFd fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return make_error(errno_text("cannot open " + visible(parent)));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(errno_text("fstat " + visible(parent)));
    if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
        return make_error(visible(parent) + " (where the snapshot " + visible(name) +
                          " goes) must be ours and writable by nobody else");
    }
    return fd;
}

Result<Snapshot> fill(Walk& walk, int context_fd, int root_fd) {
    UniqueFd src(::openat(context_fd, ".", kDirOpen));
    if (!src) return walk.fail_errno("", "cannot open");
    if (auto copied = copy_tree(walk, src.get(), root_fd, "", 0); !copied) return copied.error();
    walk.out.sha256 = tree_hash(walk.entries);
    return std::move(walk.out);
}

// The copy's answer from its confined child, as text: the hash and the six
// counts; read back strictly, so a child that went wrong yields an error,
// never a snapshot that claims more than the budget allows.
std::string encode(const Snapshot& s) {
    return s.sha256 + " " + std::to_string(s.files) + " " + std::to_string(s.bytes) + " " +
           std::to_string(s.cloned) + " " + std::to_string(s.copied_in_kernel) + " " +
           std::to_string(s.copied_by_read);
}

Result<Snapshot> decode(const std::string& text, const SnapshotBudget& budget, Snapshot out) {
    const Error bad = make_error("the snapshot copy answered out of shape");
    if (text.size() < 65 || !sys::is_lower_hex(std::string_view(text).substr(0, 64), 64) ||
        text[64] != ' ') {
        return bad;
    }
    out.sha256 = text.substr(0, 64);
    std::uint64_t* fields[] = {&out.files, &out.bytes, &out.cloned, &out.copied_in_kernel,
                               &out.copied_by_read};
    std::size_t at = 65;
    for (std::uint64_t* field : fields) {
        const std::size_t end = std::min(text.find(' ', at), text.size());
        if (end == at || end - at > 19) return bad;
        *field = 0;
        for (std::size_t i = at; i < end; ++i) {
            if (text[i] < '0' || text[i] > '9') return bad;
            *field = *field * 10 + static_cast<std::uint64_t>(text[i] - '0');
        }
        at = end + 1;
    }
    if (at != text.size() + 1 || out.files > budget.max_files || out.bytes > budget.max_bytes ||
        out.cloned + out.copied_in_kernel + out.copied_by_read > out.files) {
        return bad;
    }
    return out;
}

// The snapshot's links, listed by the parent itself from the finished tree
// (the child that copied is not trusted to list them), each checked as
// copy_link checks its text; anything but a directory, a regular file or a
// link is refused.
Result<void> find_links(Walk& walk, int dir_fd, const std::string& rel, int depth) {
    if (depth > kMaxSnapshotDepth + 1) return walk.fail(rel, "too deep in its copy");
    std::vector<std::string> names;
    if (!sys::list_dir(dir_fd, names)) return walk.fail_errno(rel, "cannot list its copy");
    for (const std::string& name : names) {
        const std::string child = join(rel, name);
        struct stat st {};
        if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            return walk.fail_errno(child, "fstat its copy");
        }
        if (S_ISLNK(st.st_mode)) {
            char buffer[PATH_MAX];
            const ssize_t n = ::readlinkat(dir_fd, name.c_str(), buffer, sizeof buffer);
            if (n < 0 || n >= PATH_MAX) return walk.fail_errno(child, "cannot read its copy");
            Link link{child, std::string(buffer, static_cast<std::size_t>(n))};
            if (auto lexical = check_link_text(walk, child, link.target); !lexical) return lexical;
            walk.links.push_back(std::move(link));
        } else if (S_ISDIR(st.st_mode)) {
            UniqueFd sub(::openat(dir_fd, name.c_str(), kDirOpen));
            if (!sub) return walk.fail_errno(child, "cannot open its copy");
            if (auto found = find_links(walk, sub.get(), child, depth + 1); !found) return found;
        } else if (!S_ISREG(st.st_mode)) {
            return walk.fail(child, type_name(st.st_mode) + " in its copy");
        }
    }
    return {};
}

// fill, in a child that reads only beneath the context and writes only
// beneath the snapshot root (sandbox/confine.hpp): a bug in the walk cannot
// write the person's files. The links are checked here, in the parent:
// openat2, which that check needs, is refused in the child (its O_TRUNC
// would truncate a checkout file under Landlock ABI 2).
Result<Snapshot> fill_confined(Walk& walk, int context_fd, int root_fd) {
    const SnapshotTestHooks& hooks = snapshot_test_hooks();
    const sandbox::Confinement confinement{context_fd, root_fd, hooks.max_abi};
    auto answer = sandbox::run_confined(confinement, kMaxAnswer, [&]() -> Result<std::string> {
        auto filled = fill(walk, context_fd, root_fd);
        if (!filled) return filled.error();
        if (hooks.in_child_after_copy) hooks.in_child_after_copy(root_fd);
        return encode(*filled);
    });
    if (!answer) return answer.error();
    auto snapshot = decode(*answer, walk.budget, std::move(walk.out));
    if (!snapshot) return snapshot;
    if (auto found = find_links(walk, root_fd, "", 0); !found) return found.error();
    if (auto checked = check_links(walk, root_fd); !checked) return checked.error();
    return snapshot;
}

}  // namespace

SnapshotTestHooks& snapshot_test_hooks() {
    static SnapshotTestHooks hooks;
    return hooks;
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
            return make_error(type_name(now.st_mode) +
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
        return make_error(type_name(st.st_mode) +
                          " (it changed type while being copied); a build context holds only " +
                          "regular files, directories and symlinks");
    }
    return fd;
}

Result<Snapshot> take_snapshot(const std::string& project_dir, const std::string& context,
                               const std::string& dest, const SnapshotBudget& budget) {
    if (!normal_context(context)) {
        return make_error("build context \"" + visible(context) +
                          "\": not \".\" nor a relative path without \"..\", \".\" or empty " +
                          "components");
    }
    std::string name;
    auto parent = open_dest_parent(dest, name);
    if (!parent) return parent.error();
    // First, whatever happens next: after an error there is no snapshot at
    // `dest`, neither a partial one nor an old one.
    if (auto cleared = remove_tree(parent->get(), name); !cleared) {
        return make_error("the old snapshot: " + cleared.error().message);
    }
    auto context_fd = open_context(project_dir, context);
    if (!context_fd) return context_fd.error();
    if (::mkdirat(parent->get(), name.c_str(), 0700) != 0) {
        return make_error(errno_text("cannot create " + visible(dest)));
    }
    Walk walk(budget, context);
    walk.out.dir = dest;
    Result<Snapshot> result = [&]() -> Result<Snapshot> {
        UniqueFd root(::openat(parent->get(), name.c_str(), kDirOpen));
        if (!root) return make_error(errno_text("cannot open " + visible(dest)));
        if (::fchmod(root.get(), 0700) != 0) return make_error(errno_text("chmod " + dest));
        return fill_confined(walk, context_fd->get(), root.get());
    }();
    if (!result) {
        if (auto removed = remove_tree(parent->get(), name); !removed) {
            return make_error(result.error().message + " (and the partial snapshot " +
                              visible(dest) + " could not be removed: " + removed.error().message +
                              ")");
        }
    }
    return result;
}

}  // namespace hb::exec
