#include "admin/install/git.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"
#include "admin/util/resolve_binary.hpp"
#include "ipc/unique_fd.hpp"

extern char** environ;

namespace hb::admin {
namespace {

constexpr std::size_t kMaxGitFile = 4096;      // a `gitdir:` file
constexpr std::size_t kMaxExclude = 1u << 20;  // info/exclude
constexpr std::size_t kMaxIndex = 128u << 20;  // the index

// A path the agent chose, fit for a terminal: every byte outside printable
// ASCII shown as \xNN.
std::string visible(std::string_view text) {
    std::string out;
    for (char ch : text) {
        auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c >= 0x7f || c == '\\') {
            static constexpr char kHex[] = "0123456789abcdef";
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        } else {
            out.push_back(ch);
        }
    }
    return out;
}

std::string errno_text(int err) {
    return std::strerror(err);
}

// Opens the directory `name` beneath `parent`, never through a symlink.
// nullopt when it does not exist.
Result<std::optional<UniqueFd>> open_dir_at(int parent, const std::string& name,
                                            const std::string& shown) {
    UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd) return std::optional<UniqueFd>(std::move(fd));
    const int err = errno;
    struct stat st {};
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return std::optional<UniqueFd>();
        return make_error("cannot open " + visible(shown) + ": " + errno_text(errno));
    }
    if (S_ISLNK(st.st_mode)) {
        return make_error(visible(shown) +
                          " is a symlink; hostbridge follows no symlink into or inside the "
                          "checkout's git directory, so it neither reads nor writes there");
    }
    if (!S_ISDIR(st.st_mode)) return make_error(visible(shown) + " is not a directory");
    return make_error("cannot open " + visible(shown) + ": " + errno_text(err));
}

// Reads the regular file `name` beneath `dir`, never through a symlink and
// never blocking on a FIFO. nullopt when it does not exist.
Result<std::optional<std::string>> read_file_at(int dir, const std::string& name,
                                                const std::string& shown, std::size_t max_bytes) {
    UniqueFd fd(
        ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
        if (errno == ENOENT) return std::optional<std::string>();
        if (errno == ELOOP) {
            return make_error(visible(shown) +
                              " is a symlink; hostbridge follows no symlink inside the "
                              "checkout's git directory, so it neither reads nor writes it");
        }
        return make_error("cannot open " + visible(shown) + ": " + errno_text(errno));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error("cannot stat " + visible(shown));
    if (!S_ISREG(st.st_mode)) return make_error(visible(shown) + " is not a regular file");
    if (static_cast<std::size_t>(st.st_size) > max_bytes) {
        return make_error(visible(shown) + " is larger than " + std::to_string(max_bytes) +
                          " bytes");
    }
    std::string content;
    char buf[65536];
    for (;;) {
        ssize_t got = ::read(fd.get(), buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return make_error("cannot read " + visible(shown) + ": " + errno_text(errno));
        if (got == 0) break;
        content.append(buf, static_cast<std::size_t>(got));
        if (content.size() > max_bytes) {
            return make_error(visible(shown) + " is larger than " + std::to_string(max_bytes) +
                              " bytes");
        }
    }
    return std::optional<std::string>(std::move(content));
}

// The checkout's git directory, opened from the top without following a
// symlink and without leaving the checkout.
struct GitDir {
    UniqueFd fd;
    std::string shown;  // its path, for messages
};

Result<UniqueFd> open_top(const std::string& top) {
    UniqueFd fd(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return make_error("cannot open " + visible(top) + ": " + errno_text(errno));
    return fd;
}

Result<GitDir> open_git_dir(const std::string& top) {
    auto top_fd = open_top(top);
    if (!top_fd) return top_fd.error();
    const std::string dot_git = top + "/.git";
    struct stat st {};
    if (::fstatat(top_fd->get(), ".git", &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return make_error("cannot find " + visible(dot_git) + ": " + errno_text(errno));
    }
    GitDir git;
    if (S_ISLNK(st.st_mode)) {
        return make_error(visible(dot_git) +
                          " is a symlink; hostbridge reads and writes no git files through a "
                          "symlink, which could lead outside the checkout");
    }
    if (S_ISDIR(st.st_mode)) {
        auto opened = open_dir_at(top_fd->get(), ".git", dot_git);
        if (!opened) return opened.error();
        if (!*opened) return make_error(visible(dot_git) + " disappeared");
        git.fd = std::move(**opened);
        git.shown = dot_git;
    } else if (S_ISREG(st.st_mode)) {
        // A linked worktree or a submodule: "gitdir: PATH".
        auto text = read_file_at(top_fd->get(), ".git", dot_git, kMaxGitFile);
        if (!text) return text.error();
        if (!*text) return make_error(visible(dot_git) + " disappeared");
        std::string line = (*text)->substr(0, (*text)->find('\n'));
        if (!line.empty() && line.back() == '\r') line.pop_back();
        constexpr std::string_view kPrefix = "gitdir: ";
        if (line.rfind(kPrefix, 0) != 0 || line.size() == kPrefix.size()) {
            return make_error(visible(dot_git) + " is a file but not a `gitdir: PATH` file");
        }
        const std::string target = line.substr(kPrefix.size());
        const std::string full = lexically_normal(target[0] == '/' ? target : top + "/" + target);
        if (full == top || !path_is_within(full, top)) {
            return make_error(visible(dot_git) + " is a file pointing to " + visible(target) +
                              ", outside the checkout; hostbridge reads and writes no git files "
                              "outside the checkout");
        }
        // One component at a time: a symlink anywhere on the way is refused.
        const std::string rel = full.substr(top.size() + 1);
        UniqueFd at = std::move(*top_fd);
        std::string shown = top;
        std::size_t pos = 0;
        while (pos <= rel.size()) {
            std::size_t slash = rel.find('/', pos);
            std::string name =
                rel.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
            shown += "/" + name;
            auto opened = open_dir_at(at.get(), name, shown);
            if (!opened) return opened.error();
            if (!*opened) {
                return make_error(visible(dot_git) + " points to " + visible(shown) +
                                  ", which does not exist");
            }
            at = std::move(**opened);
            if (slash == std::string::npos) break;
            pos = slash + 1;
        }
        git.fd = std::move(at);
        git.shown = shown;
    } else {
        return make_error(visible(dot_git) + " is neither a directory nor a `gitdir:` file");
    }
    // A linked worktree keeps info/ and the shared files in its common dir.
    struct stat common {};
    if (::fstatat(git.fd.get(), "commondir", &common, AT_SYMLINK_NOFOLLOW) == 0) {
        return make_error(visible(git.shown) +
                          " belongs to a linked worktree whose shared git files are elsewhere; "
                          "hostbridge reads and writes no git files outside the checkout");
    }
    return git;
}

// A private temp dir holding an empty repository of our own: git runs
// against it, so no configuration of the checkout's is ever read.
class PrivateRepo {
  public:
    static Result<PrivateRepo> create() {
        const char* base = std::getenv("TMPDIR");
        std::string templ = std::string(base != nullptr && base[0] == '/' ? base : "/tmp") +
                            "/hostbridge-git-XXXXXX";
        if (::mkdtemp(templ.data()) == nullptr) {
            return make_error("cannot create a temporary directory for git: " + errno_text(errno));
        }
        PrivateRepo repo(templ);
        for (const char* dir : {"/repo", "/repo/objects", "/repo/refs", "/repo/info"}) {
            if (::mkdir((templ + dir).c_str(), 0700) != 0) {
                return make_error("cannot create " + templ + dir + ": " + errno_text(errno));
            }
        }
        for (const auto& [name, content] :
             {std::pair<const char*, const char*>{"/repo/HEAD", "ref: refs/heads/main\n"},
              {"/repo/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"}}) {
            if (auto wrote = write_file_atomic(templ + name, content, 0600); !wrote) {
                return wrote.error();
            }
        }
        return repo;
    }
    PrivateRepo(PrivateRepo&& other) noexcept : path_(std::move(other.path_)) {
        other.path_.clear();
    }
    PrivateRepo(const PrivateRepo&) = delete;
    PrivateRepo& operator=(const PrivateRepo&) = delete;
    PrivateRepo& operator=(PrivateRepo&&) = delete;
    ~PrivateRepo() {
        if (!path_.empty()) (void)remove_tree(path_);
    }
    [[nodiscard]] std::string dir() const { return path_; }
    [[nodiscard]] std::string git_dir() const { return path_ + "/repo"; }

  private:
    explicit PrivateRepo(std::string path) : path_(std::move(path)) {}
    std::string path_;
};

// git against the private repository with `top` as its work tree: nothing
// from the checkout's git directory, the user's or the system's config, or
// our environment's GIT_* variables. The -c settings only restate defaults
// (the private config is empty) so that no future source of config can
// name a program.
Result<RunResult> sealed_git(const PrivateRepo& repo, const std::string& top,
                             const std::vector<std::string>& args) {
    auto found = find_on_path("git", resolve_env_from_process().path_var);
    if (!found) return make_error("git is not installed (not on PATH)");
    std::vector<std::string> argv = {*found,
                                     "--no-pager",
                                     "--no-replace-objects",
                                     "-c",
                                     "core.fsmonitor=false",
                                     "-c",
                                     "core.hooksPath=/dev/null",
                                     "-c",
                                     "core.pager=cat",
                                     "-c",
                                     "core.excludesFile=/dev/null",
                                     "-c",
                                     "core.attributesFile=/dev/null",
                                     "-c",
                                     "core.untrackedCache=false",
                                     "-c",
                                     "protocol.allow=never"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.timeout = std::chrono::seconds(10);
    options.cwd = repo.dir();
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view entry(*e);
        if (entry.rfind("GIT_", 0) == 0) {
            options.env_unset.emplace_back(entry.substr(0, entry.find('=')));
        }
    }
    options.env_set = {"GIT_DIR=" + repo.git_dir(),
                       "GIT_WORK_TREE=" + top,
                       "GIT_CONFIG_NOSYSTEM=1",
                       "GIT_CONFIG_SYSTEM=/dev/null",
                       "GIT_CONFIG_GLOBAL=/dev/null",
                       "GIT_ATTR_NOSYSTEM=1",
                       "GIT_OPTIONAL_LOCKS=0",
                       "GIT_TERMINAL_PROMPT=0",
                       "GIT_PAGER=cat",
                       "PAGER=cat",
                       "HOME=" + repo.dir(),
                       "XDG_CONFIG_HOME=" + repo.dir(),
                       "LC_ALL=C"};
    auto ran = run_process(argv, options);
    if (!ran) return ran.error();
    if (ran->timed_out) return make_error("git did not answer within 10 seconds");
    return ran;
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

// The checkout's info/exclude, or why it cannot be read from inside the
// checkout without following a symlink.
struct ExcludeRead {
    std::optional<std::string> content;  // nullopt: none
    std::optional<Error> unreadable;
};

ExcludeRead read_exclude(const std::string& top) {
    ExcludeRead result;
    auto git = open_git_dir(top);
    if (!git) {
        result.unreadable = git.error();
        return result;
    }
    auto info = open_dir_at(git->fd.get(), "info", git->shown + "/info");
    if (!info) {
        result.unreadable = info.error();
        return result;
    }
    if (!*info) return result;
    auto content =
        read_file_at((*info)->get(), "exclude", git->shown + "/info/exclude", kMaxExclude);
    if (!content) {
        result.unreadable = content.error();
        return result;
    }
    result.content = std::move(*content);
    return result;
}

}  // namespace

Result<void> git_check_top(const std::string& dir) {
    struct stat st {};
    if (::lstat((dir + "/.git").c_str(), &st) == 0) return {};
    // As git finds its repository: the nearest parent with a `.git` entry.
    std::string up = dir;
    while (up.size() > 1) {
        up = up.substr(0, up.rfind('/'));
        if (up.empty()) up = "/";
        if (::lstat((up == "/" ? std::string("/.git") : up + "/.git").c_str(), &st) == 0) {
            return make_error(visible(dir) + " is not the top of its git work tree (the top is " +
                              visible(up) + "); pass --project-dir " + visible(up));
        }
    }
    return make_error(visible(dir) +
                      " is not in a git work tree (it has no .git, nor has any "
                      "directory above it)");
}

Result<bool> git_is_ignored(const std::string& top, const std::string& rel) {
    // git answers nothing for a path beyond a symlink; say which one it is.
    for (std::size_t end = rel.find('/');; end = rel.find('/', end + 1)) {
        const std::string prefix = top + "/" + rel.substr(0, end);
        struct stat st {};
        if (::lstat(prefix.c_str(), &st) != 0) break;
        if (S_ISLNK(st.st_mode)) {
            return make_error(visible(prefix) +
                              " is a symlink; the spool path must not contain any");
        }
        if (end == std::string::npos) break;
    }
    auto repo = PrivateRepo::create();
    if (!repo) return repo.error();
    ExcludeRead exclude = read_exclude(top);
    if (exclude.content) {
        auto wrote = write_file_atomic(repo->git_dir() + "/info/exclude", *exclude.content, 0600);
        if (!wrote) return wrote.error();
    }
    // --no-index: the checkout's index is not read (nor refreshed).
    auto ran = sealed_git(*repo, top, {"check-ignore", "--no-index", "-q", "--", rel + "/"});
    if (!ran) return ran.error();
    if (ran->exit_code != 0 && ran->exit_code != 1) {
        return make_error("git check-ignore failed: " + visible(first_line(ran->err)));
    }
    if (ran->exit_code == 0) return true;
    // A .gitignore rule outranks info/exclude, so without one the exclude
    // we could not read decides.
    if (exclude.unreadable) {
        return make_error(exclude.unreadable->message + ". No .gitignore in the checkout ignores " +
                          "the spool, so add the line /" + rel + "/ to " + visible(top) +
                          "/.gitignore (or to the repository's info/exclude yourself)");
    }
    return false;
}

Result<std::string> git_exclude(const std::string& top, const std::string& rel) {
    auto git = open_git_dir(top);
    if (!git) return git.error();
    const std::string info_shown = git->shown + "/info";
    if (::mkdirat(git->fd.get(), "info", 0755) != 0 && errno != EEXIST) {
        return make_error("cannot create " + visible(info_shown) + ": " + errno_text(errno));
    }
    auto info = open_dir_at(git->fd.get(), "info", info_shown);
    if (!info) return info.error();
    if (!*info) return make_error(visible(info_shown) + " disappeared");
    const int info_fd = (*info)->get();
    const std::string shown = info_shown + "/exclude";
    auto old = read_file_at(info_fd, "exclude", shown, kMaxExclude);
    if (!old) return old.error();
    std::string content = old->value_or("");
    if (!content.empty() && content.back() != '\n') content.push_back('\n');
    content += "# hostbridge spool (added by hostbridge install)\n/" + rel + "/\n";

    // A fresh file beside it, renamed over it: a symlink or hard link
    // planted as `exclude` is replaced, never written through.
    std::mt19937_64 rng{std::random_device{}()};
    const std::string temp = ".exclude.hostbridge-" + std::to_string(rng());
    UniqueFd out(::openat(info_fd, temp.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!out)
        return make_error("cannot write in " + visible(info_shown) + ": " + errno_text(errno));
    auto fail = [&](const std::string& what) -> Error {
        const int err = errno;
        ::unlinkat(info_fd, temp.c_str(), 0);
        return make_error(what + " " + visible(shown) + ": " + errno_text(err));
    };
    std::size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(out.get(), content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return fail("cannot write");
        done += static_cast<std::size_t>(n);
    }
    if (::fchmod(out.get(), 0644) != 0 || ::fsync(out.get()) != 0) return fail("cannot write");
    out.reset();
    if (::renameat(info_fd, temp.c_str(), info_fd, "exclude") != 0) return fail("cannot replace");
    return shown;
}

Result<bool> git_tracks_under(const std::string& top, const std::string& rel) {
    auto git = open_git_dir(top);
    if (!git) return git.error();
    auto index = read_file_at(git->fd.get(), "index", git->shown + "/index", kMaxIndex);
    if (!index) return index.error();
    if (!*index) return false;  // no index: nothing is tracked
    auto repo = PrivateRepo::create();
    if (!repo) return repo.error();
    auto wrote = write_file_atomic(repo->git_dir() + "/index", **index, 0600);
    if (!wrote) return wrote.error();
    auto ran = sealed_git(*repo, top, {"ls-files", "--", rel});
    if (!ran) return ran.error();
    if (!ran->ok()) return make_error("git ls-files failed: " + visible(first_line(ran->err)));
    return !ran->out.empty();
}

}  // namespace hb::admin
