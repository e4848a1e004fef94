// A whole temporary install for driving the real hostbridge-executor and
// hostbridge-parser binaries: a project dir with the spool, a state dir, a
// complete policy.conf (every verb auto) and a bridge.json the test can
// edit. Everything lives under one mkdtemp dir in /tmp, removed at the end
// (without following symlinks), so `ctest -j` is safe.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/sha256.hpp"

namespace hb::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline const std::vector<std::string> kSpoolSubdirs = {
    "tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"};

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline void write_file(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + path);
}

// Polls `done` every 5 ms for up to `timeout`.
inline bool wait_until(const std::function<bool()>& done,
                       std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
}

struct Exit {
    int code = -1;    // exit status, or -signal
    std::string err;  // what it wrote on stderr
};

struct SpawnOptions {
    bool allow_root_flag = true;
    std::optional<mode_t> umask;
    std::optional<uid_t> uid;  // run as this uid (and gid) instead of root
    std::vector<std::string> extra;
};

class DrainFixture {
  public:
    // `base`: where the temporary install goes (the benchmark compares
    // filesystems); tests use /tmp.
    explicit DrainFixture(std::string parser = HB_PARSER_BIN, const std::string& base = "/tmp") {
        std::string tmpl = base + "/hb-drain-XXXXXX";
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp");
        root = tmpl;
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
            {"allow_root", true},
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
    ~DrainFixture() {
        for (pid_t pid : started_) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
        std::error_code ec;
        fs::remove_all(root, ec);
    }
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
        write_config();
    }
    std::string executor_bin = HB_EXECUTOR_BIN;

    std::string dir(const std::string& sub) const { return spool + "/" + sub; }
    std::string path(const std::string& sub, const std::string& name) const {
        return dir(sub) + "/" + name;
    }

    // UTC as YYYY-MM-DDTHH:MM:SSZ (`rfc3339`) or YYYYMMDDTHHMMSSZ.
    static std::string utc(std::time_t t, bool rfc3339) {
        std::tm tm{};
        ::gmtime_r(&t, &tm);
        char buf[32];
        if (rfc3339) {
            std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
        } else {
            std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
        }
        return buf;
    }
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
    std::size_t count(const std::string& sub) const { return list(sub).size(); }

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

    // Starts the executor; its stderr goes to a file read by finish().
    pid_t start(const std::string& mode = "drain", const SpawnOptions& options = {}) {
        const std::vector<std::string> args = argv_for(mode, options);
        const std::string err_path = root + "/stderr-" + std::to_string(++counter_);
        const pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error("fork");
        if (pid == 0) {
            std::vector<char*> argv;
            for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
            if (err < 0 || ::dup2(err, 2) < 0) ::_exit(126);
            const int null_fd = ::open("/dev/null", O_RDWR);
            ::dup2(null_fd, 0);
            ::dup2(null_fd, 1);
            if (options.umask) ::umask(*options.umask);
            if (options.uid) {
                if (::setgroups(0, nullptr) != 0 ||
                    ::setresgid(*options.uid, *options.uid, *options.uid) != 0 ||
                    ::setresuid(*options.uid, *options.uid, *options.uid) != 0) {
                    ::_exit(125);
                }
            }
            sigset_t none;
            ::sigemptyset(&none);
            ::sigprocmask(SIG_SETMASK, &none, nullptr);
            // An empty environment, but for the sanitizer runtime's options
            // in a sanitized build (the executor hands them to the parser).
            std::vector<std::string> env;
            for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
                if (const char* value = std::getenv(name)) {
                    env.push_back(std::string(name) + "=" + value);
                }
            }
            std::vector<char*> envp;
            for (auto& e : env) envp.push_back(e.data());
            envp.push_back(nullptr);
            ::execve(argv[0], argv.data(), envp.data());
            ::_exit(127);
        }
        started_.push_back(pid);
        err_paths_[pid] = err_path;
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
        Exit out;
        int status = 0;
        const auto reaped = [&] { return ::waitpid(pid, &status, WNOHANG) == pid; };
        bool exited = false;
        if (timeout) {
            exited =
                wait_until(reaped, std::chrono::duration_cast<std::chrono::milliseconds>(*timeout));
        } else {
            const auto start = std::chrono::steady_clock::now();
            auto last_change = start;
            std::uintmax_t last_size = audit_size();
            while (!(exited = reaped())) {
                const auto now = std::chrono::steady_clock::now();
                if (const std::uintmax_t size = audit_size(); size != last_size) {
                    last_size = size;
                    last_change = now;
                }
                if (now - last_change > kStallLimit || now - start > kDrainLimit) break;
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        if (!exited) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
        }
        started_.erase(std::remove(started_.begin(), started_.end(), pid), started_.end());
        out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
        out.err = read_file(err_paths_[pid]);
        return out;
    }

    std::uintmax_t audit_size() const {
        struct stat st {};
        return ::stat((state + "/audit.jsonl").c_str(), &st) == 0
                   ? static_cast<std::uintmax_t>(st.st_size)
                   : 0;
    }

    // Reaps a started executor that the test killed itself.
    void reap(pid_t pid) {
        ::waitpid(pid, nullptr, 0);
        started_.erase(std::remove(started_.begin(), started_.end(), pid), started_.end());
    }

    Exit run(const std::string& mode = "drain", const SpawnOptions& options = {}) {
        return finish(start(mode, options));
    }

    std::string root, project, spool, state, config_path;
    json config;

  private:
    unsigned counter_ = 0;
    std::time_t stamp_base_ = std::time(nullptr) - 100000;
    std::vector<pid_t> started_;
    std::map<pid_t, std::string> err_paths_;
};

// The direct children of `pid` (from /proc/<pid>/task/<pid>/children).
inline std::vector<pid_t> children_of(pid_t pid) {
    std::vector<pid_t> out;
    std::istringstream in(
        read_file("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children"));
    for (pid_t child; in >> child;) out.push_back(child);
    return out;
}

inline std::size_t lines_of(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace hb::test
