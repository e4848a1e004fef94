#include "tests/client/client_harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ipc/sys.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr const char* kBusybox = "/bin/busybox";
constexpr const char* kDash = "/usr/bin/dash";
constexpr const char* kBash = "/usr/bin/bash";
constexpr const char* kSystemPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

[[noreturn]] void child_exec(const std::vector<std::string>& argv,
                             const std::vector<std::string>& env, const std::string& out,
                             const std::string& err, const ClientOptions* options) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    int in = ::open("/dev/null", O_RDONLY);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (in < 0 || o < 0 || e < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    if (options != nullptr) {
        if (options->umask) ::umask(*options->umask);
        if (options->cwd && ::chdir(options->cwd->c_str()) != 0) ::_exit(126);
    }
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
}

// Waits up to `limit` for `pid`; kills it (and its group) past that.
int reap(pid_t pid, std::chrono::milliseconds limit, bool* killed) {
    const auto deadline = Clock::now() + limit;
    int status = 0;
    for (;;) {
        pid_t got = ::waitpid(pid, &status, WNOHANG);
        if (got == pid) return status;
        if (got < 0) return -1;
        if (Clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            if (killed != nullptr) *killed = true;
            return status;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// A PATH of nothing but busybox applets, so the busybox run proves the
// script needs no tool busybox lacks.
const std::string& busybox_path() {
    static TempDir dir;
    static bool filled = false;
    if (!filled) {
        filled = true;
        const std::string list = dir.path() + "/list";
        pid_t pid = ::fork();
        if (pid == 0) child_exec({kBusybox, "--list"}, {}, list, "/dev/null", nullptr);
        reap(pid, std::chrono::seconds(10), nullptr);
        std::istringstream applets(read_file(list));
        fs::create_directories(dir.path() + "/bin");
        for (std::string applet; std::getline(applets, applet);)
            if (!applet.empty()) fs::create_symlink(kBusybox, dir.path() + "/bin/" + applet);
    }
    static const std::string path = dir.path() + "/bin";
    return path;
}

}  // namespace

std::string client_name(ClientKind kind) {
    switch (kind) {
        case ClientKind::Dash:
            return "dash";
        case ClientKind::BusyboxSh:
            return "busybox_sh";
        case ClientKind::BashPosix:
            return "bash_posix";
        case ClientKind::Cpp:
            return "cpp";
        case ClientKind::Agent:
            return "agent";
    }
    return "?";
}

bool is_shell(ClientKind kind) {
    return kind != ClientKind::Cpp && kind != ClientKind::Agent;
}

std::string client_unavailable(ClientKind kind) {
    auto missing = [](const char* path, const char* package) -> std::string {
        if (::access(path, X_OK) == 0) return "";
        return std::string(path) + " is missing (apt-get install " + package + ")";
    };
    switch (kind) {
        case ClientKind::Dash:
            return missing(kDash, "dash");
        case ClientKind::BusyboxSh:
            return missing(kBusybox, "busybox-static");
        case ClientKind::BashPosix:
            return missing(kBash, "bash");
        case ClientKind::Cpp:
            return missing(HB_HOSTBRIDGE_BIN, "(build the hostbridge target)");
        case ClientKind::Agent:
            return missing(HB_AGENT_BIN, "(build the hostbridge-agent target)");
    }
    return "unknown client";
}

TempDir::TempDir() {
    std::string tmpl = "/tmp/hb-client-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

void make_spool(const std::string& dir) {
    for (const char* sub :
         {"tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"})
        fs::create_directories(dir + "/" + sub);
}

std::vector<std::string> files_under(const std::string& dir) {
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
        if (!it->is_directory()) files.push_back(fs::relative(it->path(), dir).string());
    std::sort(files.begin(), files.end());
    return files;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void publish_response(const std::string& spool, const std::string& request,
                      const std::string& body) {
    const std::string temp = spool + "/tmp/.response-" + request;
    write_file(temp, body);
    fs::rename(temp, spool + "/responses/" + request + ".response.json");
}

std::string wait_for_json(const std::string& dir, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(dir, ec)) {
            std::string name = entry.path().filename().string();
            if (name.size() > 5 && name.ends_with(".json")) return name;
        }
        if (Clock::now() >= deadline) return "";
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
}

void write_file(const std::string& path, const std::string& content, mode_t mode) {
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << content;
        if (!out) throw std::runtime_error("cannot write " + path);
    }
    fs::permissions(path, static_cast<fs::perms>(mode));
}

ClientProcess::ClientProcess(ClientKind kind, const std::vector<std::string>& args,
                             const ClientOptions& options) {
    const std::string script = options.script.value_or(HB_CLIENT_SCRIPT);
    std::vector<std::string> argv;
    std::string path = kSystemPath;
    switch (kind) {
        case ClientKind::Dash:
            argv = {kDash, script};
            break;
        case ClientKind::BusyboxSh:
            argv = {kBusybox, "sh", script};
            path = busybox_path();
            break;
        case ClientKind::BashPosix:
            argv = {kBash, "--posix", script};
            break;
        case ClientKind::Cpp:
            argv = {HB_HOSTBRIDGE_BIN, "request"};
            break;
        case ClientKind::Agent:
            argv = {HB_AGENT_BIN, "request"};
            break;
    }
    argv.insert(argv.end(), args.begin(), args.end());
    if (options.path_prefix) path = *options.path_prefix + ":" + path;
    // A clean environment: nothing of the test runner's (a HOSTBRIDGE_SPOOL
    // or REPO_ROOT of its own) may leak in. A UTF-8 locale on purpose: the
    // shell client must not depend on the caller's.
    std::vector<std::string> env = {"PATH=" + path, "HOME=" + capture_.path(), "LANG=C.UTF-8"};
    // Except the sanitizers' settings (./run-tests --sanitize): without them
    // a sanitized client runs its own defaults (LeakSanitizer's ptrace check
    // at exit, no abort), not what ./run-tests chose for every binary.
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"})
        if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
    env.insert(env.end(), options.env.begin(), options.env.end());

    started_ = Clock::now();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0)
        child_exec(argv, env, capture_.path() + "/out", capture_.path() + "/err", &options);
}

ClientProcess::~ClientProcess() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
}

bool ClientProcess::running() {
    if (pid_ <= 0) return false;
    if (::waitpid(pid_, &status_, WNOHANG) == 0) return true;
    pid_ = -1;  // reaped: wait() reports status_
    return false;
}

void ClientProcess::signal(int signo) {
    if (pid_ > 0) ::kill(pid_, signo);
}

bool ClientProcess::wait_for_err(const std::string& text, std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    for (;;) {
        if (read_file(capture_.path() + "/err").find(text) != std::string::npos) return true;
        if (!running() || Clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

ClientResult ClientProcess::wait(std::chrono::milliseconds limit) {
    ClientResult result;
    bool killed = false;
    int status = pid_ > 0 ? reap(pid_, limit, &killed) : status_;
    pid_ = -1;
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
    result.exit_code = (!killed && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
    result.out = read_file(capture_.path() + "/out");
    result.err = read_file(capture_.path() + "/err");
    return result;
}

ClientResult run_client(ClientKind kind, const std::vector<std::string>& args,
                        const ClientOptions& options) {
    ClientProcess client(kind, args, options);
    return client.wait();
}

int run_program(const std::vector<std::string>& argv) {
    pid_t pid = ::fork();
    if (pid < 0) return -1;
    if (pid == 0)
        child_exec(argv, {"PATH=" + std::string(kSystemPath)}, "/dev/null", "/dev/null", nullptr);
    bool killed = false;
    int status = reap(pid, std::chrono::seconds(30), &killed);
    return (!killed && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
}

Daemon::Daemon(const std::vector<std::string>& argv, const std::string& log) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        ::setpgid(0, 0);  // its own group, so a straggler child can be killed too
        child_exec(argv, {"PATH=" + std::string(kSystemPath)}, log, log, nullptr);
    }
    ::setpgid(pid_, pid_);
}

int Daemon::stop() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    bool killed = false;
    int status = reap(pid_, std::chrono::seconds(5), &killed);
    ::kill(-pid_, SIGKILL);
    pid_ = -1;
    return killed ? -1 : status;
}

Daemon::~Daemon() {
    stop();
}

std::string utc_in(int seconds) {
    return sys::format_utc(std::time(nullptr) + seconds);
}

}  // namespace hb::test
