// The audit log: hash-chained JSON lines, appended under an exclusive flock
// on the log file itself, since drains acknowledging requests write
// concurrently from several processes. Format: architecture.md, "Audit log";
// choices the contract left open: docs/AUDIT-LOG.md.
#include "executor/audit_log.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "executor/sha256.hpp"

namespace hb::exec {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view kZeroHash =
    "0000000000000000000000000000000000000000000000000000000000000000";
constexpr std::array<std::string_view, 11> kKeys = {"seq",         "ts",   "event",  "request",
                                                    "verb",        "arg",  "reason", "exit_code",
                                                    "duration_ms", "prev", "hash"};
// A record we write is far smaller; a longer line is refused on write and
// treated as corruption on read, so a bad line can never make us read the
// whole file into memory.
constexpr std::size_t kMaxWriteLine = 64 * 1024;
constexpr std::size_t kMaxReadLine = 1024 * 1024;
constexpr std::size_t kChunk = 64 * 1024;
// Each retry follows a rotation by another process; more than this many in
// one append means something is wrong with the state dir.
constexpr int kMaxAttempts = 64;

std::string errno_text(std::string_view what) {
    return std::string(what) + ": " + std::strerror(errno);
}

std::string rotated_name(int index) {
    return std::string(kAuditLogName) + "." + std::to_string(index);
}

// Compact, keys in insertion order, UTF-8 unescaped; invalid UTF-8 becomes
// U+FFFD instead of throwing, so any bytes we are given still log.
std::string dump(const ordered_json& value) {
    return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

bool is_lower_hex64(const ordered_json& value) {
    if (!value.is_string()) return false;
    const auto& text = value.get_ref<const std::string&>();
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

std::string escape_request(std::string_view raw) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (const char ch : raw) {
        const auto c = static_cast<unsigned char>(ch);
        if (c >= 0x20 && c <= 0x7e && c != '\\') {
            out += ch;
        } else {
            out += "\\x";
            out += kHex[c >> 4];
            out += kHex[c & 0xf];
        }
    }
    return out;
}

std::string utc_timestamp_ms() {
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    tm utc{};
    ::gmtime_r(&now.tv_sec, &utc);
    char text[40];
    const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(text + n, sizeof text - n, ".%03ldZ", now.tv_nsec / 1000000);
    return text;
}

// "2026-11-29T08:00:03.123Z"
bool valid_timestamp(const ordered_json& value) {
    if (!value.is_string()) return false;
    const auto& ts = value.get_ref<const std::string&>();
    static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddZ";
    if (ts.size() != kShape.size()) return false;
    for (std::size_t i = 0; i < ts.size(); ++i) {
        const bool ok = kShape[i] == 'd' ? (ts[i] >= '0' && ts[i] <= '9') : ts[i] == kShape[i];
        if (!ok) return false;
    }
    return true;
}

std::string torn_reason(std::uint64_t bytes) {
    return "torn line of " + std::to_string(bytes) + " bytes";
}

// --- small I/O helpers ------------------------------------------------------

bool pread_all(int fd, char* buffer, std::size_t length, off_t offset) {
    while (length > 0) {
        const ssize_t n = ::pread(fd, buffer, length, offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buffer += n;
        length -= static_cast<std::size_t>(n);
        offset += n;
    }
    return true;
}

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

bool flock_retry(int fd, int operation) {
    while (::flock(fd, operation) != 0) {
        if (errno != EINTR) return false;
    }
    return true;
}

// Releases a flock taken on `fd` when the scope ends (closing the fd would
// too, but the fd may outlive the scope).
class Unlocker {
  public:
    explicit Unlocker(int fd) : fd_(fd) {}
    ~Unlocker() { ::flock(fd_, LOCK_UN); }
    Unlocker(const Unlocker&) = delete;
    Unlocker& operator=(const Unlocker&) = delete;

  private:
    int fd_;
};

// Offset of the last '\n' in [0, end), -1 when there is none. Reads
// backwards in chunks; gives up (returns false) after `limit` bytes.
bool find_last_newline(int fd, off_t end, std::size_t limit, off_t& found) {
    char buffer[kChunk];
    std::size_t scanned = 0;
    while (end > 0) {
        if (scanned >= limit) return false;
        const auto length = static_cast<std::size_t>(std::min<off_t>(end, kChunk));
        const off_t start = end - static_cast<off_t>(length);
        if (!pread_all(fd, buffer, length, start)) return false;
        for (std::size_t i = length; i > 0; --i) {
            if (buffer[i - 1] == '\n') {
                found = start + static_cast<off_t>(i - 1);
                return true;
            }
        }
        scanned += length;
        end = start;
    }
    found = -1;
    return true;
}

// The end of one file: its last complete line (if any) and the length of an
// unterminated fragment after it (a writer crashed mid-line).
struct FileTail {
    std::optional<std::string> last_line;
    std::uint64_t torn_bytes = 0;
};

Result<FileTail> read_file_tail(int fd, std::string_view label) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return make_error(errno_text(std::string(label) + ": fstat"));
    const off_t size = st.st_size;
    FileTail tail;
    if (size == 0) return tail;
    off_t last = -1;
    if (!find_last_newline(fd, size, kMaxReadLine, last))
        return make_error(std::string(label) + ": cannot find the end of the last line");
    tail.torn_bytes = static_cast<std::uint64_t>(size - (last + 1));
    if (last < 0) return tail;
    off_t before = -1;
    if (!find_last_newline(fd, last, kMaxReadLine, before))
        return make_error(std::string(label) + ": the last line is too long or unreadable");
    std::string line(static_cast<std::size_t>(last - (before + 1)), '\0');
    if (!pread_all(fd, line.data(), line.size(), before + 1))
        return make_error(errno_text(std::string(label) + ": read"));
    tail.last_line = std::move(line);
    return tail;
}

// Where the chain stands: the next line gets seq + 1 and prev = hash.
struct ChainState {
    std::uint64_t seq = 0;
    std::string hash{kZeroHash};
    std::uint64_t torn_bytes = 0;  // a fragment to record as `recovered`
    bool torn_in_current = false;  // ... which sits in the current file
};

Result<void> take_last_line(const std::string& line, std::string_view label, ChainState& state) {
    const auto j = ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_unsigned() ||
        !j.contains("hash") || !is_lower_hex64(j["hash"])) {
        // Not a crash artefact (those are unterminated): fail closed and let
        // a person look.
        return make_error(std::string(label) +
                          ": the last line is not an audit record; run `hostbridge audit "
                          "--verify`");
    }
    state.seq = j["seq"].get<std::uint64_t>();
    state.hash = j["hash"].get<std::string>();
    return {};
}

UniqueFd open_log_for_reading(int dir_fd, const std::string& name) {
    return UniqueFd(
        ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
}

// Reads seq/prev from the current file; a file without a complete line (new
// after a rotation, or holding only a torn fragment) continues the chain of
// audit.jsonl.1, which is stable while we hold the current file's lock:
// rotating needs that lock.
Result<ChainState> read_chain_state(int dir_fd, int fd) {
    ChainState state;
    auto tail = read_file_tail(fd, kAuditLogName);
    if (!tail) return tail.error();
    state.torn_bytes = tail->torn_bytes;
    state.torn_in_current = tail->torn_bytes > 0;
    if (tail->last_line) {
        if (auto r = take_last_line(*tail->last_line, kAuditLogName, state); !r) return r.error();
        return state;
    }
    const std::string previous = rotated_name(1);
    UniqueFd old = open_log_for_reading(dir_fd, previous);
    if (!old) {
        if (errno == ENOENT) return state;  // the very first line of the chain
        return make_error(errno_text(previous + ": open"));
    }
    auto old_tail = read_file_tail(old.get(), previous);
    if (!old_tail) return old_tail.error();
    if (!old_tail->last_line) return make_error(previous + ": holds no complete line");
    if (auto r = take_last_line(*old_tail->last_line, previous, state); !r) return r.error();
    if (!state.torn_in_current && old_tail->torn_bytes > 0) state.torn_bytes = old_tail->torn_bytes;
    return state;
}

// The file currently named audit.jsonl, open for reading and holding a
// shared lock: no append is half-written and no rotation happens while it
// is held. An invalid fd when there is no log yet.
Result<UniqueFd> lock_current_shared(int dir_fd) {
    const std::string name(kAuditLogName);
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
        UniqueFd fd = open_log_for_reading(dir_fd, name);
        if (!fd) {
            if (errno == ENOENT) return UniqueFd();
            return make_error(errno_text("audit log: open " + name));
        }
        if (!flock_retry(fd.get(), LOCK_SH)) return make_error(errno_text("audit log: flock"));
        struct stat held {};
        struct stat named {};
        if (::fstat(fd.get(), &held) != 0) return make_error(errno_text("audit log: fstat"));
        if (::fstatat(dir_fd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
            held.st_dev == named.st_dev && held.st_ino == named.st_ino)
            return fd;  // rotated away meanwhile otherwise: try the new one
    }
    return make_error("audit log: the log file keeps changing under us");
}

ordered_json optional_string(const std::optional<std::string>& value) {
    return value ? ordered_json(*value) : ordered_json(nullptr);
}

// One line with its trailing newline; `hash` receives the line's hash.
Result<std::string> build_line(std::uint64_t seq, const AuditRecord& record,
                               const std::string& prev, std::string& hash) {
    ordered_json j;
    j["seq"] = seq;
    j["ts"] = utc_timestamp_ms();
    j["event"] = audit_event_name(record.event);
    j["request"] = record.request ? ordered_json(escape_request(*record.request)) : nullptr;
    j["verb"] = record.verb ? ordered_json(verb_name(*record.verb)) : nullptr;
    j["arg"] = optional_string(record.arg);
    j["reason"] = optional_string(record.reason);
    j["exit_code"] = record.exit_code ? ordered_json(*record.exit_code) : nullptr;
    j["duration_ms"] = record.duration_ms ? ordered_json(*record.duration_ms) : nullptr;
    j["prev"] = prev;
    hash = sha256_hex(prev + "\n" + dump(j));
    j["hash"] = hash;
    std::string line = dump(j) + "\n";
    if (line.size() > kMaxWriteLine) return make_error("audit log: record larger than 64 KiB");
    return line;
}

UniqueFd open_log_for_append(int dir_fd) {
    return UniqueFd(::openat(
        dir_fd, std::string(kAuditLogName).c_str(),
        O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0600));
}

Result<UniqueFd> open_checked(int dir_fd, const std::string& dir) {
    const std::string path = dir + "/" + std::string(kAuditLogName);
    UniqueFd fd = open_log_for_append(dir_fd);
    if (!fd) {
        if (errno == ELOOP) return make_error(path + ": is a symlink; refusing to follow it");
        return make_error(errno_text(path + ": cannot open for writing"));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(errno_text(path + ": fstat"));
    if (!S_ISREG(st.st_mode)) return make_error(path + ": is not a regular file");
    // The log is the host's own record: owner-only, whatever the umask or
    // whoever loosened it.
    if ((st.st_mode & 07777) != 0600 && ::fchmod(fd.get(), 0600) != 0)
        return make_error(errno_text(path + ": fchmod 0600"));
    return fd;
}

}  // namespace

std::string_view audit_event_name(AuditEvent event) {
    switch (event) {
        case AuditEvent::Installed:
            return "installed";
        case AuditEvent::Approved:
            return "approved";
        case AuditEvent::Queued:
            return "queued";
        case AuditEvent::Quarantined:
            return "quarantined";
        case AuditEvent::Denied:
            return "denied";
        case AuditEvent::Expired:
            return "expired";
        case AuditEvent::Started:
            return "started";
        case AuditEvent::Succeeded:
            return "succeeded";
        case AuditEvent::Failed:
            return "failed";
        case AuditEvent::Interrupted:
            return "interrupted";
        case AuditEvent::Stuck:
            return "stuck";
        case AuditEvent::Recovered:
            return "recovered";
    }
    return "unknown";
}

std::optional<AuditEvent> audit_event_from_name(std::string_view name) {
    for (int i = static_cast<int>(AuditEvent::Installed);
         i <= static_cast<int>(AuditEvent::Recovered); ++i) {
        const auto event = static_cast<AuditEvent>(i);
        if (audit_event_name(event) == name) return event;
    }
    return std::nullopt;
}

Result<AuditLog> AuditLog::open(const std::string& state_dir) {
    return open(state_dir, kAuditRotateBytes);
}

Result<AuditLog> AuditLog::open(const std::string& state_dir, std::uint64_t rotate_bytes) {
    UniqueFd dir_fd(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir_fd) {
        if (errno == ENOENT)
            return make_error("audit log: state dir " + state_dir +
                              " does not exist (install creates it)");
        return make_error(errno_text("audit log: state dir " + state_dir));
    }
    auto fd = open_checked(dir_fd.get(), state_dir);
    if (!fd) return fd.error();
    return AuditLog(state_dir, std::move(dir_fd), std::move(*fd),
                    std::max<std::uint64_t>(rotate_bytes, 1));
}

// Takes the exclusive lock on the file currently named audit.jsonl. Our fd
// may point at a file another process has since rotated away: after locking,
// compare it with the name and reopen until they agree.
Result<void> AuditLog::lock_current() {
    const std::string name(kAuditLogName);
    if (owner_pid_ != ::getpid()) {
        fd_.reset();  // only this process's copy; the parent keeps its own
        owner_pid_ = ::getpid();
    }
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
        if (!fd_) {
            auto fd = open_checked(dir_fd_.get(), dir_);
            if (!fd) return fd.error();
            fd_ = std::move(*fd);
        }
        if (!flock_retry(fd_.get(), LOCK_EX)) return make_error(errno_text("audit log: flock"));
        struct stat held {};
        struct stat named {};
        if (::fstat(fd_.get(), &held) != 0) return make_error(errno_text("audit log: fstat"));
        if (::fstatat(dir_fd_.get(), name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0) {
            if (held.st_dev == named.st_dev && held.st_ino == named.st_ino) return {};
        } else if (errno != ENOENT) {
            return make_error(errno_text("audit log: stat " + name));
        }
        ::flock(fd_.get(), LOCK_UN);
        fd_.reset();
    }
    return make_error("audit log: the log file keeps changing under us");
}

// Called with the current file locked: .7 -> .8 (dropping the old .8) ...
// .1 -> .2, then audit.jsonl -> .1. The next writer creates a fresh file.
Result<void> AuditLog::rotate() {
    for (int i = kAuditRotatedFiles - 1; i >= 1; --i) {
        const std::string from = rotated_name(i);
        const std::string to = rotated_name(i + 1);
        if (::renameat(dir_fd_.get(), from.c_str(), dir_fd_.get(), to.c_str()) != 0 &&
            errno != ENOENT)
            return make_error(errno_text("audit log: rename " + from + " to " + to));
    }
    const std::string first = rotated_name(1);
    if (::renameat(dir_fd_.get(), std::string(kAuditLogName).c_str(), dir_fd_.get(),
                   first.c_str()) != 0)
        return make_error(errno_text("audit log: rename to " + first));
    if (::fsync(dir_fd_.get()) != 0) return make_error(errno_text("audit log: fsync state dir"));
    return {};
}

Result<void> AuditLog::append(const AuditRecord& record, bool sync) {
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
        if (auto locked = lock_current(); !locked) return locked.error();
        const Unlocker unlock(fd_.get());
        struct stat st {};
        if (::fstat(fd_.get(), &st) != 0) return make_error(errno_text("audit log: fstat"));
        if (static_cast<std::uint64_t>(st.st_size) >= rotate_bytes_) {
            if (auto rotated = rotate(); !rotated) return rotated.error();
            continue;  // lock_current now opens the fresh file
        }
        auto state = read_chain_state(dir_fd_.get(), fd_.get());
        if (!state) return state.error();

        std::string out;
        std::uint64_t seq = state->seq;
        std::string prev = state->hash;
        std::string hash;
        if (state->torn_bytes > 0) {
            // Terminate the fragment so it stays a line of its own, then say
            // what happened; prev skips the fragment.
            if (state->torn_in_current) out += "\n";
            AuditRecord recovered;
            recovered.event = AuditEvent::Recovered;
            recovered.reason = torn_reason(state->torn_bytes);
            auto line = build_line(++seq, recovered, prev, hash);
            if (!line) return line.error();
            out += *line;
            prev = hash;
        }
        auto line = build_line(++seq, record, prev, hash);
        if (!line) return line.error();
        out += *line;
        // One write: if it is cut short the result is a torn last line,
        // which the next append repairs.
        if (!write_all(fd_.get(), out)) return make_error(errno_text("audit log: write"));
        if (sync && ::fdatasync(fd_.get()) != 0)
            return make_error(errno_text("audit log: fdatasync"));
        // The first line of a new file is durable only with its name.
        if (sync && st.st_size == 0 && ::fsync(dir_fd_.get()) != 0)
            return make_error(errno_text("audit log: fsync state dir"));
        return {};
    }
    return make_error("audit log: rotated under us too many times");
}

Result<std::string> AuditLog::tail(std::size_t max_bytes) const {
    auto locked = lock_current_shared(dir_fd_.get());
    if (!locked) return locked.error();
    if (!*locked) return std::string();
    const UniqueFd fd = std::move(*locked);
    const Unlocker unlock(fd.get());
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(errno_text("audit log: fstat"));
    off_t last = -1;
    if (!find_last_newline(fd.get(), st.st_size, kMaxReadLine, last))
        return make_error("audit log: cannot find the end of the last line");
    const off_t end = last + 1;  // complete lines only
    if (end == 0 || max_bytes == 0) return std::string();
    const off_t start =
        end > static_cast<off_t>(max_bytes) ? end - static_cast<off_t>(max_bytes) : 0;
    // Read one byte more to know whether `start` is a line start.
    const off_t from = start > 0 ? start - 1 : 0;
    std::string text(static_cast<std::size_t>(end - from), '\0');
    if (!pread_all(fd.get(), text.data(), text.size(), from))
        return make_error(errno_text("audit log: read"));
    if (start > 0) {
        const std::size_t newline = text.find('\n');
        text.erase(0, newline + 1);  // newline < text.size(): the last byte is '\n'
    }
    return text;
}

// --- verification -----------------------------------------------------------

namespace {

struct Line {
    std::string label;  // file name
    std::uint64_t number = 0;
    std::string text;
    bool terminated = false;
    bool too_long = false;
    ordered_json json;  // parsed once by the verifier (discarded if invalid)
};

// Streams the lines of several files in order, one buffer at a time.
class LineSource {
  public:
    LineSource(int dir_fd, std::vector<std::string> files)
        : dir_fd_(dir_fd), files_(std::move(files)) {}

    // False at the end or on an I/O error (then error() is set).
    bool next(Line& line) {
        while (true) {
            if (!fd_) {
                if (index_ >= files_.size()) return false;
                fd_ = open_log_for_reading(dir_fd_, files_[index_]);
                if (!fd_) {
                    error_ = errno_text(files_[index_] + ": open");
                    return false;
                }
                struct stat st {};
                if (::fstat(fd_.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
                    error_ = files_[index_] + ": is not a regular file";
                    return false;
                }
                buffer_.clear();
                number_ = 0;
                eof_ = false;
            }
            const std::size_t newline = buffer_.find('\n');
            if (newline != std::string::npos) {
                emit(line, buffer_.substr(0, newline), true);
                buffer_.erase(0, newline + 1);
                return true;
            }
            if (buffer_.size() > kMaxReadLine) {
                emit(line, buffer_.substr(0, 80), false);
                line.too_long = true;
                error_ =
                    files_[index_] + " line " + std::to_string(line.number) + ": longer than 1 MiB";
                return false;
            }
            if (eof_) {
                const bool has_fragment = !buffer_.empty();
                if (has_fragment) emit(line, std::move(buffer_), false);
                buffer_.clear();
                fd_.reset();
                ++index_;
                if (has_fragment) return true;
                continue;
            }
            char chunk[kChunk];
            const ssize_t n = ::read(fd_.get(), chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) {
                error_ = errno_text(files_[index_] + ": read");
                return false;
            }
            if (n == 0) {
                eof_ = true;
            } else {
                buffer_.append(chunk, static_cast<std::size_t>(n));
            }
        }
    }

    [[nodiscard]] const std::string& error() const { return error_; }

  private:
    void emit(Line& line, std::string text, bool terminated) {
        line.label = files_[index_];
        line.number = ++number_;
        line.text = std::move(text);
        line.terminated = terminated;
        line.too_long = false;
    }

    int dir_fd_;
    std::vector<std::string> files_;
    std::size_t index_ = 0;
    UniqueFd fd_;
    std::string buffer_;
    std::uint64_t number_ = 0;
    bool eof_ = false;
    std::string error_;
};

// Is `line` the `recovered` event written for a torn fragment of `bytes`?
bool recovers(const Line& line, std::size_t bytes) {
    const ordered_json& j = line.json;
    if (!j.is_object()) return false;
    const auto event = j.find("event");
    const auto reason = j.find("reason");
    return event != j.end() && reason != j.end() && *event == "recovered" &&
           *reason == torn_reason(bytes);
}

bool null_or_string(const ordered_json& value) {
    return value.is_null() || value.is_string();
}

bool null_or_integer(const ordered_json& value, std::int64_t min, std::int64_t max) {
    if (value.is_null()) return true;
    if (value.is_number_unsigned())
        return value.get<std::uint64_t>() <= static_cast<std::uint64_t>(max);
    if (!value.is_number_integer()) return false;
    const auto v = value.get<std::int64_t>();
    return v >= min && v <= max;
}

// Shape of one line: exact keys in order, types, canonical text. Returns
// the problem, or nothing.
std::optional<std::string> shape_problem(const Line& line, const ordered_json& j) {
    if (!j.is_object()) return "not a JSON object";
    std::size_t i = 0;
    for (const auto& item : j.items()) {
        if (i >= kKeys.size()) return "unexpected key \"" + item.key() + "\" after \"hash\"";
        if (item.key() != kKeys[i])
            return "key \"" + item.key() + "\" where \"" + std::string(kKeys[i]) + "\" belongs";
        ++i;
    }
    if (i < kKeys.size()) return "missing key \"" + std::string(kKeys[i]) + "\"";
    if (!j["seq"].is_number_unsigned() || j["seq"].get<std::uint64_t>() == 0)
        return "seq is not a positive integer";
    if (!valid_timestamp(j["ts"])) return "ts is not a UTC timestamp with milliseconds";
    if (!j["event"].is_string() || !audit_event_from_name(j["event"].get<std::string>()))
        return "event is not a known event";
    if (!null_or_string(j["request"])) return "request is not a string or null";
    if (!j["verb"].is_null() &&
        !(j["verb"].is_string() && verb_from_name(j["verb"].get<std::string>())))
        return "verb is not a verb name or null";
    if (!null_or_string(j["arg"])) return "arg is not a string or null";
    if (!null_or_string(j["reason"])) return "reason is not a string or null";
    if (!null_or_integer(j["exit_code"], INT_MIN, INT_MAX))
        return "exit_code is not an integer or null";
    if (!null_or_integer(j["duration_ms"], INT64_MIN, INT64_MAX))
        return "duration_ms is not an integer or null";
    if (!is_lower_hex64(j["prev"])) return "prev is not 64 lowercase hex digits";
    if (!is_lower_hex64(j["hash"])) return "hash is not 64 lowercase hex digits";
    // The hash covers a re-dump of the parsed line, so the line itself must
    // be exactly that text: no spacing, escaping or duplicate key differs.
    if (dump(j) != line.text) return "not in canonical form";
    return std::nullopt;
}

}  // namespace

Result<AuditVerifyReport> verify_audit_log(const std::string& state_dir) {
    UniqueFd dir_fd(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir_fd) return make_error(errno_text("audit log: state dir " + state_dir));
    // Held throughout: a concurrent append must not look like a torn line,
    // and no rotation may shift the files while we walk them.
    auto locked = lock_current_shared(dir_fd.get());
    if (!locked) return locked.error();
    const UniqueFd live = std::move(*locked);
    std::optional<Unlocker> unlock;
    if (live) unlock.emplace(live.get());

    std::vector<std::string> files;
    for (int i = kAuditRotatedFiles; i >= 0; --i) {
        const std::string name = i == 0 ? std::string(kAuditLogName) : rotated_name(i);
        struct stat st {};
        if (::fstatat(dir_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            files.push_back(name);
        } else if (errno != ENOENT) {
            return make_error(errno_text("audit log: stat " + name));
        }
    }

    AuditVerifyReport report;
    auto bad = [&report](const Line& line, const std::string& why) {
        report.first_bad = line.label + " line " + std::to_string(line.number) + ": " + why;
        return report;
    };
    LineSource source(dir_fd.get(), files);
    bool started = false;
    std::uint64_t seq = 0;
    std::string prev(kZeroHash);

    Line current;
    Line next;
    auto fetch = [&source](Line& line) {
        if (!source.next(line)) return false;
        line.json = ordered_json::parse(line.text, nullptr, /*allow_exceptions=*/false);
        return true;
    };
    if (!fetch(current)) {
        if (current.too_long) return bad(current, "longer than 1 MiB");
        if (!source.error().empty()) return make_error(source.error());
        return report;  // no log yet
    }
    while (true) {
        const bool have_next = fetch(next);
        const bool next_failed = !have_next && !source.error().empty();
        // A fragment left by a crash is skipped, but only where the next
        // writer said so, with the fragment's exact length.
        if (have_next && recovers(next, current.text.size())) {
            ++report.torn_fragments;
        } else {
            if (!current.terminated) {
                return bad(current, "torn line of " + std::to_string(current.text.size()) +
                                        " bytes (no newline) not followed by a `recovered` "
                                        "event; the next append records it");
            }
            const ordered_json& j = current.json;
            if (j.is_discarded()) return bad(current, "not valid JSON");
            if (auto problem = shape_problem(current, j)) return bad(current, *problem);
            const auto line_seq = j["seq"].get<std::uint64_t>();
            const auto& line_prev = j["prev"].get_ref<const std::string&>();
            if (!started) {
                // Rotation drops history beyond .8; anywhere else the chain
                // must start at its very beginning.
                const bool dropped_history = current.label == rotated_name(kAuditRotatedFiles);
                if (!dropped_history && (line_seq != 1 || line_prev != kZeroHash))
                    return bad(current,
                               "the chain does not start at seq 1 with a zero prev (earlier "
                               "log files missing?)");
            } else {
                if (line_seq != seq + 1)
                    return bad(current, "seq " + std::to_string(line_seq) + ", expected " +
                                            std::to_string(seq + 1));
                if (line_prev != prev)
                    return bad(current, "prev does not match the previous line's hash");
            }
            // The line is canonical (checked above), so the hashed text is the
            // line with its final `,"hash":"<64 hex>"}` turned back into `}`.
            constexpr std::size_t kHashSuffix = std::string_view(",\"hash\":\"\"}").size() + 64;
            const std::string_view text(current.text);
            const std::string expected = sha256_hex(
                line_prev + "\n" + std::string(text.substr(0, text.size() - kHashSuffix)) + "}");
            if (j["hash"].get_ref<const std::string&>() != expected)
                return bad(current, "hash does not match the line's content");
            started = true;
            seq = line_seq;
            prev = expected;
            ++report.lines;
        }
        if (next_failed) {
            if (next.too_long) return bad(next, "longer than 1 MiB");
            return make_error(source.error());
        }
        if (!have_next) break;
        current = std::move(next);
    }
    return report;
}

}  // namespace hb::exec
