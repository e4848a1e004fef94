#include "ipc/sys.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <ctime>

namespace hb::sys {

std::string errno_text(std::string_view what, int err) {
    return std::string(what) + ": " + std::strerror(err);
}

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) {
            errno = EIO;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool read_all(int fd, std::string& out, std::size_t limit) {
    char buffer[65536];
    while (out.size() <= limit) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) break;
        out.append(buffer, static_cast<std::size_t>(n));
    }
    return true;
}

ssize_t pread_full(int fd, char* buffer, std::size_t length, off_t offset) {
    std::size_t got = 0;
    while (got < length) {
        const ssize_t n = ::pread(fd, buffer + got, length - got, offset + static_cast<off_t>(got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    return static_cast<ssize_t>(got);
}

bool flock_retry(int fd, int operation) {
    while (::flock(fd, operation) != 0) {
        if (errno != EINTR) return false;
    }
    return true;
}

namespace {
struct flock whole_file(short type) {
    struct flock lock {};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    return lock;  // l_start 0, l_len 0: the whole file, however long
}
}  // namespace

bool try_record_lock(int fd) {
    struct flock lock = whole_file(F_WRLCK);
    while (::fcntl(fd, F_SETLK, &lock) != 0) {
        if (errno != EINTR) return false;
    }
    return true;
}

pid_t record_lock_holder(int fd) {
    struct flock lock = whole_file(F_WRLCK);
    if (::fcntl(fd, F_GETLK, &lock) != 0) return -1;
    return lock.l_type == F_UNLCK ? 0 : lock.l_pid;
}

pid_t waitpid_retry(pid_t pid, int* status, int options) {
    pid_t reaped;
    do {
        reaped = ::waitpid(pid, status, options);
    } while (reaped < 0 && errno == EINTR);
    return reaped;
}

bool exists_at(int dirfd, const std::string& name) {
    struct stat st {};
    return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

bool list_dir(int dirfd, std::vector<std::string>& names) {
    const int dup = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup < 0) return false;
    DIR* stream = ::fdopendir(dup);
    if (stream == nullptr) {
        const int err = errno;
        ::close(dup);
        errno = err;
        return false;
    }
    names.clear();
    errno = 0;
    while (const dirent* entry = ::readdir(stream)) {
        const std::string_view name = entry->d_name;
        if (name != "." && name != "..") names.emplace_back(name);
    }
    const int err = errno;
    ::closedir(stream);
    errno = err;
    if (err != 0) return false;
    std::sort(names.begin(), names.end());
    return true;
}

std::string format_utc(std::int64_t epoch_seconds) {
    const std::time_t t = static_cast<std::time_t>(epoch_seconds);
    std::tm tm{};
    char buf[32];
    if (::gmtime_r(&t, &tm) == nullptr ||
        std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
        return "1970-01-01T00:00:00Z";
    }
    return buf;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (std::string& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

void reset_signals() {
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
}

std::string escape_unprintable(std::string_view raw) {
    std::string out;
    for (const char ch : raw) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c <= 0x7e && c != '\\') {
            out += ch;
        } else {
            out += "\\x";
            append_hex_byte(out, c);
        }
    }
    return out;
}

void append_hex_byte(std::string& out, unsigned char byte) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
}

bool is_lower_hex(std::string_view text, std::size_t length) {
    return text.size() == length && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

std::string lower_hex(const void* bytes, std::size_t length) {
    std::string out;
    out.reserve(length * 2);
    const auto* p = static_cast<const unsigned char*>(bytes);
    for (std::size_t i = 0; i < length; ++i) append_hex_byte(out, p[i]);
    return out;
}

FlockGuard::~FlockGuard() {
    ::flock(fd_, LOCK_UN);
}

RecordLockGuard::~RecordLockGuard() {
    struct flock lock = whole_file(F_UNLCK);
    ::fcntl(fd_, F_SETLK, &lock);
}

ChildGuard& ChildGuard::operator=(ChildGuard&& other) noexcept {
    if (this != &other) {
        kill_and_reap();
        pid_ = other.pid_;
        group_ = other.group_;
        other.pid_ = -1;
    }
    return *this;
}

void ChildGuard::kill_and_reap() {
    if (pid_ <= 0) return;
    if (group_) ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    waitpid_retry(pid_, nullptr);
    pid_ = -1;
}

std::string file_type_text(unsigned mode) {
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISLNK(mode)) return "a symlink";
    return "an entry of unknown type";
}

}  // namespace hb::sys
