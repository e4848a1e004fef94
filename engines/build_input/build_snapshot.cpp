#include "engines/build_input/build_snapshot.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <thread>
#include <utility>
#include <vector>

#include "executor/parser_client.hpp"
#include "executor/run_tree.hpp"
#include "ipc/fd_passing.hpp"
#include "ipc/path_component.hpp"
#include "ipc/sys.hpp"

namespace hb::exec {
namespace {

using sys::errno_text;
using sys::file_type_text;

constexpr int kDirOpen = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kPathOpen = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kOpenat2Attempts = 64;
// A bound on a hung copy only: 1 GiB (the default build.max_bytes) copied by
// read/write takes seconds; sanitized builds run several times slower.
#ifdef HB_SANITIZED
constexpr int kCopyTimeoutMs = 900000;
#else
constexpr int kCopyTimeoutMs = 300000;
#endif

// Names in messages as the audit log shows them (ipc/sys.hpp).
std::string visible(std::string_view raw) {
    return sys::escape_unprintable(raw);
}

// A path below the context as the sentences name it: from the project dir.
struct Shown {
    explicit Shown(const std::string& context)
        : prefix(context == "." ? std::string() : context + "/"), root(context) {}
    const std::string prefix;
    const std::string root;
    [[nodiscard]] Error fail(const std::string& rel, const std::string& why) const {
        return make_error("build context " + visible(rel.empty() ? root : prefix + rel) + ": " +
                          why);
    }
};

struct Link {
    std::string path;
    std::string target;
};

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

// The snapshot's links, listed from the finished tree (the copy is not
// trusted to list them), each with a text that is not empty, not absolute
// and not climbing above the root; anything but a directory, a regular file
// or a link is refused.
Result<void> find_links(const Shown& shown, std::vector<Link>& links, int dir_fd,
                        const std::string& rel, int depth) {
    if (depth > kSnapshotMaxDepth + 1) return shown.fail(rel, "too deep in its copy");
    std::vector<std::string> names;
    if (!sys::list_dir(dir_fd, names)) return shown.fail(rel, errno_text("cannot list its copy"));
    for (const std::string& name : names) {
        const std::string child = rel.empty() ? name : rel + "/" + name;
        struct stat st {};
        if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            return shown.fail(child, errno_text("fstat its copy"));
        }
        if (S_ISLNK(st.st_mode)) {
            char buffer[PATH_MAX];
            const ssize_t n = ::readlinkat(dir_fd, name.c_str(), buffer, sizeof buffer);
            if (n < 0 || n >= PATH_MAX)
                return shown.fail(child, errno_text("cannot read its copy"));
            Link link{child, std::string(buffer, static_cast<std::size_t>(n))};
            if (link.target.empty()) return shown.fail(child, "an empty symlink");
            if (link.target.front() == '/' || climbs_out(child, link.target)) {
                return shown.fail(child,
                                  "a symlink to " + visible(link.target) + ", outside the context");
            }
            links.push_back(std::move(link));
        } else if (S_ISDIR(st.st_mode)) {
            UniqueFd sub(::openat(dir_fd, name.c_str(), kDirOpen));
            if (!sub) return shown.fail(child, errno_text("cannot open its copy"));
            if (auto found = find_links(shown, links, sub.get(), child, depth + 1); !found)
                return found;
        } else if (!S_ISREG(st.st_mode)) {
            return shown.fail(child, file_type_text(st.st_mode) +
                                         "; a build context holds only regular files, " +
                                         "directories and symlinks");
        }
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
Result<void> check_links(const Shown& shown, const std::vector<Link>& links, int root_fd) {
    for (const Link& link : links) {
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
                return shown.fail(
                    link.path, "a symlink to " + target + ", which resolves outside the context");
            case ELOOP:
                return shown.fail(
                    link.path,
                    "a symlink to " + target + ", which loops (or passes through too many links)");
            case ENOSYS:
            case E2BIG:
            case EPERM:
                return shown.fail(link.path,
                                  "a symlink to " + target +
                                      ", which cannot be checked: this kernel offers no " +
                                      "openat2 (Linux 5.6 or later)");
            default:
                return shown.fail(link.path, errno_text("checking the symlink to " + target, err));
        }
    }
    return {};
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
                return make_error(shown + ": " + file_type_text(st.st_mode) + ", not a directory");
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

// How a copy that sent no answer ended: it has closed its socket, so it is
// exiting; a copy that lingers past a second is killed (the guard).
std::string how_it_ended(ParserChild& child) {
    for (int waited = 0; waited < 100; ++waited) {
        int status = 0;
        const pid_t done = ::waitpid(child.pid(), &status, WNOHANG);
        if (done == child.pid()) {
            child.release();
            if (WIFSIGNALED(status))
                return " (killed by signal " + std::to_string(WTERMSIG(status)) + ")";
            if (WEXITSTATUS(status) == 127) return " (exit 127: it could not be started)";
            return " (exit " + std::to_string(WEXITSTATUS(status)) + ")";
        }
        if (done < 0 && errno != EINTR) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "";
}

// One run of the copier: the request and the context's fd, the root's fd,
// one answer checked against the budget. The child is killed and reaped
// before this returns, whatever happened.
Result<SnapshotCounts> run_copier(const std::string& copier, int context_fd, int root_fd,
                                  const SnapshotRequest& request) {
    const std::string name = "the snapshot copy " + visible(copier);
    // exec's failure is only an exit code in the child: say why here.
    if (::access(copier.c_str(), X_OK) != 0) {
        return make_error(errno_text(name + " cannot be run (bridge.json's \"snapshot\")"));
    }
    auto spawned = spawn_parser(copier, nullptr, "hostbridge-snapshot");
    if (!spawned) return make_error("cannot start " + name + ": " + spawned.error().message);
    const int sock = spawned->sock.get();
    const std::uint8_t tag[] = {kSnapshotRootTag};
    if (!send_message_with_fd(sock, encode_snapshot_request(request), context_fd) ||
        !send_message_with_fd(sock, tag, root_fd)) {
        return make_error(name + " did not take the request" + how_it_ended(spawned->child));
    }
    auto received = recv_message_timeout(sock, kSnapshotAnswerMax, FdPolicy::None, kCopyTimeoutMs);
    if (!received) {
        return make_error(name + " answered out of shape: " + received.error().message);
    }
    switch (received->kind) {
        case Received::Kind::Timeout:
            return make_error(name + " did not answer within " +
                              std::to_string(kCopyTimeoutMs / 1000) + " s");
        case Received::Kind::Eof:
            return make_error(name + " exited without an answer" + how_it_ended(spawned->child));
        case Received::Kind::Message:
            break;
    }
    return decode_snapshot_answer(received->bytes, request.budget);
}

}  // namespace

Result<Snapshot> take_snapshot(const std::string& copier, const std::string& project_dir,
                               const std::string& context, const std::string& dest,
                               const SnapshotBudget& budget, const std::string& left_out) {
    if (context != "." && !is_plain_relative(context)) {
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
    Result<Snapshot> result = [&]() -> Result<Snapshot> {
        UniqueFd root(::openat(parent->get(), name.c_str(), kDirOpen));
        if (!root) return make_error(errno_text("cannot open " + visible(dest)));
        if (::fchmod(root.get(), 0700) != 0) return make_error(errno_text("chmod " + dest));
        SnapshotRequest request{budget, context};
        // By its identity: the copy is given no path. A spool that cannot be
        // opened leaves nothing out (there is then nothing of it to copy).
        struct stat spool {};
        if (UniqueFd d(::open(left_out.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            !left_out.empty() && d && ::fstat(d.get(), &spool) == 0) {
            request.skip_dev = spool.st_dev;
            request.skip_ino = spool.st_ino;
        }
        auto counts = run_copier(copier, context_fd->get(), root.get(), request);
        if (!counts) return counts.error();
        const Shown shown(context);
        std::vector<Link> links;
        if (auto found = find_links(shown, links, root.get(), "", 0); !found) return found.error();
        if (auto checked = check_links(shown, links, root.get()); !checked) return checked.error();
        Snapshot snapshot;
        static_cast<SnapshotCounts&>(snapshot) = std::move(*counts);
        snapshot.dir = dest;
        return snapshot;
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
