#include "admin/install/spool_setup.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "admin/util/fs_util.hpp"
#include "ipc/path_component.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {
namespace {

constexpr gid_t kNoGroup = static_cast<gid_t>(-1);

// Opens (creating when missing) the directory `name` beneath `parent`,
// never through a symlink, and gives it `mode` (and `gid`, unless kNoGroup).
Result<UniqueFd> ensure_dir_at(int parent, const std::string& name, const std::string& shown,
                               mode_t mode, gid_t gid, std::vector<SpoolChange>& changes) {
    bool created = false;
    if (::mkdirat(parent, name.c_str(), 0700) == 0) {
        created = true;
    } else if (errno != EEXIST) {
        return make_error("cannot create " + shown + ": " + std::strerror(errno));
    }
    UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        struct stat st {};
        if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
            return make_error(shown + " is a symlink; the spool path must not contain any");
        }
        return make_error(shown + " is not a directory");
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error("cannot stat " + shown);
    if (st.st_uid != ::geteuid()) {
        return make_error(shown + " is owned by uid " + std::to_string(st.st_uid) +
                          ", not by you; remove it and run install again");
    }
    if (gid != kNoGroup && st.st_gid != gid) {
        if (::fchown(fd.get(), static_cast<uid_t>(-1), gid) != 0) {
            return make_error("cannot give " + shown + " to group " + std::to_string(gid) +
                              " (you must be a member of it): " + std::strerror(errno));
        }
        if (!created) changes.push_back({shown, "group set to " + std::to_string(gid)});
    }
    if ((st.st_mode & 07777) != mode || gid != kNoGroup) {
        // fchown clears setgid: always set the mode after it.
        if (::fchmod(fd.get(), mode) != 0) {
            return make_error("cannot set the mode of " + shown + ": " + std::strerror(errno));
        }
        if (!created && (st.st_mode & 07777) != mode) {
            changes.push_back({shown, "mode set to " + mode_text(mode)});
        }
    }
    if (created) changes.push_back({shown, "created"});
    return fd;
}

// The components of a spool path from the top down, as ensure_spool and
// open_spool walk them (a trailing slash adds none).
std::vector<std::string> components(const std::string& rel) {
    std::vector<std::string> parts;
    std::size_t pos = 0;
    while (pos < rel.size()) {
        const std::size_t slash = rel.find('/', pos);
        parts.push_back(rel.substr(pos, slash == std::string::npos ? slash : slash - pos));
        pos = slash == std::string::npos ? rel.size() : slash + 1;
    }
    return parts;
}

}  // namespace

std::string mode_text(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
    return buf;
}

Result<void> validate_spool_rel(std::string_view rel) {
    const PathProblem problem = relative_path_problem(rel);
    if (problem == PathProblem::Empty || problem == PathProblem::Absolute)
        return make_error("--spool must be a relative path");
    for (char c : rel) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/';
        if (!ok) return make_error("--spool " + std::string(rel) + " may only use [A-Za-z0-9._-/]");
    }
    if (problem != PathProblem::None) {
        return make_error("--spool " + std::string(rel) +
                          " must be a plain relative path (no empty, . or .. component)");
    }
    if (("/" + std::string(rel) + "/").find("/.git/") != std::string::npos)
        return make_error("--spool must not lie inside .git");
    return {};
}

mode_t expected_spool_mode(std::string_view subdir, std::optional<gid_t> agent_gid) {
    if (agent_gid && (subdir == "tmp" || subdir == "requests")) return 02770;
    return 0755;
}

Result<std::vector<SpoolChange>> ensure_spool(const std::string& project_dir,
                                              const std::string& spool_rel,
                                              std::optional<gid_t> agent_gid) {
    std::vector<SpoolChange> changes;
    UniqueFd dir(::open(project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return make_error("cannot open " + project_dir + ": " + std::strerror(errno));
    std::string shown = project_dir;
    for (const std::string& part : components(spool_rel)) {
        shown += "/" + part;
        auto next = ensure_dir_at(dir.get(), part, shown, 0755, kNoGroup, changes);
        if (!next) return next.error();
        dir = std::move(*next);
    }
    for (std::string_view sub : kSpoolSubdirs) {
        const std::string name(sub);
        const mode_t mode = expected_spool_mode(sub, agent_gid);
        const gid_t gid = mode == 02770 ? agent_gid.value_or(kNoGroup) : kNoGroup;
        auto made = ensure_dir_at(dir.get(), name, shown + "/" + name, mode, gid, changes);
        if (!made) return made.error();
    }
    return changes;
}

namespace {

// The directory `name` beneath `parent`, never through a link: nullopt
// when absent, an error when it is a symlink or not a directory.
Result<std::optional<UniqueFd>> open_dir_nofollow(int parent, const std::string& name,
                                                  const std::string& shown) {
    UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (fd) return std::optional<UniqueFd>(std::move(fd));
    const int err = errno;
    if (err == ENOENT) return std::optional<UniqueFd>();
    struct stat st {};
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISLNK(st.st_mode)) return make_error(shown + " is a symlink");
        if (!S_ISDIR(st.st_mode)) return make_error(shown + " is not a directory");
    }
    return make_error("cannot open " + shown + ": " + std::strerror(err));
}

}  // namespace

std::string spool_refusal(const std::string& message) {
    return message +
           "; hostbridge follows no link in the checkout, so it changed nothing: remove it "
           "(the agent may have planted it) and run the command again";
}

Result<PinnedSpool> open_spool(const std::string& project_dir, const std::string& spool_rel) {
    PinnedSpool out;
    UniqueFd dir(::open(project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) return make_error("cannot open " + project_dir + ": " + std::strerror(errno));
    std::string shown = project_dir;
    const std::vector<std::string> parts = components(spool_rel);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const std::string& part = parts[i];
        shown += "/" + part;
        auto next = open_dir_nofollow(dir.get(), part, shown);
        if (!next) return next.error();
        if (i + 1 == parts.size()) {
            out.parent = std::move(dir);
            out.name = part;
            out.path = shown;
            if (!next->has_value()) return out;
            out.root = std::move(**next);
            break;
        }
        if (!next->has_value()) {  // a directory above the spool is absent
            out.path = project_dir + "/" + spool_rel;
            return out;
        }
        dir = std::move(**next);
    }
    for (std::size_t i = 0; i < kSpoolSubdirs.size(); ++i) {
        const std::string name(kSpoolSubdirs[i]);
        auto sub = open_dir_nofollow(out.root.get(), name, out.path + "/" + name);
        if (!sub) return sub.error();
        if (sub->has_value()) out.subdirs[i] = std::move(**sub);
    }
    return out;
}

std::vector<SpoolProblem> check_spool(const std::string& project_dir, const std::string& spool_dir,
                                      std::optional<gid_t> agent_gid) {
    std::vector<SpoolProblem> problems;
    // Every component from the project dir down must be a real directory;
    // each is looked at through its parent's fd, never through a link.
    const std::string rest = spool_dir.size() > project_dir.size()
                                 ? spool_dir.substr(project_dir.size() + 1)
                                 : std::string();
    UniqueFd parent(::open(project_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!parent) return {{"cannot open " + project_dir + ": " + std::strerror(errno), {}}};
    // Checks parent/name; returns its fd when it is a directory to go into.
    auto check = [&](int dirfd, const std::string& name, const std::string& dir,
                     std::string_view sub) -> UniqueFd {
        struct stat st {};
        if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            problems.push_back({dir + " is missing", {}});
            return {};
        }
        if (S_ISLNK(st.st_mode)) {
            problems.push_back(
                {dir + " is a symlink, not a directory", {"rm -- " + shell_quote(dir)}});
            return {};
        }
        if (!S_ISDIR(st.st_mode)) {
            problems.push_back({dir + " is not a directory", {"rm -- " + shell_quote(dir)}});
            return {};
        }
        if (st.st_uid != ::geteuid()) {
            problems.push_back(
                {dir + " is owned by uid " + std::to_string(st.st_uid) + ", not by you",
                 {"rm -rf -- " + shell_quote(dir)}});
            return {};
        }
        const mode_t want = expected_spool_mode(sub, agent_gid);
        if ((st.st_mode & 07777) != want) {
            problems.push_back(
                {dir + " has mode " + mode_text(st.st_mode) + ", expected " + mode_text(want),
                 {"chmod " + mode_text(want) + " " + shell_quote(dir)}});
        }
        if (want == 02770 && agent_gid && st.st_gid != *agent_gid) {
            problems.push_back({dir + " belongs to group " + std::to_string(st.st_gid) +
                                    ", expected " + std::to_string(*agent_gid),
                                {"chgrp " + std::to_string(*agent_gid) + " " + shell_quote(dir),
                                 "chmod " + mode_text(want) + " " + shell_quote(dir)}});
        }
        return UniqueFd(
            ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    };
    std::string path = project_dir;
    std::size_t pos = 0;
    while (pos < rest.size()) {
        std::size_t slash = rest.find('/', pos);
        const std::string part = rest.substr(pos, slash == std::string::npos ? slash : slash - pos);
        path += "/" + part;
        pos = slash == std::string::npos ? rest.size() : slash + 1;
        UniqueFd next = check(parent.get(), part, path, "");
        if (!next) return problems;  // nothing below it can be looked at safely
        parent = std::move(next);
    }
    for (std::string_view sub : kSpoolSubdirs) {
        (void)check(parent.get(), std::string(sub), spool_dir + "/" + std::string(sub), sub);
    }
    return problems;
}

}  // namespace hb::admin
