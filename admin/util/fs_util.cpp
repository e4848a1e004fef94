#include "admin/util/fs_util.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "display/visible.hpp"
#include "ipc/enum_names.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {

using display::visible;

namespace {

std::string errno_text() {
    return std::strerror(errno);
}

std::string random_suffix() {
    std::random_device rd;
    static const char* hex = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 12; ++i) s.push_back(hex[rd() % 16]);
    return s;
}

Result<void> write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return make_error(errno_text());
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return {};
}

// Unlinks every entry below the directory `dirfd`, never following a link.
Result<void> empty_dir(int dirfd, const std::string& shown) {
    int dup = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return make_error("cannot read " + shown + ": " + errno_text());
    DIR* dir = ::fdopendir(dup);
    if (dir == nullptr) {
        ::close(dup);
        return make_error("cannot read " + shown + ": " + errno_text());
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    for (const auto& name : names) {
        std::string child = shown + "/" + name;
        UniqueFd sub(
            ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (sub) {
            auto emptied = empty_dir(sub.get(), child);
            if (!emptied) return emptied;
            if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
                return make_error("cannot remove " + child + ": " + errno_text());
            }
        } else if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) {
            return make_error("cannot remove " + child + ": " + errno_text());
        }
    }
    return {};
}

}  // namespace

Result<std::optional<std::string>> read_file_if_exists(const std::string& path,
                                                       std::size_t max_bytes) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (!fd) {
        if (errno == ENOENT) return std::optional<std::string>{};
        if (errno == ELOOP) return make_error(path + " is a symlink");
        return make_error("cannot read " + path + ": " + errno_text());
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error("cannot stat " + path + ": " + errno_text());
    if (!S_ISREG(st.st_mode)) return make_error(path + " is not a regular file");
    if (static_cast<std::size_t>(st.st_size) > max_bytes) {
        return make_error(path + " is larger than expected");
    }
    std::string content;
    char buf[65536];
    while (true) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return make_error("cannot read " + path + ": " + errno_text());
        }
        if (n == 0) break;
        content.append(buf, static_cast<std::size_t>(n));
        if (content.size() > max_bytes) return make_error(path + " is larger than expected");
    }
    return std::optional<std::string>(std::move(content));
}

Result<void> write_file_atomic(const std::string& path, std::string_view content, mode_t mode) {
    auto slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    std::string tmp = dir + "/." + base + ".tmp-" + random_suffix();
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return make_error("cannot write " + path + ": " + errno_text());
    auto wrote = write_all(fd.get(), content);
    if (wrote && ::fchmod(fd.get(), mode) != 0) wrote = make_error(errno_text());
    if (wrote && ::fsync(fd.get()) != 0) wrote = make_error(errno_text());
    if (wrote && ::rename(tmp.c_str(), path.c_str()) != 0) wrote = make_error(errno_text());
    if (!wrote) {
        ::unlink(tmp.c_str());
        return make_error("cannot write " + path + ": " + wrote.error().message);
    }
    return {};
}

Result<WriteOutcome> write_file_if_changed(const std::string& path, std::string_view content,
                                           mode_t mode) {
    struct stat st {};
    bool exists = ::lstat(path.c_str(), &st) == 0;
    // Read with the content's own size as the cap: a sanitized executor is
    // over read_file_if_exists's default 64 MiB and was rewritten every time.
    if (exists && S_ISREG(st.st_mode) && (st.st_mode & 07777) == mode &&
        static_cast<std::size_t>(st.st_size) == content.size()) {
        auto current = read_file_if_exists(path, content.size());
        if (current && current.value() && *current.value() == content) {
            return WriteOutcome::Unchanged;
        }
    }
    auto wrote = write_file_atomic(path, content, mode);
    if (!wrote) return wrote.error();
    return exists ? WriteOutcome::Updated : WriteOutcome::Created;
}

std::string_view outcome_word(WriteOutcome outcome) {
    static constexpr auto kWords =
        dense_names<WriteOutcome::Updated>({"no change", "created", "updated"}, "?");
    return name_of(kWords, outcome);
}

Result<void> make_dirs(const std::string& path, mode_t mode) {
    std::string so_far;
    std::size_t pos = 0;
    while (pos != std::string::npos) {
        std::size_t next = path.find('/', pos + 1);
        so_far = path.substr(0, next);
        pos = next;
        if (so_far.empty()) continue;
        if (::mkdir(so_far.c_str(), mode) != 0 && errno != EEXIST) {
            return make_error("cannot create " + so_far + ": " + errno_text());
        }
    }
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        return make_error(path + " is not a directory");
    }
    return {};
}

Result<bool> remove_file(const std::string& path) {
    if (::unlink(path.c_str()) == 0) return true;
    if (errno == ENOENT) return false;
    return make_error("cannot remove " + path + ": " + errno_text());
}

Result<bool> remove_tree(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return false;
        return make_error("cannot stat " + path + ": " + errno_text());
    }
    if (!S_ISDIR(st.st_mode)) return remove_file(path);
    UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) return make_error("cannot open " + path + ": " + errno_text());
    auto emptied = empty_dir(dir.get(), path);
    if (!emptied) return emptied.error();
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) {
        return make_error("cannot remove " + path + ": " + errno_text());
    }
    return true;
}

Result<WriteOutcome> write_file_at_if_changed(int dirfd, const std::string& name,
                                              std::string_view content, mode_t mode,
                                              const std::string& shown) {
    struct stat st {};
    const bool exists = ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists && S_ISREG(st.st_mode) && (st.st_mode & 07777) == mode &&
        static_cast<std::size_t>(st.st_size) == content.size()) {
        UniqueFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        std::string current;
        char buf[65536];
        ssize_t n = 0;
        while (fd && current.size() <= content.size() &&
               (n = ::read(fd.get(), buf, sizeof buf)) > 0) {
            current.append(buf, static_cast<std::size_t>(n));
        }
        if (fd && n == 0 && current == content) return WriteOutcome::Unchanged;
    }
    const std::string tmp = "." + name + ".tmp-" + random_suffix();
    UniqueFd fd(
        ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return make_error("cannot write " + shown + ": " + errno_text());
    auto wrote = write_all(fd.get(), content);
    if (wrote && ::fchmod(fd.get(), mode) != 0) wrote = make_error(errno_text());
    if (wrote && ::fsync(fd.get()) != 0) wrote = make_error(errno_text());
    if (wrote && ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) {
        wrote = make_error(errno_text());
    }
    if (!wrote) {
        ::unlinkat(dirfd, tmp.c_str(), 0);
        return make_error("cannot write " + shown + ": " + wrote.error().message);
    }
    return exists ? WriteOutcome::Updated : WriteOutcome::Created;
}

Result<bool> remove_file_at(int dirfd, const std::string& name, const std::string& shown) {
    if (::unlinkat(dirfd, name.c_str(), 0) == 0) return true;
    if (errno == ENOENT) return false;
    return make_error("cannot remove " + shown + ": " + errno_text());
}

Result<bool> remove_tree_at(int dirfd, const std::string& name, const std::string& shown) {
    UniqueFd dir(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) {
        if (errno == ENOENT) return false;
        return remove_file_at(dirfd, name, shown);  // not a directory (a link): the entry only
    }
    auto emptied = empty_dir(dir.get(), shown);
    if (!emptied) return emptied.error();
    if (::unlinkat(dirfd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        return make_error("cannot remove " + shown + ": " + errno_text());
    }
    return true;
}

std::optional<std::string> normal_inside(const std::string& raw) {
    if (raw.empty() || raw[0] == '/') return std::nullopt;
    std::string out;
    std::size_t start = 0;
    while (start <= raw.size()) {
        const std::size_t slash = std::min(raw.find('/', start), raw.size());
        const std::string part = raw.substr(start, slash - start);
        start = slash + 1;
        if (part.empty() || part == ".") continue;
        if (part == "..") return std::nullopt;
        out += (out.empty() ? "" : "/") + part;
    }
    const bool control = std::any_of(out.begin(), out.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
    });
    if (control) return std::nullopt;
    return out;
}

std::string lexically_normal(const std::string& path) {
    std::string out = std::filesystem::path(path).lexically_normal().string();
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    return out;
}

bool path_is_within(const std::string& path, const std::string& root) {
    if (path == root) return true;
    if (root == "/") return !path.empty() && path[0] == '/';
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
           path[root.size()] == '/';
}

Result<std::string> canonical_path(const std::string& path) {
    char buf[PATH_MAX];
    if (::realpath(path.c_str(), buf) == nullptr) {
        return make_error("cannot resolve " + path + ": " + errno_text());
    }
    return std::string(buf);
}

std::string absolute_path(const std::string& path) {
    if (!path.empty() && path[0] == '/') return lexically_normal(path);
    char buf[PATH_MAX];
    std::string cwd = ::getcwd(buf, sizeof buf) != nullptr ? buf : "/";
    return lexically_normal(cwd + "/" + path);
}

std::string shell_quote(std::string_view word) {
    if (word.empty()) return "''";
    bool plain = true;
    for (char c : word) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%_+=:,./-", c))) {
            plain = false;
            break;
        }
    }
    if (plain) return std::string(word);
    if (visible(word) != word) {
        // $'...' (bash, zsh, ksh, POSIX 2024 sh): a name that does not show
        // as itself (display/visible.hpp) stays pasteable and shows every byte.
        static constexpr char kHex[] = "0123456789abcdef";
        std::string out = "$'";
        for (char ch : word) {
            const auto c = static_cast<unsigned char>(ch);
            if (ch == '\'' || ch == '\\') {
                out += '\\';
                out += ch;
            } else if (c >= 0x20 && c < 0x7f) {
                out += ch;
            } else {
                out += "\\x";
                out += kHex[c >> 4];
                out += kHex[c & 0xf];
            }
        }
        return out + "'";
    }
    std::string out = "'";
    for (char c : word) {
        if (c == '\'') {
            out += "'\\''";
        } else {
            out.push_back(c);
        }
    }
    out += "'";
    return out;
}

}  // namespace hb::admin
