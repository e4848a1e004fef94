#include "cli/audit_tools.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/process.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::cli {
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

std::string string_field(const json& entry, const char* key) {
    const auto it = entry.find(key);
    if (it == entry.end() || !it->is_string()) return {};
    return it->get<std::string>();
}

}  // namespace

Result<PruneOutcome> prune_audit_log(const std::string& state_dir, const std::string& before) {
    if (!valid_date(before))
        return make_error("--prune-before needs a date YYYY-MM-DD, not " + before);
    const std::string cutoff = before + "T00:00:00.000Z";
    // Pruning removes evidence: only from a chain that is whole.
    auto report = exec::verify_audit_log(state_dir);
    if (!report) return report.error();
    if (report->first_bad)
        return make_error("the audit chain is broken (" + *report->first_bad +
                          "); not pruning a log that does not verify");
    auto files = exec::audit_log_files(state_dir);
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

    auto log = exec::AuditLog::open(state_dir);
    if (!log) return log.error();
    exec::AuditRecord event;
    event.event = exec::AuditEvent::Pruned;
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
    if (::stat(exec::kJournalSocket, &st) != 0)
        return make_error(std::string("no journal runs here (no socket at ") +
                          exec::kJournalSocket + ")");
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

}  // namespace hb::cli
