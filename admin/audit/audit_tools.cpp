#include "admin/audit/audit_tools.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "admin/util/process.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {
namespace {

using nlohmann::json;

// The first and last complete lines of one segment, parsed.
struct Ends {
    json first;
    json last;
};

Result<Ends> segment_ends(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error("cannot read " + path);
    Ends ends;
    std::string line;
    std::string last;
    while (std::getline(in, line)) {
        if (in.eof()) break;  // torn: not a line yet
        if (ends.first.is_null()) ends.first = json::parse(line, nullptr, false);
        last = std::move(line);
    }
    if (last.empty()) return make_error(path + " holds no complete line");
    ends.last = json::parse(last, nullptr, false);
    if (ends.first.is_discarded() || ends.last.is_discarded() || !ends.last.contains("seq") ||
        !ends.last.contains("hash") || !ends.last.contains("ts"))
        return make_error(path + " holds a line that is not an audit record");
    return ends;
}

bool valid_date(const std::string& date) {
    static constexpr std::string_view kShape = "dddd-dd-dd";
    if (date.size() != kShape.size()) return false;
    for (std::size_t i = 0; i < date.size(); ++i) {
        const bool ok = kShape[i] == 'd' ? (date[i] >= '0' && date[i] <= '9') : date[i] == '-';
        if (!ok) return false;
    }
    return true;
}

// A calendar date and time that exists (no 2026-02-30), as the log writes it.
std::optional<std::string> utc_ts(int year, int month, int day, int hour, int minute, int second) {
    tm t{};
    t.tm_year = year - 1900;
    t.tm_mon = month - 1;
    t.tm_mday = day;
    t.tm_hour = hour;
    t.tm_min = minute;
    t.tm_sec = second;
    const std::time_t at = ::timegm(&t);
    tm back{};
    if (at == static_cast<std::time_t>(-1) || ::gmtime_r(&at, &back) == nullptr ||
        back.tm_year != year - 1900 || back.tm_mon != month - 1 || back.tm_mday != day ||
        back.tm_hour != hour || back.tm_min != minute || back.tm_sec != second) {
        return std::nullopt;
    }
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S.000Z", &back);
    return std::string(text);
}

std::string string_field(const json& entry, const char* key) {
    const auto it = entry.find(key);
    if (it == entry.end() || !it->is_string()) return {};
    return it->get<std::string>();
}

}  // namespace

Result<std::string> since_cutoff(const std::string& text, std::time_t now) {
    const auto bad = [&] {
        return make_error(
            "--since takes today, YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (UTC) or a time "
            "ago such as 90m, 12h or 7d; not " +
            text);
    };
    tm utc{};
    if (::gmtime_r(&now, &utc) == nullptr) return make_error("the clock reads no date");
    if (text == "today") {
        if (auto ts = utc_ts(utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, 0, 0, 0)) return *ts;
        return bad();
    }
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, used = 0;
    if (valid_date(text) && std::sscanf(text.c_str(), "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3 &&
        used == 10) {
        if (auto ts = utc_ts(y, mo, d, 0, 0, 0)) return *ts;
        return bad();
    }
    if (text.size() == 20 && valid_date(text.substr(0, 10)) && text[10] == 'T' && text[19] == 'Z' &&
        std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &s, &used) ==
            6 &&
        used == 20) {
        if (auto ts = utc_ts(y, mo, d, h, mi, s)) return *ts;
        return bad();
    }
    // N followed by one unit letter: at most ten years ago.
    if (text.size() >= 2 && text.size() <= 7) {
        const char unit = text.back();
        const std::string digits = text.substr(0, text.size() - 1);
        const long per = unit == 's'   ? 1
                         : unit == 'm' ? 60
                         : unit == 'h' ? 3600
                         : unit == 'd' ? 86400
                                       : 0;
        if (per != 0 && std::all_of(digits.begin(), digits.end(),
                                    [](char c) { return c >= '0' && c <= '9'; })) {
            const long n = std::stol(digits);
            if (n * per <= 10L * 366 * 86400) {
                const std::time_t at = now - static_cast<std::time_t>(n * per);
                tm t{};
                ::gmtime_r(&at, &t);
                if (auto ts = utc_ts(t.tm_year + 1900, t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min,
                                     t.tm_sec))
                    return *ts;
            }
        }
    }
    return bad();
}

Result<PruneOutcome> prune_audit_log(const std::string& state_dir, const std::string& before) {
    if (!valid_date(before))
        return make_error("--prune-before needs a date YYYY-MM-DD, not " + before);
    const std::string cutoff = before + "T00:00:00.000Z";
    // Pruning removes evidence: only from a chain that is whole.
    auto report = admin::verify_audit_log(state_dir);
    if (!report) return report.error();
    if (report->first_bad)
        return make_error("the audit chain is broken (" + *report->first_bad +
                          "); not pruning a log that does not verify");
    auto files = admin::audit_log_files(state_dir);
    if (!files) return files.error();
    PruneOutcome outcome;
    json last_removed;
    // Never the newest segment: appends go there.
    for (std::size_t i = 0; i + 1 < files->size(); ++i) {
        auto ends = segment_ends(state_dir + "/" + (*files)[i]);
        if (!ends) return ends.error();
        if (!(ends->last["ts"].is_string() && ends->last["ts"].get<std::string>() < cutoff)) break;
        outcome.removed.push_back((*files)[i]);
        last_removed = ends->last;
    }
    if (outcome.removed.empty()) return outcome;
    outcome.first_seq = last_removed["seq"].get<std::uint64_t>() + 1;

    auto log = common::AuditLog::open(state_dir);
    if (!log) return log.error();
    common::AuditRecord event;
    event.event = common::AuditEvent::Pruned;
    event.actor = "admin";
    event.reason = "removed " + std::to_string(outcome.removed.size()) +
                   " segment(s) whose events are all older than " + before +
                   "; the chain now starts at seq " + std::to_string(outcome.first_seq);
    nlohmann::ordered_json detail;
    detail["before"] = before;
    detail["removed"] = outcome.removed;
    detail["first_seq"] = outcome.first_seq;
    detail["first_prev"] = last_removed["hash"];
    event.detail = std::move(detail);
    // Written (and durable) before anything goes: a crash in between
    // leaves a log that still verifies from seq 1.
    if (auto appended = log->append(event, /*sync=*/true); !appended) return appended.error();
    UniqueFd dir(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return make_error("cannot open " + state_dir + ": " + std::strerror(errno));
    for (const auto& name : outcome.removed) {
        if (::unlinkat(dir.get(), name.c_str(), 0) != 0 && errno != ENOENT)
            return make_error("cannot remove " + state_dir + "/" + name + ": " +
                              std::strerror(errno));
    }
    ::fsync(dir.get());
    return outcome;
}

JournalAnchors parse_journal_anchors(const std::string& json_lines, const std::string& uid,
                                     const std::string& executor_real_path) {
    JournalAnchors out;
    std::istringstream in(json_lines);
    for (std::string line; std::getline(in, line);) {
        const json entry = json::parse(line, nullptr, false);
        if (!entry.is_object()) continue;
        const std::string seq = string_field(entry, "HOSTBRIDGE_AUDIT_SEQ");
        const std::string hash = string_field(entry, "HOSTBRIDGE_AUDIT_HASH");
        if (seq.empty() || hash.size() != 64) continue;
        // _UID and _EXE come from the kernel via journald; any process of the
        // same user can send the other fields.
        if (string_field(entry, "_UID") != uid ||
            string_field(entry, "_EXE") != executor_real_path) {
            ++out.ignored;
            continue;
        }
        char* end = nullptr;
        errno = 0;
        const unsigned long long value = std::strtoull(seq.c_str(), &end, 10);
        if (errno != 0 || end == seq.c_str() || *end != '\0') {
            ++out.ignored;
            continue;
        }
        out.anchors.emplace_back(value, hash);
    }
    return out;
}

Result<JournalAnchors> read_journal_anchors(const std::string& state_dir,
                                            const std::string& executor) {
    struct stat st {};
    if (::stat(common::kJournalSocket, &st) != 0)
        return make_error(std::string("no journal runs here (no socket at ") +
                          common::kJournalSocket + ")");
    std::string journalctl;
    for (const char* candidate : {"/usr/bin/journalctl", "/bin/journalctl"}) {
        if (::access(candidate, X_OK) == 0) {
            journalctl = candidate;
            break;
        }
    }
    if (journalctl.empty()) return make_error("journalctl is not installed");
    char real[PATH_MAX];
    if (::realpath(executor.c_str(), real) == nullptr)
        return make_error("the installed executor " + executor + ": " + std::strerror(errno));
    RunOptions options;
    options.timeout = std::chrono::seconds(60);
    auto ran = run_process(
        {journalctl, "-o", "json", "--no-pager", "-q", "HOSTBRIDGE_AUDIT_DIR=" + state_dir},
        options);
    if (!ran) return ran.error();
    if (!ran->ok()) return make_error("journalctl failed: " + ran->err.substr(0, 500));
    return parse_journal_anchors(ran->out, std::to_string(::getuid()), real);
}

}  // namespace hb::admin
