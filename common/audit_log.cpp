// The audit log: hash-chained JSON lines, appended under an exclusive flock
// on the log file itself, since drains acknowledging requests write
// concurrently from several processes. Format, and the choices made where
// the design left one open: docs/AUDIT-LOG.md.
#include "common/audit_log.hpp"
#include "common/audit_format.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/sha256.hpp"
#include "ipc/sys.hpp"

namespace hb::common {
namespace audit_format {

using nlohmann::ordered_json;
using sys::errno_text;

// A record we write is far smaller; a longer line is refused on write
// (kMaxReadLine bounds what a reader holds).
constexpr std::size_t kMaxWriteLine = 64 * 1024;
// Each retry follows a rotation by another process; more than this many in
// one append means something is wrong with the state dir.
constexpr int kMaxAttempts = 64;

std::string dump(const ordered_json& value) {
    return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

bool is_lower_hex64(const ordered_json& value) {
    if (!value.is_string()) return false;
    const auto& text = value.get_ref<const std::string&>();
    return sys::is_lower_hex(text, 64);
}

std::string escape_request(std::string_view raw) {
    return sys::escape_unprintable(raw);
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

std::string torn_reason(std::uint64_t bytes) {
    return "torn line of " + std::to_string(bytes) + " bytes";
}

// --- small I/O helpers ------------------------------------------------------

bool pread_all(int fd, char* buffer, std::size_t length, off_t offset) {
    return sys::pread_full(fd, buffer, length, offset) == static_cast<ssize_t>(length);
}
using sys::flock_retry;
using sys::write_all;

// Offset of the last '\n' in [0, end), -1 when there is none. Reads
// backwards in chunks; gives up (returns false) after `limit` bytes.
bool find_last_newline(int fd, off_t end, std::size_t limit, off_t& found) {
    char buffer[kChunk];
    std::size_t scanned = 0;
    // A line is a few hundred bytes: start small and grow, so that each
    // append does not copy 64 KiB twice to find the line it chains to.
    std::size_t chunk = 1024;
    while (end > 0) {
        if (scanned >= limit) return false;
        const auto length = static_cast<std::size_t>(std::min<off_t>(end, chunk));
        chunk = std::min(chunk * 4, kChunk);
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

// Reads seq/prev from the current segment; a segment without a complete
// line (new after a rotation, or holding only a torn fragment) continues
// the chain of the one before it (segment 1: the legacy audit.jsonl.1),
// which is sealed: a writer only appends to the newest segment and checks
// under its lock that no newer one exists.
Result<ChainState> read_chain_state(int dir_fd, int fd, std::uint64_t segment) {
    ChainState state;
    const std::string name = audit_segment_name(segment);
    auto tail = read_file_tail(fd, name);
    if (!tail) return tail.error();
    state.torn_bytes = tail->torn_bytes;
    state.torn_in_current = tail->torn_bytes > 0;
    if (tail->last_line) {
        if (auto r = take_last_line(*tail->last_line, name, state); !r) return r.error();
        return state;
    }
    const std::string previous =
        segment > 1 ? audit_segment_name(segment - 1) : audit_legacy_rotated_name(1);
    UniqueFd old = open_log_for_reading(dir_fd, previous);
    if (!old) {
        if (errno == ENOENT && segment == 1) return state;  // the very first line of the chain
        return make_error(errno_text(previous + ": open (the segment before " + name + ")"));
    }
    auto old_tail = read_file_tail(old.get(), previous);
    if (!old_tail) return old_tail.error();
    if (!old_tail->last_line) return make_error(previous + ": holds no complete line");
    if (auto r = take_last_line(*old_tail->last_line, previous, state); !r) return r.error();
    if (!state.torn_in_current && old_tail->torn_bytes > 0) state.torn_bytes = old_tail->torn_bytes;
    return state;
}

// The highest segment index present, 0 when there is none.
Result<std::uint64_t> newest_segment(int dir_fd) {
    auto files = audit_log_files(dir_fd);
    if (!files) return files.error();
    std::uint64_t newest = 0;
    for (const auto& name : *files) {
        if (auto index = audit_segment_index(name)) newest = std::max(newest, *index);
    }
    return newest;
}

Result<UniqueFd> lock_current_shared(int dir_fd, std::string* name_out) {
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
        auto newest = newest_segment(dir_fd);
        if (!newest) return newest.error();
        if (*newest == 0) return UniqueFd();
        const std::string name = audit_segment_name(*newest);
        UniqueFd fd = open_log_for_reading(dir_fd, name);
        if (!fd) {
            if (errno == ENOENT) continue;
            return make_error(errno_text("audit log: open " + name));
        }
        if (!flock_retry(fd.get(), LOCK_SH)) return make_error(errno_text("audit log: flock"));
        // A newer segment started meanwhile: take that one.
        if (sys::exists_at(dir_fd, audit_segment_name(*newest + 1))) continue;
        if (name_out) *name_out = name;
        return fd;
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
    if (record.actor) j["actor"] = *record.actor;
    if (record.detail) j["detail"] = *record.detail;
    j["prev"] = prev;
    hash = sha256_hex(prev + "\n" + dump(j));
    j["hash"] = hash;
    std::string line = dump(j) + "\n";
    if (line.size() > kMaxWriteLine) return make_error("audit log: record larger than 64 KiB");
    return line;
}

UniqueFd open_log_for_append(int dir_fd, const std::string& name, bool exclusive = false) {
    return UniqueFd(::openat(dir_fd, name.c_str(),
                             O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
                                 O_NOCTTY | (exclusive ? O_EXCL : 0),
                             0600));
}

Result<UniqueFd> open_checked(int dir_fd, const std::string& dir, const std::string& name) {
    const std::string path = dir + "/" + name;
    UniqueFd fd = open_log_for_append(dir_fd, name);
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

// --- the budget of agent-caused events ----------------------------------------

// What audit-budget.json holds; read and written only under the exclusive
// lock of the newest segment, like the log itself.
struct BudgetState {
    std::int64_t window_start = 0;       // the current window, seconds since the epoch
    std::uint64_t used = 0;              // bytes logged one by one in it
    std::vector<std::string> open_runs;  // `started` requests without a final event yet
    // The pending summary: events of `pending_window` that were not logged.
    std::int64_t pending_window = 0;
    std::uint64_t suppressed = 0;
    std::uint64_t suppressed_bytes = 0;
    std::map<std::string, std::uint64_t> by_event;
    std::map<std::string, std::uint64_t> by_reason;
    std::string first;
    std::string last;
    std::vector<std::string> sha256;
    bool changed = false;
};

// More distinct reasons than this are counted under "other".
constexpr std::size_t kMaxReasons = 32;
constexpr std::size_t kMaxOpenRuns = 64;
constexpr std::size_t kBudgetPage = 4096;

Result<BudgetState> load_budget(int dir_fd) {
    BudgetState state;
    const std::string name(kAuditBudgetName);
    UniqueFd fd = open_log_for_reading(dir_fd, name);
    if (!fd) {
        if (errno == ENOENT) return state;
        return make_error(errno_text("audit log: open " + name));
    }
    std::string text;
    if (!sys::read_all(fd.get(), text, kMaxReadLine))
        return make_error(errno_text("audit log: read " + name));
    if (text.size() > kMaxReadLine) return make_error("audit log: " + name + " is too large");
    // The page's padding is blanks: cut it rather than lex 4 KiB of them.
    text.erase(text.find_last_not_of(" \n") + 1);
    // Fail closed on a damaged file: its counts are history not yet logged.
    const auto j = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
    try {
        if (!j.is_object()) throw std::runtime_error("not an object");
        state.window_start = j.at("window_start").get<std::int64_t>();
        state.used = j.at("used").get<std::uint64_t>();
        state.open_runs = j.at("open_runs").get<std::vector<std::string>>();
        const auto& p = j.at("pending");
        state.pending_window = p.at("window_start").get<std::int64_t>();
        state.suppressed = p.at("events").get<std::uint64_t>();
        state.suppressed_bytes = p.at("bytes").get<std::uint64_t>();
        state.by_event = p.at("by_event").get<std::map<std::string, std::uint64_t>>();
        state.by_reason = p.at("by_reason").get<std::map<std::string, std::uint64_t>>();
        state.first = p.at("first").get<std::string>();
        state.last = p.at("last").get<std::string>();
        state.sha256 = p.at("sha256").get<std::vector<std::string>>();
    } catch (const std::exception& e) {
        return make_error("audit log: " + name + " is damaged (" + e.what() +
                          "); it holds counts not yet logged: look at it, then remove it");
    }
    return state;
}

// The pending counts, as the state file keeps them and the summary event
// reports them (under the same keys).
void add_pending_counts(ordered_json& j, const BudgetState& state) {
    j["events"] = state.suppressed;
    j["bytes"] = state.suppressed_bytes;
    j["by_event"] = state.by_event;
    j["by_reason"] = state.by_reason;
    j["first"] = state.first;
    j["last"] = state.last;
    j["sha256"] = state.sha256;
}

Result<void> save_budget(int dir_fd, const BudgetState& state) {
    ordered_json p;
    p["window_start"] = state.pending_window;
    add_pending_counts(p, state);
    ordered_json j;
    j["window_start"] = state.window_start;
    j["used"] = state.used;
    j["open_runs"] = state.open_runs;
    j["pending"] = p;
    std::string text = dump(j);
    const std::string name(kAuditBudgetName);
    // The counts change with every event the agent causes. Where they fit
    // in one page, the file is that page, padded with blanks (still JSON),
    // and overwritten in place with one page-aligned pwrite, which a killed
    // drain leaves old or new (a power cut might tear it: load_budget then
    // fails closed); on an ext4 root filesystem a file renamed over another
    // per event costs a freed inode and block (docs/PERFORMANCE.md).
    if (text.size() < kBudgetPage) {
        text.resize(kBudgetPage - 1, ' ');
        text += '\n';
        UniqueFd fd(::openat(dir_fd, name.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
        struct stat st {};
        if (fd && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_size == static_cast<off_t>(kBudgetPage)) {
            if (::pwrite(fd.get(), text.data(), kBudgetPage, 0) !=
                static_cast<ssize_t>(kBudgetPage))
                return make_error(errno_text("audit log: write " + name));
            return {};
        }
    } else {
        text += '\n';
    }
    const std::string tmp = name + ".tmp";
    // Otherwise replaced whole, so a crash leaves the old or the new counts.
    UniqueFd fd(::openat(dir_fd, tmp.c_str(),
                         O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600));
    if (!fd) return make_error(errno_text("audit log: create " + tmp));
    if (!write_all(fd.get(), text)) return make_error(errno_text("audit log: write " + tmp));
    fd.reset();
    if (::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0)
        return make_error(errno_text("audit log: rename " + tmp));
    return {};
}

// "regular file, 57 bytes, sha256 <hex>" (executor/evidence.hpp) -> <hex>.
std::optional<std::string> evidence_hash(const std::optional<std::string>& reason) {
    if (!reason) return std::nullopt;
    const std::string_view marker = "sha256 ";
    std::size_t at = reason->rfind(marker);
    if (at == std::string::npos) return std::nullopt;
    at += marker.size();
    if (reason->size() < at + 64) return std::nullopt;
    std::string hex = reason->substr(at, 64);
    if (!is_lower_hex64(ordered_json(hex))) return std::nullopt;
    return hex;
}

// The reason up to the first "; ": the fixed reason text, without evidence.
std::string reason_key(const std::optional<std::string>& reason) {
    if (!reason) return "-";
    return reason->substr(0, reason->find("; "));
}

void count_suppressed(BudgetState& state, const AuditRecord& record, std::size_t bytes) {
    const std::string name = record.request ? escape_request(*record.request) : "";
    if (state.suppressed == 0) {
        state.pending_window = state.window_start;
        state.first = name;
        state.by_event.clear();
        state.by_reason.clear();
        state.sha256.clear();
        state.suppressed_bytes = 0;
    }
    ++state.suppressed;
    state.suppressed_bytes += bytes;
    state.last = name;
    ++state.by_event[std::string(audit_event_name(record.event))];
    std::string key = reason_key(record.reason);
    if (!state.by_reason.contains(key) && state.by_reason.size() >= kMaxReasons) key = "other";
    ++state.by_reason[key];
    if (record.event == AuditEvent::Quarantined && state.sha256.size() < kAuditSummaryHashes) {
        if (auto hash = evidence_hash(record.reason)) state.sha256.push_back(*hash);
    }
    state.changed = true;
}

AuditRecord summary_record(const BudgetState& state, const AuditBudget& budget) {
    AuditRecord r;
    r.event = AuditEvent::Summary;
    r.actor = "executor";
    r.reason = std::to_string(state.suppressed) + " agent-caused events over the budget of " +
               std::to_string(budget.bytes) + " bytes per " +
               std::to_string(budget.window_seconds) +
               " s window, counted here instead of logged one by one (quarantined files stay in "
               "quarantine/)";
    ordered_json d;
    d["window_start"] = sys::format_utc(state.pending_window);
    d["window_end"] = sys::format_utc(state.pending_window + budget.window_seconds);
    d["budget_bytes"] = budget.bytes;
    add_pending_counts(d, state);
    r.detail = std::move(d);
    return r;
}

void clear_pending(BudgetState& state) {
    state.suppressed = 0;
    state.suppressed_bytes = 0;
    state.by_event.clear();
    state.by_reason.clear();
    state.first.clear();
    state.last.clear();
    state.sha256.clear();
    state.pending_window = 0;
    state.changed = true;
}

bool is_final(AuditEvent event) {
    switch (event) {
        case AuditEvent::Succeeded:
        case AuditEvent::Failed:
        case AuditEvent::Interrupted:
        case AuditEvent::Denied:
        case AuditEvent::Expired:
            return true;
        default:
            return false;
    }
}

// The native journal protocol: KEY=value lines; a value that may hold a
// newline goes as KEY\n<64-bit little-endian length><bytes>\n.
std::string journal_field(std::string_view key, std::string_view value) {
    std::string out(key);
    if (value.find('\n') == std::string_view::npos) {
        out += "=";
        out += value;
    } else {
        out += "\n";
        std::uint64_t n = value.size();
        for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
        out += value;
    }
    out += "\n";
    return out;
}

}  // namespace audit_format
using namespace audit_format;

std::string_view audit_event_name(AuditEvent event) {
    return name_of(kAuditEventNames, event);
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
    auto newest = newest_segment(dir_fd.get());
    if (!newest) return newest.error();
    const std::uint64_t segment = std::max<std::uint64_t>(*newest, 1);
    auto fd = open_checked(dir_fd.get(), state_dir, audit_segment_name(segment));
    if (!fd) return fd.error();
    return AuditLog(state_dir, std::move(dir_fd), std::move(*fd), segment,
                    std::max<std::uint64_t>(rotate_bytes, 1));
}

// Takes the exclusive lock on the newest segment. Our fd may be on a
// segment after which another process has started a new one: after
// locking, look for the next index and move on until there is none.
Result<void> AuditLog::lock_current() {
    if (owner_pid_ != ::getpid()) {
        fd_.reset();  // only this process's copy; the parent keeps its own
        journal_fd_.reset();
        owner_pid_ = ::getpid();
    }
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
        if (!fd_) {
            auto fd = open_checked(dir_fd_.get(), dir_, audit_segment_name(segment_));
            if (!fd) return fd.error();
            fd_ = std::move(*fd);
        }
        if (!flock_retry(fd_.get(), LOCK_EX)) return make_error(errno_text("audit log: flock"));
        const std::string next = audit_segment_name(segment_ + 1);
        struct stat named {};
        if (::fstatat(dir_fd_.get(), next.c_str(), &named, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) return {};
            return make_error(errno_text("audit log: stat " + next));
        }
        ::flock(fd_.get(), LOCK_UN);
        fd_.reset();
        ++segment_;
    }
    return make_error("audit log: the log file keeps changing under us");
}

// Called with the newest segment locked: creates the next one, empty. No
// file is ever renamed, so no history is ever dropped by a rotation.
Result<void> AuditLog::rotate() {
    const std::string next = audit_segment_name(segment_ + 1);
    UniqueFd created = open_log_for_append(dir_fd_.get(), next, /*exclusive=*/true);
    if (!created && errno != EEXIST) return make_error(errno_text("audit log: create " + next));
    if (::fsync(dir_fd_.get()) != 0) return make_error(errno_text("audit log: fsync state dir"));
    return {};
}

void AuditLog::send_to_journal(const std::string& fields) {
    if (!journal_) return;
    // Best effort, never blocking: the journal is a witness off the state
    // dir, not a condition for logging.
    if (!journal_fd_) {
        journal_fd_.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (!journal_fd_) return;
    }
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (journal_socket_.size() >= sizeof addr.sun_path) return;
    std::memcpy(addr.sun_path, journal_socket_.c_str(), journal_socket_.size() + 1);
    (void)::sendto(journal_fd_.get(), fields.data(), fields.size(), MSG_NOSIGNAL,
                   reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
}

void AuditLog::anchor(std::uint64_t seq, const std::string& hash) {
    std::string message;
    message += journal_field(
        "MESSAGE", "hostbridge audit seq " + std::to_string(seq) + " hash " + hash + " in " + dir_);
    message += journal_field("PRIORITY", "6");
    message += journal_field("SYSLOG_IDENTIFIER", "hostbridge-audit");
    message += journal_field("HOSTBRIDGE_AUDIT_DIR", dir_);
    message += journal_field("HOSTBRIDGE_AUDIT_SEQ", std::to_string(seq));
    message += journal_field("HOSTBRIDGE_AUDIT_HASH", hash);
    send_to_journal(message);
}

void AuditLog::notice(const std::string& message) {
    send_to_journal(journal_field("MESSAGE", message) + journal_field("PRIORITY", "5") +
                    journal_field("SYSLOG_IDENTIFIER", "hostbridge") +
                    journal_field("HOSTBRIDGE_AUDIT_DIR", dir_));
}

Result<void> AuditLog::append(const AuditRecord& record, bool sync) {
    return write(&record, Mode::Always, sync);
}

Result<void> AuditLog::append_agent(const AuditRecord& record) {
    return write(&record, Mode::Agent, false);
}

Result<void> AuditLog::flush_due_summary() {
    // Nothing to do without a budget file: no lock, no segment created.
    if (!sys::exists_at(dir_fd_.get(), std::string(kAuditBudgetName))) return {};
    return write(nullptr, Mode::FlushOnly, false);
}

Result<void> AuditLog::write(const AuditRecord* record, Mode mode, bool sync) {
    for (int attempt = 0; attempt < kMaxAttempts; ++attempt) {
        if (auto locked = lock_current(); !locked) return locked.error();
        const sys::FlockGuard unlock(fd_.get());
        struct stat st {};
        if (::fstat(fd_.get(), &st) != 0) return make_error(errno_text("audit log: fstat"));
        if (static_cast<std::uint64_t>(st.st_size) >= rotate_bytes_) {
            if (auto rotated = rotate(); !rotated) return rotated.error();
            continue;  // lock_current now moves on to the new segment
        }
        auto budget = load_budget(dir_fd_.get());
        if (!budget) return budget.error();
        BudgetState& b = *budget;
        const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
        const std::int64_t window =
            now -
            ((now % budget_.window_seconds) + budget_.window_seconds) % budget_.window_seconds;
        const bool summary_due =
            b.suppressed > 0 && now >= b.pending_window + budget_.window_seconds;
        if (mode == Mode::FlushOnly && !summary_due) return {};

        auto state = read_chain_state(dir_fd_.get(), fd_.get(), segment_);
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
        if (summary_due) {
            auto line = build_line(++seq, summary_record(b, budget_), prev, hash);
            if (!line) return line.error();
            out += *line;
            prev = hash;
            clear_pending(b);
        }
        if (record != nullptr) {
            const std::string name = record->request.value_or("");
            const auto open_run = std::find(b.open_runs.begin(), b.open_runs.end(), name);
            const bool ran = record->request && open_run != b.open_runs.end();
            bool log_it = true;
            std::string line_text;
            std::string line_hash;
            auto line = build_line(seq + 1, *record, prev, line_hash);
            if (!line) return line.error();
            if (mode == Mode::Agent && !ran) {
                if (b.window_start != window) {
                    b.window_start = window;
                    b.used = 0;
                    b.changed = true;
                }
                if (b.used + line->size() <= budget_.bytes) {
                    b.used += line->size();
                    b.changed = true;
                } else {
                    log_it = false;
                    count_suppressed(b, *record, line->size());
                }
            }
            if (log_it) {
                out += *line;
                ++seq;
                prev = line_hash;
                if (record->event == AuditEvent::Started && record->request) {
                    if (!ran) b.open_runs.push_back(name);
                    if (b.open_runs.size() > kMaxOpenRuns) b.open_runs.erase(b.open_runs.begin());
                    b.changed = true;
                } else if (ran && is_final(record->event)) {
                    b.open_runs.erase(open_run);
                    b.changed = true;
                }
            }
        }
        // One write: if it is cut short the result is a torn last line,
        // which the next append repairs.
        if (!out.empty() && !write_all(fd_.get(), out))
            return make_error(errno_text("audit log: write"));
        if (sync && ::fdatasync(fd_.get()) != 0)
            return make_error(errno_text("audit log: fdatasync"));
        // The first line of a new file is durable only with its name.
        if (sync && st.st_size == 0 && ::fsync(dir_fd_.get()) != 0)
            return make_error(errno_text("audit log: fsync state dir"));
        // The counts after the lines they no longer hold: a crash between
        // the two logs an event twice (as itself and counted), never loses one.
        if (b.changed) {
            if (auto saved = save_budget(dir_fd_.get(), b); !saved) return saved.error();
        }
        if (!out.empty()) anchor(seq, prev);
        return {};
    }
    return make_error("audit log: rotated under us too many times");
}

Result<std::string> AuditLog::tail(std::size_t max_bytes) const {
    auto locked = lock_current_shared(dir_fd_.get());
    if (!locked) return locked.error();
    if (!*locked) return std::string();
    const UniqueFd fd = std::move(*locked);
    const sys::FlockGuard unlock(fd.get());
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

}  // namespace hb::common
