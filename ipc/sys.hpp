// The small system helpers every process of ours needs, in one place (like
// OpenSSH's atomicio.c): I/O that retries EINTR and short counts, errno as
// text, lowercase hex, a scoped flock and a child that is killed and reaped
// when its owner goes away.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hb::sys {

// "what: strerror(err)".
std::string errno_text(std::string_view what, int err = errno);

// Writes all of `data`; false (errno set) on an error.
bool write_all(int fd, std::string_view data);
// Reads until EOF, appending to `out`, or until `out` holds more than
// `limit` bytes (then it stops early: the caller sees out.size() > limit).
// False (errno set) on an error.
bool read_all(int fd, std::string& out, std::size_t limit = static_cast<std::size_t>(-1));
// Reads up to `length` bytes at `offset`, fewer only at EOF; the count, or
// -1 (errno set) on an error.
ssize_t pread_full(int fd, char* buffer, std::size_t length, off_t offset);
// flock(2) retried on EINTR; false (errno set) on any other error.
bool flock_retry(int fd, int operation);
// A POSIX record lock (fcntl F_SETLK) on the whole file, without waiting:
// true when taken, false with errno EAGAIN/EACCES when another process
// holds it. Unlike flock(2) it belongs to the process, not to the open file
// description, so a forked child never holds it and it ends with its
// owner (the drain lock, executor/drain.cpp). Closing any descriptor of the
// file in the owner releases it too.
bool try_record_lock(int fd);
// The pid holding a record lock that would conflict with ours on `fd`,
// 0 when none does, -1 (errno set) on an error.
pid_t record_lock_holder(int fd);
// waitpid(2) retried on EINTR.
pid_t waitpid_retry(pid_t pid, int* status, int options = 0);

// Whether `name` is an entry of the directory `dirfd` (any type; a link is
// never followed).
bool exists_at(int dirfd, const std::string& name);
// The entries of the directory `dirfd` but "." and "..", sorted, read
// through a fresh fd (a pinned one keeps no position); false (errno set)
// on an error.
bool list_dir(int dirfd, std::vector<std::string>& names);

// Seconds since the epoch as "2026-11-29T08:00:00Z" (UTC).
std::string format_utc(std::int64_t epoch_seconds);

// argv/envp for execve: pointers into `strings`, then a null.
std::vector<char*> c_strings(std::vector<std::string>& strings);
// In a forked child before exec (async-signal-safe): every signal unblocked
// and back to its default action, so the program starts clean.
void reset_signals();

// Lowercase hex of `length` bytes.
std::string lower_hex(const void* bytes, std::size_t length);
// True when `text` is `length` digits of 0-9a-f (what lower_hex writes):
// the one check of a hash, nonce or digest read back from a file.
bool is_lower_hex(std::string_view text, std::size_t length);
// Appends the two lowercase hex digits of `byte`.
void append_hex_byte(std::string& out, unsigned char byte);
// Every byte outside printable ASCII, and the backslash itself, as \xNN: a
// name with a newline or an escape sequence can neither forge nor hide text
// where it is shown (the audit log's request names, the snapshot's errors).
std::string escape_unprintable(std::string_view raw);

// What st_mode's file type is, in words: "a FIFO (named pipe)", "a socket",
// "a regular file", ... (the snapshot's sentences, on both of its sides).
std::string file_type_text(unsigned mode);

// Releases a flock taken on `fd` when the scope ends (closing the fd would
// too, but the fd may outlive the scope).
class FlockGuard {
  public:
    explicit FlockGuard(int fd) : fd_(fd) {}
    ~FlockGuard();
    FlockGuard(const FlockGuard&) = delete;
    FlockGuard& operator=(const FlockGuard&) = delete;

  private:
    int fd_;
};

// Releases a record lock taken with try_record_lock when the scope ends.
class RecordLockGuard {
  public:
    explicit RecordLockGuard(int fd) : fd_(fd) {}
    ~RecordLockGuard();
    RecordLockGuard(const RecordLockGuard&) = delete;
    RecordLockGuard& operator=(const RecordLockGuard&) = delete;

  private:
    int fd_;
};

// A forked child that must not outlive its owner: unless release()d,
// destruction sends SIGKILL (to its process group too with `group`) and
// reaps it, so no path leaves a zombie or a runaway.
class ChildGuard {
  public:
    ChildGuard() = default;
    explicit ChildGuard(pid_t pid, bool group = false) : pid_(pid), group_(group) {}
    ChildGuard(ChildGuard&& other) noexcept : pid_(other.pid_), group_(other.group_) {
        other.pid_ = -1;
    }
    ChildGuard& operator=(ChildGuard&& other) noexcept;
    ChildGuard(const ChildGuard&) = delete;
    ChildGuard& operator=(const ChildGuard&) = delete;
    ~ChildGuard() { kill_and_reap(); }

    [[nodiscard]] pid_t pid() const { return pid_; }
    explicit operator bool() const { return pid_ > 0; }
    void kill_and_reap();
    // The caller has reaped it (or hands it on): nothing to do at the end.
    pid_t release() {
        const pid_t pid = pid_;
        pid_ = -1;
        return pid;
    }

  private:
    pid_t pid_ = -1;
    bool group_ = false;
};

}  // namespace hb::sys
