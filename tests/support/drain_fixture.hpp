// A whole temporary install for driving the real hostbridge-executor and
// hostbridge-parser binaries: a project dir with the spool, a state dir, a
// complete policy.conf (every verb auto) and a bridge.json the test can
// edit. Everything lives under one TempDir (tests/support/files.hpp), so
// `ctest -j` is safe. Shared by tests/executor, tests/faults and bench/.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/sha256.hpp"
#include "tests/support/files.hpp"
#include "tests/support/process.hpp"
#include "tests/support/utc.hpp"

namespace hb::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline const std::vector<std::string> kSpoolSubdirs = {
    "tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"};

struct Exit {
    int code = -1;    // exit status, or -signal
    std::string err;  // what it wrote on stderr
};

struct SpawnOptions {
    bool allow_root_flag = true;
    std::optional<mode_t> umask;
    std::optional<uid_t> uid;  // run as this uid (and gid) instead of root
    std::vector<std::string> extra;
    // Exactly this environment (and the sanitizer's options); by default
    // only the sanitizer's options.
    std::vector<std::string> env;
    // stderr appended to this file, as the unit's StandardError=append:
    // does, instead of a fresh file finish() reads.
    std::optional<std::string> log;
};

class DrainFixture {
  public:
    // `base`: where the temporary install goes (the benchmark compares
    // filesystems); tests use /tmp.
    explicit DrainFixture(std::string parser = HB_PARSER_BIN, const std::string& base = "/tmp")
        : tmp_("drain", base), root(tmp_.path()) {
        project = root + "/project";
        spool = project + "/untracked/hostbridge";
        state = root + "/state";
        config_path = root + "/bridge.json";
        for (const auto& sub : kSpoolSubdirs) fs::create_directories(spool + "/" + sub);
        fs::create_directories(state);
        std::string policy;
        for (const char* verb : {"ping", "status", "health", "logs", "up", "down", "restart",
                                 "rebuild", "init", "join-network"}) {
            policy += std::string("MODE_") + verb + "=auto\n";
        }
        write_file(root + "/policy.conf", policy);
        config = {
            {"version", 1},
            {"slug", "drain-test"},
            {"project_dir", project},
            {"spool_dir", spool},
            {"state_dir", state},
            {"policy_file", root + "/policy.conf"},
            {"parser", parser},
            // hostbridge-snapshot is built into the real parser's bin/.
            {"snapshot", (fs::path(HB_PARSER_BIN).parent_path() / "hostbridge-snapshot").string()},
            {"allow_root", true},
            // The tests run up and rebuild as policy.conf says; the hold
            // for an engine run as the person has its own tests
            // (DecideAsk.*Containment*, common/engine_hold.hpp).
            {"accept_uncontained_engine", true},
            {"file_mode", "0644"},
            {"agent_gid", nullptr},
            {"backend", {{"kind", "stack"}, {"argv", {project + "/stack"}}}},
            {"services", {"api", "db", "web"}},
            {"buildable", {"api", "web"}},
            {"tcb", json::array()},
            {"run_dir", root + "/run"},
            {"limits",
             {{"mutating", {{"count", 20}, {"seconds", 600}}},
              {"read_only", {{"count", 120}, {"seconds", 60}}},
              {"ttl_seconds", 600},
              {"future_skew_seconds", 120}}},
            {"timeouts", {{"default", 300}, {"rebuild", 1200}}},
            {"drain", {{"time_budget_seconds", 1800}, {"linger_seconds", 10}}},
            {"retention", {{"archive_days", 7}, {"responses_days", 1}}},
            {"systemd", {{"enabled", false}, {"systemd_run", ""}}},
            {"join_network", nullptr},
        };
        write_config();
    }
    virtual ~DrainFixture() = default;  // every executor still running is killed and reaped
    DrainFixture(const DrainFixture&) = delete;
    DrainFixture& operator=(const DrainFixture&) = delete;

    // Pins each path (relative to the project) as it is now: its SHA-256,
    // or null when it does not exist, and stores its approved copy. Writes
    // the config.
    void pin(const std::vector<std::string>& paths) {
        json tcb = json::array();
        for (const auto& rel : paths) {
            const std::string p = project + "/" + rel;
            if (fs::exists(fs::symlink_status(p))) {
                const std::string bytes = read_file(p);
                tcb.push_back({{"path", rel}, {"sha256", hb::common::sha256_hex(bytes)}});
                // The approved copy, as install and approve store it: the
                // executor runs commands from these (executor/run_tree.hpp).
                const std::string copy = state + "/approved/" + rel;
                fs::create_directories(fs::path(copy).parent_path());
                write_file(copy, bytes);
            } else {
                tcb.push_back({{"path", rel}, {"sha256", nullptr}});
            }
        }
        config["tcb"] = tcb;
        write_config();
    }

    void write_config() const { write_file(config_path, config.dump(2)); }

    // Copies the executor and parser into root/bin, so that a drain run as
    // another user can reach them wherever the build tree lives (a checkout
    // under /root or another 0700 directory); removed with root.
    void binaries_reachable_by_others() {
        const std::string bin = root + "/bin";
        fs::create_directories(bin);
        const auto copy = [&](const std::string& from) {
            const std::string to = bin + "/" + fs::path(from).filename().string();
            fs::copy_file(from, to, fs::copy_options::overwrite_existing);
            fs::permissions(to, fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
            return to;
        };
        executor_bin = copy(HB_EXECUTOR_BIN);
        config["parser"] = copy(config["parser"].get<std::string>());
        config["snapshot"] = copy(config["snapshot"].get<std::string>());
        write_config();
    }
    std::string executor_bin = HB_EXECUTOR_BIN;

    std::string dir(const std::string& sub) const { return spool + "/" + sub; }
    std::string path(const std::string& sub, const std::string& name) const {
        return dir(sub) + "/" + name;
    }

    // tests/support/utc.hpp, kept here for the fixture's callers.
    static std::string utc(std::time_t t, bool rfc3339) { return test::utc(t, rfc3339); }
    static std::string now_rfc3339() { return utc(std::time(nullptr), true); }

    // An on-schema name whose stamp grows with every call, so names sort in
    // creation order whatever the verb (the stamp is never compared with
    // requested_at); `nonce_prefix` lets fake parsers pick requests out.
    std::string name(const std::string& verb, const std::string& nonce_prefix = "") {
        ++counter_;
        char nonce[17];
        std::snprintf(nonce, sizeof nonce, "%016x", counter_);
        std::string n(nonce);
        n.replace(0, nonce_prefix.size(), nonce_prefix);
        return utc(stamp_base_ + counter_, false) + "-" + verb + "-" + n + ".json";
    }

    static std::string body(const std::string& verb, const std::string& arg = "") {
        json b = {{"verb", verb}};
        if (!arg.empty()) b["arg"] = arg;
        b["requested_at"] = now_rfc3339();
        return b.dump();
    }

    // Publishes like a client: write in tmp/, rename into requests/.
    std::string publish_as(const std::string& request_name, const std::string& content) {
        const std::string tmp = path("tmp", "client-" + std::to_string(++counter_));
        write_file(tmp, content);
        fs::rename(tmp, path("requests", request_name));
        return request_name;
    }
    std::string publish(const std::string& verb, const std::string& arg = "",
                        const std::string& nonce_prefix = "") {
        return publish_as(name(verb, nonce_prefix), body(verb, arg));
    }

    std::vector<std::string> list(const std::string& sub) const {
        std::vector<std::string> out;
        for (const auto& e : fs::directory_iterator(dir(sub))) {
            out.push_back(e.path().filename().string());
        }
        std::sort(out.begin(), out.end());
        return out;
    }
    // Entries only, no names: tests poll it on spools of 20,000 files
    // (tests/executor/test_audit_budget.cpp), where building and sorting the
    // names took the test process about half the CPU of its drain.
    std::size_t count(const std::string& sub) const {
        DIR* d = ::opendir(dir(sub).c_str());
        if (d == nullptr) throw std::runtime_error("cannot list " + dir(sub));
        std::size_t n = 0;
        while (const dirent* e = ::readdir(d)) {
            n += std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..";
        }
        ::closedir(d);
        return n;
    }

    std::optional<json> response(const std::string& request) const {
        const std::string p = path("responses", request + ".response.json");
        if (!fs::exists(p)) return std::nullopt;
        return json::parse(read_file(p));
    }
    std::string state_of(const std::string& request) const {
        auto r = response(request);
        return r ? (*r)["state"].get<std::string>() : "";
    }

    std::vector<json> audit() const {
        std::vector<json> lines;
        std::istringstream in(read_file(state + "/audit.jsonl"));
        for (std::string line; std::getline(in, line);) {
            if (!line.empty()) lines.push_back(json::parse(line));
        }
        return lines;
    }
    std::vector<json> audit_for(const std::string& request, const std::string& event) const {
        std::vector<json> out;
        for (const json& line : audit()) {
            if (line["request"] == request && line["event"] == event) out.push_back(line);
        }
        return out;
    }

    std::vector<std::string> argv_for(const std::string& mode, const SpawnOptions& options) const {
        std::vector<std::string> argv = {executor_bin, mode, "--config", config_path};
        if (options.allow_root_flag) argv.emplace_back("--allow-root");
        argv.insert(argv.end(), options.extra.begin(), options.extra.end());
        return argv;
    }

    // Starts the executor with stdin and stdout on /dev/null; its stderr
    // goes to a file finish() reads (or is appended to options.log).
    pid_t start(const std::string& mode = "drain", const SpawnOptions& options = {}) {
        Command command;
        command.argv = argv_for(mode, options);
        command.env = options.env;
        command.err = options.log.value_or(root + "/stderr-" + std::to_string(++counter_));
        command.append = options.log.has_value();
        command.umask = options.umask;
        command.uid = options.uid;
        Child child(command);
        const pid_t pid = child.pid();
        err_paths_[pid] = command.err;
        started_.emplace(pid, std::move(child));
        return pid;
    }

    // Waits for a started executor; kills it (and reports -9) past `timeout`,
    // or, without one, once it made no progress for kStallLimit: the audit
    // log, which every request taken up grows, stayed the same size (a
    // guard on progress, not on time: a sanitized drain sharing both cores
    // took over 30 s for 100 requests; docs/TESTING.md), or past kDrainLimit.
    static constexpr std::chrono::seconds kStallLimit{120};
    static constexpr std::chrono::seconds kDrainLimit{1800};
    Exit finish(pid_t pid, std::optional<std::chrono::seconds> timeout = std::nullopt) {
        Child& child = started_.at(pid);
        Exit out;
        if (timeout) {
            out.code = child.wait_or_kill(*timeout);
        } else {
            const auto start = std::chrono::steady_clock::now();
            auto last_change = start;
            std::uintmax_t last_size = audit_size();
            std::optional<int> code;
            while (!(code = child.wait_for(std::chrono::milliseconds(10)))) {
                const auto now = std::chrono::steady_clock::now();
                if (const std::uintmax_t size = audit_size(); size != last_size) {
                    last_size = size;
                    last_change = now;
                }
                if (now - last_change > kStallLimit || now - start > kDrainLimit) break;
            }
            out.code = code ? *code : child.wait_or_kill(std::chrono::milliseconds(0));
        }
        started_.erase(pid);
        out.err = read_file(err_paths_[pid]);
        return out;
    }

    std::uintmax_t audit_size() const {
        struct stat st {};
        return ::stat((state + "/audit.jsonl").c_str(), &st) == 0
                   ? static_cast<std::uintmax_t>(st.st_size)
                   : 0;
    }

    // Whether a started executor ended within `limit` (it is then reaped;
    // finish() and reap() report how).
    bool exited_within(pid_t pid, std::chrono::milliseconds limit) {
        return started_.at(pid).wait_for(limit).has_value();
    }

    // Reaps a started executor that the test killed itself.
    // Also a child the test forked itself.
    int reap(pid_t pid) {
        const auto it = started_.find(pid);
        if (it == started_.end()) {
            int status = 0;
            ::waitpid(pid, &status, 0);
            return exit_code_of(status);
        }
        const int code = it->second.wait();
        started_.erase(it);
        return code;
    }

    Exit run(const std::string& mode = "drain", const SpawnOptions& options = {}) {
        return finish(start(mode, options));
    }

  private:
    TempDir tmp_;  // first: removed after every executor below is reaped

  public:
    std::string root, project, spool, state, config_path;
    json config;

  private:
    unsigned counter_ = 0;
    std::time_t stamp_base_ = std::time(nullptr) - 100000;
    std::map<pid_t, Child> started_;
    std::map<pid_t, std::string> err_paths_;
};

}  // namespace hb::test
