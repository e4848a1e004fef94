#include "executor/run_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "common/integrity_gate.hpp"
#include "common/sha256.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {

using common::FileState;
using common::open_pinned;
using common::Opened;
using common::sha256_hex;

namespace {

// An approved copy larger than this is refused rather than held in memory.
constexpr std::size_t kMaxTreeFileBytes = 64u << 20;
constexpr int kDirOpen = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr char kStaging[] = ".staging";

using sys::errno_text;

bool is_inside(std::string_view path, std::string_view dir) {
    return path.size() > dir.size() + 1 && path.starts_with(dir) && path[dir.size()] == '/';
}

std::string basename_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// mkdir -p of `path` (relative, no empty component) beneath `at`, 0700 for
// what it creates; returns the last directory. Links are followed only in
// the components above the last when `follow_above_last`; errors name
// `shown_prefix` + the path so far.
Result<UniqueFd> make_dirs_beneath(int at, const std::string& path, bool follow_above_last,
                                   const std::string& shown_prefix) {
    UniqueFd current;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = path.find('/', start);
        const bool last = slash == std::string::npos;
        const std::string part = path.substr(start, last ? std::string::npos : slash - start);
        const std::string shown = shown_prefix + path.substr(0, slash);
        if (::mkdirat(at, part.c_str(), 0700) != 0 && errno != EEXIST) {
            return make_error(errno_text("cannot create " + shown));
        }
        const int flags = last || !follow_above_last ? kDirOpen : kDirOpen & ~O_NOFOLLOW;
        UniqueFd next(::openat(at, part.c_str(), flags));
        if (!next) return make_error(errno_text("cannot open " + shown));
        current = std::move(next);
        at = current.get();
        if (last) return current;
        start = slash + 1;
    }
}

// The bytes of one approved (or rendered) file beneath the state dir, read
// without following a link, checked against the pin before anyone sees them.
Result<std::string> verified_bytes(int state_fd, const std::string& rel, const std::string& want) {
    Opened opened = open_pinned(state_fd, rel);
    if (!opened.fd) {
        return make_error(rel + " cannot be opened" +
                          (opened.state == FileState::Absent ? std::string(" (missing)")
                                                             : " (" + opened.error + ")"));
    }
    struct stat st {};
    if (::fstat(opened.fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return make_error(rel + " is not a regular file");
    }
    std::string bytes;
    if (!sys::read_all(opened.fd.get(), bytes, kMaxTreeFileBytes))
        return make_error(errno_text("cannot read " + rel));
    if (bytes.size() > kMaxTreeFileBytes) return make_error(rel + " is larger than 64 MiB");
    if (sha256_hex(bytes) != want) {
        return make_error(rel + " does not match its pin (the host's copy changed after " +
                          "`hostbridge approve`; run it again)");
    }
    return bytes;
}

// Writes `bytes` as `rel` beneath `root`, creating the directories on the way
// (0700); every component is opened without following a link.
Result<void> write_in_tree(int root, const std::string& rel, const std::string& bytes,
                           mode_t mode) {
    UniqueFd parent;
    int at = root;
    const std::size_t slash = rel.rfind('/');
    if (slash != std::string::npos) {
        auto made = make_dirs_beneath(root, rel.substr(0, slash), /*follow_above_last=*/false, "");
        if (!made) return made.error();
        parent = std::move(*made);
        at = parent.get();
    }
    const std::string leaf = slash == std::string::npos ? rel : rel.substr(slash + 1);
    UniqueFd file(
        ::openat(at, leaf.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
    if (!file) return make_error(errno_text("cannot create " + rel));
    if (!sys::write_all(file.get(), bytes)) return make_error(errno_text("cannot write " + rel));
    // Explicit, whatever the umask.
    if (::fchmod(file.get(), mode) != 0) return make_error(errno_text("chmod " + rel));
    return {};
}

}  // namespace

// mkdir -p of run_dir. The components above the last are the host user's
// (common/config.cpp keeps run_dir out of the project); the last must be a
// directory of ours that nobody else can enter.
Result<UniqueFd> open_run_dir(const std::string& run_dir) {
    UniqueFd root(::open("/", kDirOpen & ~O_NOFOLLOW));
    if (!root) return make_error(errno_text("open /"));
    auto made = make_dirs_beneath(root.get(), run_dir.substr(1), /*follow_above_last=*/true, "/");
    if (!made) return made.error();
    UniqueFd at = std::move(*made);
    struct stat st {};
    if (::fstat(at.get(), &st) != 0) return make_error(errno_text("fstat " + run_dir));
    if (st.st_uid != ::geteuid()) {
        return make_error(run_dir + " belongs to uid " + std::to_string(st.st_uid) +
                          ", not to us; refusing to run commands from it");
    }
    if ((st.st_mode & 077) != 0 && ::fchmod(at.get(), 0700) != 0) {
        return make_error(errno_text("chmod 0700 " + run_dir));
    }
    return at;
}

std::string run_tree_dir(const Config& config) {
    return config.run_dir + "/" + basename_of(config.project_dir);
}

std::string in_run_tree(const Config& config, std::string_view path) {
    if (!is_inside(path, config.project_dir)) return {};
    return run_tree_dir(config) + std::string(path.substr(config.project_dir.size()));
}

Result<void> build_run_tree(const Config& config) {
    if (config.run_dir.empty()) return make_error("bridge.json names no run_dir");
    auto run_dir = open_run_dir(config.run_dir);
    if (!run_dir) return run_dir.error();
    const int run_fd = run_dir->get();
    const std::string name = basename_of(config.project_dir);

    UniqueFd state(::open(config.state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!state) return make_error(errno_text("cannot open the state dir " + config.state_dir));

    std::map<std::string, std::string> rendered;  // path -> sha256
    for (const TcbPin& pin : config.rendered) rendered[pin.path] = pin.sha256.value_or("");
    // A compose install's file (the backend's only one) runs from its
    // rendered copy.
    if (!config.backend.file.empty()) {
        const std::string rel = config.backend.file.substr(config.project_dir.size() + 1);
        if (!rendered.contains(rel)) {
            return make_error(rel +
                              " has no rendered copy for the engine; run `hostbridge approve`");
        }
    }
    std::string script;  // the backend's command when the checkout holds it: executable
    if (is_inside(config.backend.argv.front(), config.project_dir)) {
        script = config.backend.argv.front().substr(config.project_dir.size() + 1);
    }

    if (auto cleared = remove_tree(run_fd, kStaging); !cleared) return cleared;
    if (::mkdirat(run_fd, kStaging, 0700) != 0) {
        return make_error(errno_text("cannot create " + config.run_dir + "/" + kStaging));
    }
    UniqueFd staging(::openat(run_fd, kStaging, kDirOpen));
    if (!staging) return make_error(errno_text("cannot open the staging tree"));

    // Rendered files first: they replace the approved copy of the same path.
    std::map<std::string, std::pair<std::string, std::string>> sources;  // path -> (src, sha)
    for (const TcbPin& pin : config.tcb) {
        if (pin.sha256) sources[pin.path] = {"approved/" + pin.path, *pin.sha256};
    }
    for (const auto& [path, sha] : rendered) sources[path] = {"rendered/" + path, sha};
    bool script_written = script.empty();
    for (const auto& [path, source] : sources) {
        auto bytes = verified_bytes(state.get(), source.first, source.second);
        if (!bytes) return make_error("the approved copy " + bytes.error().message);
        const bool executable = path == script;
        script_written = script_written || executable;
        if (auto written = write_in_tree(staging.get(), path, *bytes, executable ? 0700 : 0600);
            !written) {
            return written;
        }
    }
    if (!script_written) {
        return make_error(script + " is run by the stack backend but not pinned; run " +
                          "`hostbridge install` again");
    }

    // The swap is atomic: a command never sees a half-built tree.
    if (::renameat2(run_fd, kStaging, run_fd, name.c_str(), RENAME_EXCHANGE) == 0) {
        return remove_tree(run_fd, kStaging);
    }
    if (errno != ENOENT) return make_error(errno_text("cannot replace the run tree"));
    if (::renameat2(run_fd, kStaging, run_fd, name.c_str(), RENAME_NOREPLACE) != 0) {
        return make_error(errno_text("cannot install the run tree"));
    }
    return {};
}

Result<void> check_checkout_paths(const Config& config) {
    if (config.checkout_paths.empty()) return {};
    UniqueFd project(::open(config.project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!project) return make_error(errno_text("cannot open " + config.project_dir));
    for (const std::string& path : config.checkout_paths) {
        if (path == ".") continue;
        // A directory (bind source, build context) or a file (bind source).
        Opened opened = open_pinned(project.get(), path, /*directory=*/true);
        if (!opened.fd && opened.state == FileState::NotRegular) {
            opened = open_pinned(project.get(), path, /*directory=*/false);
        }
        if (opened.fd || opened.state == FileState::Absent) continue;
        if (opened.state == FileState::Symlink) {
            return make_error(path + " (a bind source or build context) is a symlink or lies " +
                              "under one");
        }
        return make_error(path + " (a bind source or build context) cannot be opened" +
                          (opened.error.empty() ? std::string() : " (" + opened.error + ")"));
    }
    return {};
}

std::vector<std::string> run_tree_environment(const Config& config) {
    return {"HOSTBRIDGE_PROJECT_DIR=" + config.project_dir,
            "HOSTBRIDGE_RUN_DIR=" + run_tree_dir(config)};
}

namespace {

// remove_tree, with `shown` the path the errors name.
Result<void> remove_beneath(int parent_fd, const std::string& name, const std::string& shown) {
    UniqueFd dir(::openat(parent_fd, name.c_str(), kDirOpen));
    if (!dir) {
        if (errno == ENOENT) return {};
        if (errno == ENOTDIR || errno == ELOOP) {
            if (::unlinkat(parent_fd, name.c_str(), 0) == 0 || errno == ENOENT) return {};
        }
        return make_error(errno_text("cannot remove " + sys::escape_unprintable(shown)));
    }
    struct stat st {};
    if (::fstat(dir.get(), &st) != 0)
        return make_error(errno_text("fstat " + sys::escape_unprintable(shown)));
    if ((st.st_mode & 0700) != 0700 && ::fchmod(dir.get(), (st.st_mode & 07777) | 0700) != 0) {
        return make_error(
            errno_text("cannot make " + sys::escape_unprintable(shown) + " removable"));
    }
    std::vector<std::string> names;
    if (!sys::list_dir(dir.get(), names)) {
        return make_error(errno_text("cannot list " + sys::escape_unprintable(shown)));
    }
    for (const std::string& child : names) {
        // unlinkat without AT_REMOVEDIR never follows a link; a directory
        // answers EISDIR.
        if (::unlinkat(dir.get(), child.c_str(), 0) == 0 || errno == ENOENT) continue;
        if (errno != EISDIR) {
            return make_error(
                errno_text("cannot remove " + sys::escape_unprintable(shown + "/" + child)));
        }
        if (auto removed = remove_beneath(dir.get(), child, shown + "/" + child); !removed) {
            return removed;
        }
    }
    if (::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        return make_error(errno_text("cannot remove " + sys::escape_unprintable(shown)));
    }
    return {};
}

}  // namespace

Result<void> remove_tree(int parent_fd, const std::string& name) {
    return remove_beneath(parent_fd, name, name);
}

}  // namespace hb::exec
