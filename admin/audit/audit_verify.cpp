// The audit log verifier (docs/AUDIT-LOG.md): streams every
// segment under a shared lock and checks each line against the format the
// drain writes (common/audit_format.hpp).
#include "admin/audit/audit_verify.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <map>
#include <nlohmann/json.hpp>

#include "common/audit_format.hpp"
#include "common/audit_log.hpp"
#include "common/sha256.hpp"
#include "ipc/sys.hpp"

namespace hb::admin {

using common::audit_segment_index;
using common::audit_segment_name;
using common::AuditEvent;
using common::kAuditEventNames;
using common::sha256_hex;

using namespace common::audit_format;
using nlohmann::ordered_json;
using sys::errno_text;

std::optional<AuditEvent> audit_event_from_name(std::string_view name) {
    return value_of(kAuditEventNames, name);
}

Result<std::vector<std::string>> audit_log_files(const std::string& state_dir) {
    UniqueFd dir_fd(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir_fd) return make_error(errno_text("audit log: state dir " + state_dir));
    return common::audit_log_files(dir_fd.get());
}

namespace {

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

}  // namespace

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
    // The fixed keys, with the optional ones that are present in their place.
    std::vector<std::string_view> keys(kKeys.begin(), kKeys.end() - 2);
    for (const auto key : kOptionalKeys) {
        if (j.contains(key)) keys.push_back(key);
    }
    keys.insert(keys.end(), kKeys.end() - 2, kKeys.end());
    std::size_t i = 0;
    for (const auto& item : j.items()) {
        if (i >= keys.size()) return "unexpected key \"" + item.key() + "\" after \"hash\"";
        if (item.key() != keys[i])
            return "key \"" + item.key() + "\" where \"" + std::string(keys[i]) + "\" belongs";
        ++i;
    }
    if (i < keys.size()) return "missing key \"" + std::string(keys[i]) + "\"";
    if (j.contains("actor") && !j["actor"].is_string()) return "actor is not a string";
    if (j.contains("detail") && !j["detail"].is_object()) return "detail is not an object";
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

// Does a `pruned` event say the chain now starts at (seq, prev)?
bool prune_anchors(const ordered_json& j, std::uint64_t seq, const std::string& prev) {
    if (j["event"] != "pruned" || !j.contains("detail")) return false;
    const auto& d = j["detail"];
    return d.contains("first_seq") && d["first_seq"].is_number_unsigned() &&
           d["first_seq"].get<std::uint64_t>() == seq && d.contains("first_prev") &&
           d["first_prev"] == prev;
}

}  // namespace

Result<AuditVerifyReport> verify_audit_log(const std::string& state_dir,
                                           const AuditAnchors* anchors) {
    UniqueFd dir_fd(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir_fd) return make_error(errno_text("audit log: state dir " + state_dir));
    // Held throughout: a concurrent append must not look like a torn line,
    // and no new segment may start while we walk them.
    std::string live_name;
    auto locked = lock_current_shared(dir_fd.get(), &live_name);
    if (!locked) return locked.error();
    const UniqueFd live = std::move(*locked);
    std::optional<sys::FlockGuard> unlock;
    if (live) unlock.emplace(live.get());

    auto listed = common::audit_log_files(dir_fd.get());
    if (!listed) return listed.error();
    std::vector<std::string> files = std::move(*listed);

    AuditVerifyReport report;
    // Segments never move, so a gap in their indices is a removed file, and
    // an empty segment before the newest one was cut to nothing.
    std::uint64_t expected_index = 0;
    for (std::size_t i = 0; i < files.size(); ++i) {
        struct stat st {};
        if (::fstatat(dir_fd.get(), files[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return make_error(errno_text("audit log: stat " + files[i]));
        report.bytes += static_cast<std::uint64_t>(st.st_size);
        ++report.segments;
        const auto index = audit_segment_index(files[i]);
        if (index) {
            if (expected_index != 0 && *index != expected_index) {
                report.first_bad = audit_segment_name(expected_index) +
                                   ": segment missing (the log goes on in " + files[i] + ")";
                return report;
            }
            expected_index = *index + 1;
        }
        if (st.st_size == 0 && i + 1 < files.size()) {
            report.first_bad =
                files[i] + ": empty, but " + files[i + 1] + " comes after it: the segment was cut";
            return report;
        }
    }

    auto bad = [&report](const Line& line, const std::string& why) {
        report.first_bad = line.label + " line " + std::to_string(line.number) + ": " + why;
        return report;
    };
    std::map<std::uint64_t, std::string> anchor_map;
    if (anchors) {
        for (const auto& [seq, hash] : *anchors) anchor_map[seq] = hash;
    }
    LineSource source(dir_fd.get(), files);
    bool started = false;
    std::uint64_t seq = 0;
    std::string prev(kZeroHash);
    std::string prev_label;
    // Where the chain starts when it does not start at seq 1: a `pruned`
    // event later on must say so.
    std::optional<Line> unanchored_start;
    std::string start_prev;

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
                return bad(current,
                           "torn line of " + std::to_string(current.text.size()) +
                               " bytes (no newline) not followed by a `recovered` "
                               "event; the next append records it" +
                               (current.label != live_name ? " (not the newest segment: it was cut)"
                                                           : ""));
            }
            const ordered_json& j = current.json;
            if (j.is_discarded()) return bad(current, "not valid JSON");
            if (auto problem = shape_problem(current, j)) return bad(current, *problem);
            const auto line_seq = j["seq"].get<std::uint64_t>();
            const auto& line_prev = j["prev"].get_ref<const std::string&>();
            if (!started) {
                // The first event ever written, or where a prune left it.
                report.first_seq = line_seq;
                report.first_event = j["event"].get<std::string>();
                if (line_seq != 1 || line_prev != kZeroHash) {
                    unanchored_start = current;
                    start_prev = line_prev;
                }
            } else {
                if (line_seq != seq + 1) {
                    std::string why =
                        "seq " + std::to_string(line_seq) + ", expected " + std::to_string(seq + 1);
                    if (current.number == 1 && current.label != prev_label)
                        why += ": " + prev_label + " ends at seq " + std::to_string(seq) +
                               ", so it was cut short";
                    return bad(current, why);
                }
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
            if (unanchored_start && prune_anchors(j, report.first_seq, start_prev))
                unanchored_start.reset();
            if (auto a = anchor_map.find(line_seq); a != anchor_map.end()) {
                if (a->second != expected)
                    return bad(current, "the journal recorded another hash for seq " +
                                            std::to_string(line_seq) + " (" + a->second + ")");
                ++report.anchors_checked;
            }
            started = true;
            seq = line_seq;
            prev = expected;
            prev_label = current.label;
            report.last_seq = seq;
            ++report.lines;
        }
        if (next_failed) {
            if (next.too_long) return bad(next, "longer than 1 MiB");
            return make_error(source.error());
        }
        if (!have_next) break;
        current = std::move(next);
    }
    if (unanchored_start) {
        return bad(*unanchored_start,
                   "the chain does not start at seq 1 with a zero prev (it starts at seq " +
                       std::to_string(report.first_seq) +
                       "): the first event ever written and the segments after it are missing, "
                       "and no `pruned` event records their removal");
    }
    // An anchor past the end: the journal saw lines the log no longer has.
    if (!anchor_map.empty() && anchor_map.rbegin()->first > report.last_seq) {
        report.first_bad = "the journal recorded seq " +
                           std::to_string(anchor_map.rbegin()->first) +
                           " but the log ends at seq " + std::to_string(report.last_seq) + " in " +
                           prev_label + ": the log was cut";
    }
    return report;
}
}  // namespace hb::admin
