// `hostbridge audit`: reads the audit log of one install (or of every
// install, merged by time): a table a person can scan, the raw JSON lines, a
// follow mode, and the hash-chain check.
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <deque>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "admin/audit/audit_tools.hpp"
#include "admin/audit/audit_verify.hpp"
#include "admin/commands/commands.hpp"
#include "admin/util/args.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/slug.hpp"
#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "display/visible.hpp"
#include "ipc/request_name.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {

using display::table_cell;
using display::visible;
using display::visible_json;

namespace {

constexpr std::string_view kCmd = "audit";

const char* const kHelp =
    R"(usage: hostbridge audit [--slug SLUG] [--since TIME] [--tail N] [--follow] [--json]
       hostbridge audit --all [--since TIME] [--tail N] [--json]
       hostbridge audit [--slug SLUG] --verify [--journal]
       hostbridge audit [--slug SLUG] --prune-before YYYY-MM-DD

Prints the audit log of an install, oldest first, as a table: time, event,
request name, verb, arg, outcome (the exit code), duration, reason. Control,
bidirectional and zero-width characters are shown as escapes (\x1b, \u202e).

  --slug SLUG   the install (default: the one whose project holds the cwd)
  --all         every install of this user, merged oldest first, with a
                SLUG column (--json: a "slug" key first in each line)
  --since TIME  only events at or after TIME: today, YYYY-MM-DD,
                YYYY-MM-DDTHH:MM:SSZ (UTC), or a time ago (90m, 12h, 7d)
  --tail N      only the last N events
  --follow      keep printing events as they are written (Ctrl-C to stop);
                starts with the last 10 unless --tail says otherwise
  --json        the JSON lines instead of the table (DEL, C1, bidirectional
                and zero-width characters as \u escapes: the same values)
  --verify      check the hash chain across all segments, from the first
                event ever written (or the last `pruned` event's start);
                prints the first bad line or missing segment and exits 1
                when it is broken
  --journal     with --verify: also check each (seq, hash) the installed
                executor sent to the journal is in the log (a cut log fails)
  --prune-before DATE
                remove whole old segments whose events are all before DATE
                (UTC), after writing a `pruned` event that anchors the chain

Exit: 0 ok (or chain intact), 1 failed (or chain broken), 2 usage error.
)";

const OptionSpec kSpecs[] = {
    {"slug", true, false},         {"tail", true, false},    {"follow", false, false},
    {"json", false, false},        {"verify", false, false}, {"journal", false, false},
    {"prune-before", true, false}, {"all", false, false},    {"since", true, false}};

// A full request name (51 bytes at most) fits its column.
constexpr std::size_t kRequestWidth = 52;

// One cell, as display/visible.hpp's table_cell makes it: no run of spaces, no
// line break, cut at `width`.
std::string field(const nlohmann::json& j, const char* key, std::size_t width = 0) {
    if (!j.contains(key) || j[key].is_null()) return "-";
    if (j[key].is_string()) return table_cell(j[key].get<std::string>(), width);
    return table_cell(j[key].dump(), width);
}

// A name the agent chose off the request-name schema (a quarantined file)
// is marked as such, so it never passes for a request.
std::string request_field(const nlohmann::json& j) {
    if (!j.contains("request") || !j["request"].is_string()) return field(j, "request");
    const std::string name = j["request"].get<std::string>();
    if (is_request_name(name)) return name;
    return "?" + table_cell(name, kRequestWidth - 1);
}

// With --all, the install each row comes from (a slug: no escapes needed).
struct SlugColumn {
    std::size_t width = 0;  // 0: no column
};

void print_header(const SlugColumn& slug) {
    if (slug.width > 0)
        std::cout << std::left << std::setw(slug.width) << "SLUG"
                  << "  ";
    std::cout << std::left << std::setw(25) << "TIME"
              << "  " << std::setw(11) << "EVENT"
              << "  " << std::setw(kRequestWidth) << "REQUEST"
              << "  " << std::setw(12) << "VERB"
              << "  " << std::setw(12) << "ARG"
              << "  " << std::setw(8) << "OUTCOME"
              << "  " << std::setw(9) << "DURATION"
              << "  REASON\n";
}

void print_row(const std::string& line, bool json, const std::string& slug = "",
               const SlugColumn& column = {}) {
    if (json) {
        // The same JSON value, with nothing a terminal would act on; with
        // --all the install's slug (a validated name) as the first key.
        std::string shown = line;
        if (column.width > 0) {
            const auto j = nlohmann::ordered_json::parse(line, nullptr, false);
            if (j.is_object()) {
                nlohmann::ordered_json tagged = {{"slug", slug}};
                for (const auto& [key, value] : j.items()) tagged[key] = value;
                shown = tagged.dump();
            }
        }
        std::cout << visible_json(shown) << "\n";
        return;
    }
    if (column.width > 0) std::cout << std::left << std::setw(column.width) << slug << "  ";
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
        std::cout << "(unreadable line: " << visible(line.substr(0, 80)) << ")\n";
        return;
    }
    if (!j.is_object()) {
        std::cout << "(unreadable line)\n";
        return;
    }
    std::string outcome = "-";
    if (j.contains("exit_code") && j["exit_code"].is_number_integer()) {
        outcome = "exit " + std::to_string(j["exit_code"].get<long>());
    }
    std::string duration = "-";
    if (j.contains("duration_ms") && j["duration_ms"].is_number_integer()) {
        std::ostringstream d;
        d << std::fixed << std::setprecision(1)
          << static_cast<double>(j["duration_ms"].get<long>()) / 1000.0 << " s";
        duration = d.str();
    }
    std::cout << std::left << std::setw(25) << field(j, "ts", 25) << "  " << std::setw(11)
              << field(j, "event", 11) << "  " << std::setw(kRequestWidth) << request_field(j)
              << "  " << std::setw(12) << field(j, "verb", 12) << "  " << std::setw(12)
              << field(j, "arg") << "  " << std::setw(8) << outcome << "  " << std::setw(9)
              << duration << "  " << field(j, "reason") << "\n";
}

// Every complete line of the log files, oldest file first.
std::vector<std::string> log_files(const std::string& state_dir) {
    std::vector<std::string> files;
    if (auto names = admin::audit_log_files(state_dir)) {
        for (const auto& name : *names) files.push_back(state_dir + "/" + name);
    }
    return files;
}

// Streams lines to `sink`; a torn last line (no newline) is left out.
// Returns the bytes consumed (where a follower goes on from).
template <typename Sink>
std::uint64_t for_each_line(const std::string& path, Sink sink) {
    std::ifstream in(path, std::ios::binary);
    std::string line;
    std::uint64_t consumed = 0;
    while (std::getline(in, line)) {
        if (in.eof()) break;  // no newline after it: torn
        consumed += line.size() + 1;
        sink(line);
    }
    return consumed;
}

int verify(const std::string& state_dir, const std::optional<std::string>& executor) {
    std::optional<JournalAnchors> journal;
    if (executor) {
        auto read = read_journal_anchors(state_dir, *executor);
        if (!read) {
            print_error(kCmd, "cannot cross-check with the journal: " + read.error().message);
            return kExitFailure;
        }
        journal = std::move(*read);
    }
    auto report = admin::verify_audit_log(state_dir, journal ? &journal->anchors : nullptr);
    if (!report) {
        print_error(kCmd, "cannot check the audit log: " + report.error().message);
        return kExitFailure;
    }
    if (report->first_bad) {
        print_error(kCmd, "the audit chain is broken: " + *report->first_bad);
        // "<segment> line K: why": show that line.
        const std::string& bad = *report->first_bad;
        auto space = bad.find(" line ");
        if (space != std::string::npos) {
            std::string file = state_dir + "/" + bad.substr(0, space);
            long wanted = std::atol(bad.c_str() + space + 6);
            long n = 0;
            std::ifstream in(file, std::ios::binary);
            std::string line;
            while (std::getline(in, line)) {
                if (++n == wanted) {
                    std::cerr << visible(line.substr(0, 2000)) << "\n";
                    break;
                }
            }
        }
        return kExitFailure;
    }
    std::cout << "audit chain intact: " << report->lines << " events";
    if (report->torn_fragments > 0) {
        std::cout << " (" << report->torn_fragments
                  << " torn line(s) from a crash, each followed by a `recovered` event)";
    }
    std::cout << "\n";
    if (report->lines > 0) {
        std::cout << "from seq " << report->first_seq << " (" << visible(report->first_event) << ")"
                  << (report->first_seq == 1 ? ", the first event ever written"
                                             : ", where a `pruned` event says it starts")
                  << ", to seq " << report->last_seq << ", in " << report->segments
                  << " segment(s), " << report->bytes << " bytes\n";
    }
    if (journal) {
        std::cout << "journal: " << report->anchors_checked << " anchor(s) of the installed "
                  << "executor found in the log";
        if (journal->ignored > 0)
            std::cout << "; " << journal->ignored << " entry(ies) from other programs ignored";
        std::cout << "\n";
    }
    return kExitOk;
}

// Prints lines appended to the newest segment from now on, across rotations.
int follow(const std::string& state_dir, std::uint64_t start_offset, bool json) {
    UniqueFd ino(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (ino) ::inotify_add_watch(ino.get(), state_dir.c_str(), IN_MODIFY | IN_CREATE | IN_MOVED_TO);
    UniqueFd fd;
    ino_t current = 0;
    std::uint64_t offset = start_offset;
    std::string pending;
    while (true) {
        struct stat st {};
        const auto files = log_files(state_dir);
        const std::string path =
            files.empty() ? state_dir + "/" + std::string(common::kAuditLogName) : files.back();
        if (::stat(path.c_str(), &st) == 0 && (!fd || st.st_ino != current)) {
            if (fd) offset = 0;  // rotated: the new file starts empty
            fd.reset(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
            current = st.st_ino;
            pending.clear();
        }
        if (fd) {
            char buf[65536];
            ssize_t n;
            while ((n = ::pread(fd.get(), buf, sizeof buf, static_cast<off_t>(offset))) > 0) {
                offset += static_cast<std::uint64_t>(n);
                pending.append(buf, static_cast<std::size_t>(n));
            }
            std::size_t nl;
            while ((nl = pending.find('\n')) != std::string::npos) {
                print_row(pending.substr(0, nl), json);
                pending.erase(0, nl + 1);
            }
            std::cout.flush();
            if (!std::cout) return kExitOk;  // the reader went away
        }
        pollfd p{ino ? ino.get() : -1, POLLIN, 0};
        ::poll(&p, 1, 1000);  // inotify, with a slow poll as a fallback
        if (ino) {
            char drain[4096];
            while (::read(ino.get(), drain, sizeof drain) > 0) {
            }
        }
    }
}

}  // namespace

namespace {

std::optional<long> tail_option(const ParsedArgs& args) {
    if (auto t = args.get("tail")) return parse_number(*t, 100000000);
    return std::nullopt;
}

// The options that go alone or together: usage errors before any lookup.
std::optional<int> check_audit(const ParsedArgs& args) {
    const std::optional<long> tail = tail_option(args);
    if (auto t = args.get("tail"); t && !tail) {
        print_error(kCmd, "--tail needs a number of events, not " + *t);
        return kExitUsage;
    }
    const bool json = args.has("json");
    const bool follow_mode = args.has("follow");
    const bool since = args.get("since").has_value();
    if (args.has("verify") && (follow_mode || tail || json || since)) {
        print_error(kCmd, "--verify goes alone");
        return kExitUsage;
    }
    if (args.has("journal") && !args.has("verify")) {
        print_error(kCmd, "--journal goes with --verify");
        return kExitUsage;
    }
    if (args.has("prune-before") && (follow_mode || tail || json || since || args.has("verify"))) {
        print_error(kCmd, "--prune-before goes alone");
        return kExitUsage;
    }
    if (args.has("all") &&
        (args.get("slug") || follow_mode || args.has("verify") || args.has("prune-before"))) {
        print_error(kCmd, "--all goes with --since, --tail and --json only");
        return kExitUsage;
    }
    if (auto text = args.get("since")) {
        if (auto cutoff = since_cutoff(*text, std::time(nullptr)); !cutoff) {
            print_error(kCmd, cutoff.error().message);
            return kExitUsage;
        }
    }
    return std::nullopt;
}

// Like every reader, take the state dir from bridge.json when it is readable.
std::string state_dir_of(const InstallPaths& paths) {
    if (auto config = load_config(paths.config_file)) return config->state_dir;
    return paths.state_dir;
}

// An event's `ts`, or "" when it cannot be read.
std::string ts_of(const std::string& line) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    return j.is_object() && j.contains("ts") && j["ts"].is_string() ? j["ts"].get<std::string>()
                                                                    : std::string();
}

// Whether an event of time `ts` is at or after the cutoff; one whose time
// cannot be read is kept, so nothing is hidden by --since.
bool at_or_after(const std::string& ts, const std::optional<std::string>& cutoff) {
    return !cutoff || ts.empty() || ts >= *cutoff;
}

// --all: every install's events, merged by time (each log is already in
// order; ties keep the slugs' order).
int audit_all(const HostDirs& dirs, const std::optional<std::string>& cutoff,
              std::optional<long> tail, bool json) {
    struct Row {
        std::string ts;
        std::size_t install;
        std::string line;
    };
    const std::vector<std::string> slugs = installed_slugs(dirs);
    SlugColumn column;
    column.width = 4;
    for (const auto& slug : slugs) column.width = std::max(column.width, slug.size());
    std::vector<Row> rows;
    for (std::size_t i = 0; i < slugs.size(); ++i) {
        const std::string state_dir = state_dir_of(install_paths(dirs, slugs[i]));
        for (const auto& file : log_files(state_dir)) {
            for_each_line(file, [&](const std::string& line) {
                std::string ts = ts_of(line);
                if (at_or_after(ts, cutoff)) rows.push_back({std::move(ts), i, line});
            });
        }
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.ts < b.ts; });
    std::size_t first = 0;
    if (tail && rows.size() > static_cast<std::size_t>(*tail))
        first = rows.size() - static_cast<std::size_t>(*tail);
    if (!json) print_header(column);
    for (std::size_t r = first; r < rows.size(); ++r)
        print_row(rows[r].line, json, slugs[rows[r].install], column);
    if (slugs.empty() && !json) std::cout << "(no installs)\n";
    std::cout.flush();
    return kExitOk;
}

int run_audit(Invocation& in) {
    const ParsedArgs* args = &in.args;
    std::optional<long> tail = tail_option(*args);
    const bool json = args->has("json");
    const bool follow_mode = args->has("follow");
    const auto prune_before = args->get("prune-before");
    std::optional<std::string> cutoff;
    if (auto text = args->get("since")) cutoff = *since_cutoff(*text, std::time(nullptr));
    if (args->has("all")) return audit_all(in.dirs, cutoff, tail, json);

    // One install: the slug given, or the one whose project holds the cwd.
    auto located = locate_install(in.dirs, in.slug);
    if (!located) {
        print_error(kCmd, located.error().message);
        return kExitFailure;
    }
    const InstallPaths* paths = &*located;
    const std::string state_dir = state_dir_of(*paths);
    if (args->has("verify")) {
        return verify(state_dir,
                      args->has("journal") ? std::optional(paths->executor) : std::nullopt);
    }
    if (prune_before) {
        auto pruned = prune_audit_log(state_dir, *prune_before);
        if (!pruned) {
            print_error(kCmd, pruned.error().message);
            return kExitFailure;
        }
        if (pruned->removed.empty()) {
            std::cout << "nothing to prune: no segment before the newest ends before "
                      << *prune_before << "\n";
            return kExitOk;
        }
        for (const auto& name : pruned->removed) std::cout << "removed " << name << "\n";
        std::cout << "recorded a `pruned` event; the chain now starts at seq " << pruned->first_seq
                  << "\n";
        return kExitOk;
    }

    if (follow_mode && !tail) tail = 10;
    std::deque<std::string> last;
    if (!json) print_header({});
    std::uint64_t offset = 0;  // into the current file, for --follow
    for (const auto& file : log_files(state_dir)) {
        offset = for_each_line(file, [&](const std::string& line) {
            if (cutoff && !at_or_after(ts_of(line), cutoff)) return;
            if (!tail) {
                print_row(line, json);
                return;
            }
            last.push_back(line);
            if (static_cast<long>(last.size()) > *tail) last.pop_front();
        });
    }
    for (const auto& line : last) print_row(line, json);
    std::cout.flush();
    if (!follow_mode) return kExitOk;
    return follow(state_dir, offset, json);
}

}  // namespace

// Dirs only: --all reads every install; run_audit locates one otherwise.
const Subcommand kAudit = {kCmd, kHelp, kSpecs, Subcommand::Needs::Dirs, check_audit, run_audit};

}  // namespace hb::admin
