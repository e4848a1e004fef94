// The fault tests' install: a DrainFixture (real executor, real parser)
// whose stack is a recording script that writes down WHICH REQUEST ran it,
// a mixed workload generator, and the invariants every fault must leave
// intact (no request lost, none run twice, one terminal state each).
//
// The script learns its request from its own stdout: the runner points fd 1
// at archive/<request>.log, so `readlink /proc/$$/fd/1` names the request.
// It appends "<request>\t<argv>" to <root>/record, outside the project (so
// nothing it writes can trip the integrity gate), and mutating verbs sleep
// 20 ms so that a kill often lands while a command runs.
#pragma once

#include <dirent.h>
#include <sys/stat.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "admin/audit/audit_verify.hpp"
#include "common/audit_log.hpp"
#include "tests/support/drain_fixture.hpp"

namespace hb::test {

// What a planned request is, and so how it must end.
enum class Kind {
    Ping,       // done, nothing runs
    Status,     // runs `stack status`
    Restart,    // runs `stack restart api|web` (mutating, sleeps 20 ms)
    Logs,       // runs `stack logs db`
    DenyArg,    // `restart nosuch`: denied, nothing runs
    DenyExec,   // `exec`: hardcoded deny
    Empty,      // empty body: denied
    Malformed,  // on-schema name, truncated JSON: quarantined with a denied response
    OffSchema,  // a name off the schema: quarantined, no response
};

inline bool runs_command(Kind k) {
    return k == Kind::Status || k == Kind::Restart || k == Kind::Logs;
}
inline bool on_schema(Kind k) {
    return k != Kind::OffSchema;
}

struct Planned {
    std::string name;
    Kind kind;
};

inline const std::set<std::string> kTerminalEvents = {"succeeded", "failed",      "denied",
                                                      "expired",   "interrupted", "quarantined"};

inline std::string recording_stack(const std::string& record) {
    return "#!/bin/sh\n"
           "# Fault tests' stand-in stack: records which request ran it.\n"
           "log=$(readlink /proc/$$/fd/1)\n"
           "name=${log##*/}\n"
           "name=${name%.log}\n"
           "printf '%s\\t%s\\n' \"$name\" \"$*\" >> '" +
           record +
           "'\n"
           "case $1 in restart|start|stop|build|init) sleep 0.02 ;; esac\n"
           "# Told to (a file naming a directory), fill that directory's filesystem, once.\n"
           "if [ -f '" +
           record +
           ".fill' ]; then\n"
           "  read -r dir < '" +
           record + ".fill'; rm -f '" + record +
           ".fill'\n"
           "  cat /dev/zero > \"$dir/filled-by-stack\" 2>/dev/null\n"
           "fi\n"
           "echo ok\n"
           "exit 0\n";
}

class FaultFixture : public DrainFixture {
  public:
    explicit FaultFixture(const std::string& base = "/tmp") : DrainFixture(HB_PARSER_BIN, base) {
        record_path = root + "/record";
        stack = project + "/stack";
        write_file(stack, recording_stack(record_path));
        fs::permissions(stack, fs::perms(0755));
        config["backend"] = {{"kind", "stack"}, {"argv", {stack}}};
        // Hundreds of commands in a minute: the limiter is not under test here.
        config["limits"]["mutating"] = {{"count", 100000}, {"seconds", 1}};
        config["limits"]["read_only"] = {{"count", 100000}, {"seconds", 1}};
        // The invariants check every request's own audit trail, which the
        // audit budget would summarise under this flood; the budget has its
        // own tests (AuditBudget.* in tests/executor/test_audit_budget.cpp).
        config["audit_budget"] = {{"bytes", std::int64_t{1} << 40}, {"seconds", 600}};
        pin({"stack"});  // writes the config
    }
    // Publishes one request of `kind` the way a client (or a hostile agent) would.
    Planned publish_kind(Kind kind) {
        switch (kind) {
            case Kind::Ping:
                return {publish("ping"), kind};
            case Kind::Status:
                return {publish("status"), kind};
            case Kind::Restart:
                return {publish("restart", (++restarts_ % 2) ? "api" : "web"), kind};
            case Kind::Logs:
                return {publish("logs", "db"), kind};
            case Kind::DenyArg:
                return {publish("restart", "nosuch"), kind};
            case Kind::DenyExec:
                return {publish("exec"), kind};
            case Kind::Empty:
                return {publish_as(name("status"), ""), kind};
            case Kind::Malformed:
                return {publish_as(name("ping"), R"({"verb":"ping","requested_at":)"), kind};
            case Kind::OffSchema:
                return {publish_as("not-a-request-" + std::to_string(++off_schema_) + ".json",
                                   body("ping")),
                        kind};
        }
        throw std::logic_error("kind");
    }

    // A batch drawn from every kind, commands and pings most often.
    std::vector<Planned> publish_mixed(std::mt19937& rng, int count) {
        static const Kind kinds[] = {Kind::Ping,   Kind::Ping,      Kind::Status,
                                     Kind::Status, Kind::Restart,   Kind::Restart,
                                     Kind::Logs,   Kind::DenyArg,   Kind::DenyExec,
                                     Kind::Empty,  Kind::Malformed, Kind::OffSchema};
        std::vector<Planned> out;
        for (int i = 0; i < count; ++i) {
            out.push_back(publish_kind(kinds[rng() % (sizeof kinds / sizeof kinds[0])]));
        }
        return out;
    }

    // Starts the executor (`mode`: drain or watch) with stderr APPENDED to
    // `log`, as the unit's StandardError=append: does; stdin and stdout on
    // /dev/null, an empty environment.
    pid_t start_logged(const std::string& mode, const std::vector<std::string>& extra,
                       const std::string& log) {
        SpawnOptions options;
        options.extra = extra;
        options.log = log;
        return start(mode, options);
    }
    // Waits for an executor from start_logged(); its exit code, or -signal.
    int wait_logged(pid_t pid) { return reap(pid); }
    int drain_logged(const std::string& log) { return wait_logged(start_logged("drain", {}, log)); }

    // request name -> how many times the stack ran for it.
    std::map<std::string, int> runs() const {
        std::map<std::string, int> out;
        std::istringstream in(read_file(record_path));
        for (std::string line; std::getline(in, line);) ++out[line.substr(0, line.find('\t'))];
        return out;
    }
    std::size_t total_runs() const { return lines_of(read_file(record_path)); }

    // The next command the stack runs fills the filesystem of `dir` first.
    void stack_fills(const std::string& dir) const {
        write_file(record_path + ".fill", dir + "\n");
    }

    // Every audit line that parses; a torn fragment (a disk that filled
    // mid-write) is skipped here and judged by verify_audit_log().
    std::vector<json> audit_lines() const {
        std::vector<json> lines;
        std::istringstream in(read_file(state + "/audit.jsonl"));
        for (std::string line; std::getline(in, line);) {
            json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
            if (j.is_object()) lines.push_back(std::move(j));
        }
        return lines;
    }

    // request name -> its audit events, in order. Read on from where the
    // last call stopped: the log only grows, and KillNine asks after each of
    // its 200 runs (re-parsing the whole log each time was most of that
    // test's 177 s under AddressSanitizer). Only whole lines are taken: a
    // torn fragment at the end is left until a newline follows it. A log
    // replaced or cut short (another inode, fewer bytes) is read anew.
    std::map<std::string, std::vector<std::string>> events() const {
        const std::string path = state + "/audit.jsonl";
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 || st.st_ino != events_ino_ ||
            static_cast<std::uint64_t>(st.st_size) < events_read_) {
            events_.clear();
            events_read_ = 0;
            events_ino_ = st.st_ino;
        }
        const std::string bytes = read_file(path);
        const std::size_t end = bytes.rfind('\n');
        if (end == std::string::npos || end + 1 <= events_read_) return events_;
        std::istringstream in(bytes.substr(events_read_, end + 1 - events_read_));
        for (std::string line; std::getline(in, line);) {
            const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
            if (j.is_object() && j["request"].is_string()) {
                events_[j["request"].get<std::string>()].push_back(j["event"]);
            }
        }
        events_read_ = end + 1;
        return events_;
    }

    bool exists_in(const std::string& sub, const std::string& name) const {
        struct stat st {};
        return ::lstat(path(sub, name).c_str(), &st) == 0;
    }

    std::string record_path, stack;

  private:
    int restarts_ = 0;
    int off_schema_ = 0;
    // events(): what the audit log held so far, and how far it was read.
    mutable std::map<std::string, std::vector<std::string>> events_;
    mutable std::uint64_t events_read_ = 0;
    mutable ino_t events_ino_ = 0;
};

// `hostbridge audit --verify` on the fixture's install: bridge.json copied
// where the admin tool looks for it (XDG_CONFIG_HOME under the fixture).
inline Output admin_verify(const FaultFixture& f) {
    const std::string config_home = f.root + "/xdg-config";
    fs::create_directories(config_home + "/hostbridge/drain-test");
    write_file(config_home + "/hostbridge/drain-test/bridge.json", f.config.dump(2));
    Command verify;
    verify.argv = {HB_CLI_BIN, "audit", "--slug", "drain-test", "--verify"};
    verify.env = {"HOME=" + f.root, "XDG_CONFIG_HOME=" + config_home,
                  "XDG_STATE_HOME=" + f.root + "/xdg-state"};
    return run_output(verify);
}

// Checks, for each planned request, what every fault must leave intact:
// - it left requests/ and processing/, and sits in archive/ or quarantine/;
// - an on-schema one has exactly one response, in a terminal state: the one
//   its kind earns, or failed/`interrupted` if a crash caught it mid-way;
// - its audit trail ends in a terminal event matching that state (two only
//   when a crash came between answering and archiving: then the second is
//   `interrupted`), with at most one `queued`;
// - the stack ran at most once for it, never for a kind that runs nothing,
//   exactly once when it is `done` and runs a command, and every run has
//   exactly one `started` event before it.
// Returns how many of them were interrupted.
// With `parser_faults`, an on-schema request may also have been denied
// "parser failure" (the parser died or lied under it): then it never ran.
inline int expect_intact(const FaultFixture& f, const std::vector<Planned>& batch,
                         const std::string& context, bool parser_faults = false) {
    const auto runs = f.runs();
    const auto events = f.events();
    int interrupted = 0;
    for (const Planned& p : batch) {
        SCOPED_TRACE(context + " " + p.name);
        EXPECT_FALSE(f.exists_in("requests", p.name));
        EXPECT_FALSE(f.exists_in("processing", p.name));
        EXPECT_NE(f.exists_in("archive", p.name), f.exists_in("quarantine", p.name))
            << "must be in exactly one of archive/ and quarantine/";

        const auto ev_it = events.find(p.name);
        const std::vector<std::string> ev =
            ev_it == events.end() ? std::vector<std::string>{} : ev_it->second;
        std::vector<std::string> terminal;
        for (const auto& e : ev) {
            if (kTerminalEvents.contains(e)) terminal.push_back(e);
        }
        EXPECT_LE(std::count(ev.begin(), ev.end(), "queued"), 1);
        if (terminal.empty() || terminal.size() > 2) {
            ADD_FAILURE() << terminal.size() << " terminal audit events";
            continue;
        }
        if (terminal.size() == 2) {
            EXPECT_EQ(terminal[1], "interrupted");
        }
        const std::string& last = terminal.back();

        const int ran = runs.contains(p.name) ? runs.at(p.name) : 0;
        EXPECT_LE(ran, 1) << "ran twice";
        if (!runs_command(p.kind)) {
            EXPECT_EQ(ran, 0) << "ran although it runs nothing";
        }
        const auto started = std::count(ev.begin(), ev.end(), "started");
        EXPECT_LE(started, 1);
        if (ran == 1) {
            EXPECT_EQ(started, 1) << "ran without a durable `started` record";
        }

        if (!on_schema(p.kind)) {
            EXPECT_FALSE(f.response(p.name).has_value());
            EXPECT_TRUE(f.exists_in("quarantine", p.name));
            EXPECT_TRUE(last == "quarantined" || last == "interrupted") << last;
            continue;
        }
        const auto r = f.response(p.name);
        if (!r) {
            ADD_FAILURE() << "no response";
            continue;
        }
        const std::string state = (*r)["state"];
        if (last == "interrupted") {
            ++interrupted;
            EXPECT_EQ(state, "failed");
            EXPECT_EQ((*r)["reason"], "interrupted");
            EXPECT_TRUE((*r)["exit_code"].is_null());
            EXPECT_TRUE(f.exists_in("archive", p.name));
            continue;
        }
        if (parser_faults && state == "denied" && (*r)["reason"] == "parser failure") {
            EXPECT_EQ(last, "denied");
            EXPECT_EQ(ran, 0);
            EXPECT_TRUE(f.exists_in("archive", p.name));
            continue;
        }
        switch (p.kind) {
            case Kind::Ping:
                EXPECT_EQ(state, "done");
                EXPECT_EQ(last, "succeeded");
                break;
            case Kind::Status:
            case Kind::Restart:
            case Kind::Logs:
                EXPECT_EQ(state, "done") << (*r).dump();
                EXPECT_EQ(last, "succeeded");
                EXPECT_EQ(ran, 1);
                break;
            case Kind::DenyArg:
            case Kind::DenyExec:
            case Kind::Empty:
                EXPECT_EQ(state, "denied");
                EXPECT_EQ(last, "denied");
                EXPECT_TRUE(f.exists_in("archive", p.name));
                break;
            case Kind::Malformed:
                EXPECT_EQ(state, "denied");
                EXPECT_EQ(last, "quarantined");
                EXPECT_TRUE(f.exists_in("quarantine", p.name));
                break;
            case Kind::OffSchema:
                break;
        }
    }
    return interrupted;
}

// Every run the stack recorded belongs to a request with one `started` event.
inline void expect_every_run_was_recorded_first(const FaultFixture& f) {
    const auto events = f.events();
    for (const auto& [name, count] : f.runs()) {
        EXPECT_EQ(count, 1) << name << " ran " << count << " times";
        const auto it = events.find(name);
        ASSERT_NE(it, events.end()) << name << " ran with no audit event at all";
        EXPECT_EQ(std::count(it->second.begin(), it->second.end(), "started"), 1) << name;
    }
}

}  // namespace hb::test
