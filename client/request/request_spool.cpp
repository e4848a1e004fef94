#include "client/request/request_spool.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

namespace hb::client {
namespace {

// Generous: the host caps output at 16 KiB, which JSON escaping can grow
// about sixfold.
constexpr off_t kMaxResponseBytes = 4 * 1024 * 1024;

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string errno_text() {
    return std::strerror(errno);
}

// Never through a link: a client run on the host must not create or rename
// a file outside the checkout because the agent made tmp/ or requests/ a
// symlink (the executor's pinned dirfds, executor/spool.cpp, do the same).
UniqueFd open_dir_at(int dirfd, const char* name) {
    return UniqueFd(::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// The nearest directory from the current one upwards with a `.git` entry
// (a directory, or a file for worktrees and submodules), as git finds its
// top level.
std::optional<std::string> git_top_level() {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::current_path(ec);
    if (ec) return std::nullopt;
    for (;;) {
        struct stat st {};
        if (::lstat((dir / ".git").c_str(), &st) == 0) return dir.string();
        if (!dir.has_relative_path()) return std::nullopt;  // reached "/"
        dir = dir.parent_path();
    }
}

// An install's spool on the host: the project dir (the directories above
// it are the person's own path, and install recorded it canonical), then
// each component beneath it on the fd of the one before, never through a
// link: `untracked/` is the agent's, and a link there would send the
// person's request into another project's spool.
Result<UniqueFd> open_beneath_project(const HostInstall& install) {
    UniqueFd dir(
        ::open(install.project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir)
        return make_error("cannot open the project directory " + install.project_dir +
                          " of install " + install.slug + ": " + errno_text());
    std::string at = install.project_dir;
    const std::string rel = install.spool_dir.substr(install.project_dir.size() + 1);
    for (std::size_t start = 0; start < rel.size();) {
        const std::size_t slash = std::min(rel.find('/', start), rel.size());
        const std::string part = rel.substr(start, slash - start);
        at += "/" + part;
        UniqueFd next = open_dir_at(dir.get(), part.c_str());
        if (!next) {
            if (errno == ELOOP || errno == ENOTDIR)
                return make_error(at + " is a symlink or not a directory; refusing the spool " +
                                  install.spool_dir + " (the checkout is the agent's)");
            return make_error("cannot open " + at + ": " + errno_text());
        }
        dir = std::move(next);
        start = slash + 1;
    }
    return dir;
}

const char* env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

bool is_spool(const std::string& dir) {
    return is_dir(dir + "/requests") && is_dir(dir + "/tmp") && is_dir(dir + "/responses");
}

Result<SpoolPlace> find_spool(const std::optional<std::string>& project_dir) {
    if (auto root = host_installs_root()) {
        auto install = locate_host_install(*root, project_dir);
        if (!install) return install.error();
        return SpoolPlace{install->spool_dir, std::move(*install)};
    }
    if (project_dir) {
        std::string spool = *project_dir + "/" + kDefaultSpoolRel;
        if (is_spool(spool)) return SpoolPlace{spool, std::nullopt};
        return make_error(spool +
                          " is not a hostbridge spool; if this install put it elsewhere "
                          "(install --spool), set HOSTBRIDGE_SPOOL to it instead");
    }
    if (const char* spool = env("HOSTBRIDGE_SPOOL")) {
        if (is_spool(spool)) return SpoolPlace{spool, std::nullopt};
        return make_error(std::string("HOSTBRIDGE_SPOOL=") + spool +
                          " is not a hostbridge spool (no requests/, tmp/ and responses/ in it)");
    }
    std::string tried;
    if (const char* repo_root = env("REPO_ROOT")) {
        std::string spool = std::string(repo_root) + "/" + kDefaultSpoolRel;
        if (is_spool(spool)) return SpoolPlace{spool, std::nullopt};
        tried = spool;
    }
    if (auto top = git_top_level()) {
        std::string spool = *top + "/" + kDefaultSpoolRel;
        if (is_spool(spool)) return SpoolPlace{spool, std::nullopt};
        tried += (tried.empty() ? "" : ", ") + spool;
    }
    return make_error("no hostbridge spool found" +
                      (tried.empty() ? "" : " (tried " + tried + ")") +
                      "; set HOSTBRIDGE_SPOOL to the spool directory or pass --project-dir");
}

Result<Spool> Spool::open(const SpoolPlace& place) {
    const std::string& path = place.path;
    UniqueFd root;
    if (place.install) {
        auto beneath = open_beneath_project(*place.install);
        if (!beneath) return beneath.error();
        root = std::move(*beneath);
    } else {
        // The spool dir itself is opened no-follow too.
        root.reset(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
    if (!root) {
        struct stat st {};
        if ((errno == ELOOP || errno == ENOTDIR) && ::lstat(path.c_str(), &st) == 0 &&
            S_ISLNK(st.st_mode)) {
            return make_error("the spool " + path + " is a symlink; refusing it");
        }
        return make_error("cannot open the spool " + path + ": " + errno_text());
    }
    Spool spool;
    spool.path_ = path;
    for (auto [fd, name] : {std::pair{&spool.tmp_, "tmp"},
                            {&spool.requests_, "requests"},
                            {&spool.responses_, "responses"}}) {
        *fd = open_dir_at(root.get(), name);
        if (!*fd) {
            if (errno == ELOOP || errno == ENOTDIR) {
                return make_error("the spool's " + std::string(name) + "/ in " + path +
                                  " is not a directory (a symlink?); refusing it");
            }
            return make_error("cannot open " + std::string(name) + "/ in " + path + ": " +
                              errno_text());
        }
    }
    return spool;
}

Result<void> Spool::publish(const RequestMessage& message) const {
    const std::string temp = message.name + "." + std::to_string(::getpid()) + ".part";
    UniqueFd fd(::openat(tmp_.get(), temp.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd) return make_error("cannot create a file in " + path_ + "/tmp: " + errno_text());
    // Whatever the umask: the request holds nothing secret, and a host
    // running as another uid must be able to read it.
    bool ok = ::fchmod(fd.get(), 0644) == 0;
    std::string_view rest = message.body;
    while (ok && !rest.empty()) {
        ssize_t n = ::write(fd.get(), rest.data(), rest.size());
        if (n < 0 && errno == EINTR) continue;
        ok = n > 0;
        if (ok) rest.remove_prefix(static_cast<std::size_t>(n));
    }
    ok = ::close(fd.release()) == 0 && ok;
    if (ok && ::renameat(tmp_.get(), temp.c_str(), requests_.get(), message.name.c_str()) == 0)
        return {};
    std::string why = errno_text();
    ::unlinkat(tmp_.get(), temp.c_str(), 0);
    return make_error("cannot publish into " + path_ + "/requests: " + why);
}

bool Spool::withdraw(const std::string& name) const {
    const std::string aside = name + "." + std::to_string(::getpid()) + ".withdrawn";
    // The rename either wins against the host's claim (also a rename) or
    // fails: the request cannot be both withdrawn and run.
    if (::renameat(requests_.get(), name.c_str(), tmp_.get(), aside.c_str()) != 0) return false;
    ::unlinkat(tmp_.get(), aside.c_str(), 0);
    return true;
}

Result<std::optional<std::string>> Spool::read_response(const std::string& name) const {
    const std::string file = response_name(name);
    UniqueFd fd(::openat(responses_.get(), file.c_str(),
                         O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd) {
        if (errno == ENOENT) return std::optional<std::string>{};
        return make_error("cannot open responses/" + file + ": " + errno_text());
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxResponseBytes)
        return make_error("responses/" + file + " is not a plausible response file");
    std::string text;
    text.resize(static_cast<std::size_t>(st.st_size) + 1);
    std::size_t used = 0;
    for (;;) {
        if (used == text.size()) text.resize(text.size() * 2);
        ssize_t n = ::read(fd.get(), text.data() + used, text.size() - used);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return make_error("cannot read responses/" + file + ": " + errno_text());
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
        if (used > static_cast<std::size_t>(kMaxResponseBytes))
            return make_error("responses/" + file + " is too large");
    }
    text.resize(used);
    return std::optional<std::string>(std::move(text));
}

}  // namespace hb::client
