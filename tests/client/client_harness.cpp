#include "tests/client/client_harness.hpp"

#include <signal.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <sstream>
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

// A PATH of nothing but busybox applets, so the busybox run proves the
// script needs no tool busybox lacks.
const std::string& busybox_path() {
    static TempDir dir("client");
    static const std::string path = [] {
        Command list;
        list.argv = {kBusybox, "--list"};
        list.env = std::vector<std::string>{};
        const Output applets = run_output(list, std::chrono::seconds(10));
        std::istringstream lines(applets.text);
        fs::create_directories(dir.path("bin"));
        for (std::string applet; std::getline(lines, applet);)
            if (!applet.empty()) fs::create_symlink(kBusybox, dir.path("bin/" + applet));
        return dir.path("bin");
    }();
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

std::string param_name(const ::testing::TestParamInfo<ClientKind>& info) {
    return client_name(info.param);
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

void make_spool(const std::string& dir) {
    for (const char* sub :
         {"tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"})
        fs::create_directories(dir + "/" + sub);
}

ClientProcess::ClientProcess(ClientKind kind, const std::vector<std::string>& args,
                             const ClientOptions& options) {
    const std::string script = options.script.value_or(HB_CLIENT_SCRIPT);
    Command command;
    std::string path = kSystemPath;
    switch (kind) {
        case ClientKind::Dash:
            command.argv = {kDash, script};
            break;
        case ClientKind::BusyboxSh:
            command.argv = {kBusybox, "sh", script};
            path = busybox_path();
            break;
        case ClientKind::BashPosix:
            command.argv = {kBash, "--posix", script};
            break;
        case ClientKind::Cpp:
            command.argv = {HB_HOSTBRIDGE_BIN, "request"};
            break;
        case ClientKind::Agent:
            command.argv = {HB_AGENT_BIN, "request"};
            break;
    }
    command.argv.insert(command.argv.end(), args.begin(), args.end());
    if (options.path_prefix) path = *options.path_prefix + ":" + path;
    // A clean environment: nothing of the test runner's (a HOSTBRIDGE_SPOOL
    // or REPO_ROOT of its own) may leak in, but the sanitizer's options
    // (Command::env). A UTF-8 locale on purpose: the shell client must not
    // depend on the caller's.
    std::vector<std::string> env = {"PATH=" + path, "HOME=" + capture_.path(), "LANG=C.UTF-8"};
    env.insert(env.end(), options.env.begin(), options.env.end());
    command.env = env;
    command.out = capture_.path("out");
    command.err = capture_.path("err");
    command.append = true;
    command.cwd = options.cwd;
    command.umask = options.umask;
    started_ = Clock::now();
    child_ = Child(command);
}

ClientProcess::~ClientProcess() = default;

bool ClientProcess::running() {
    return child_.running();
}

void ClientProcess::signal(int signo) {
    child_.signal(signo);
}

bool ClientProcess::wait_for_err(const std::string& text, std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    for (;;) {
        if (read_file(capture_.path("err")).find(text) != std::string::npos) return true;
        if (!running() || Clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

ClientResult ClientProcess::wait(std::chrono::milliseconds limit) {
    ClientResult result;
    const int code = child_.wait_or_kill(limit);
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_);
    result.exit_code = code >= 0 ? code : -1;
    result.out = read_file(capture_.path("out"));
    result.err = read_file(capture_.path("err"));
    return result;
}

ClientResult run_client(ClientKind kind, const std::vector<std::string>& args,
                        const ClientOptions& options) {
    ClientProcess client(kind, args, options);
    return client.wait();
}

int run_program(const std::vector<std::string>& argv) {
    Command command;
    command.argv = argv;
    command.env = std::vector<std::string>{"PATH=" + std::string(kSystemPath)};
    const int code = run(command, std::chrono::seconds(30));
    return code >= 0 ? code : -1;
}

Child start_daemon(const std::vector<std::string>& argv, const std::string& log) {
    Command command;
    command.argv = argv;
    command.env = std::vector<std::string>{"PATH=" + std::string(kSystemPath)};
    command.out = command.err = log;
    command.append = true;
    command.own_group = true;
    return Child(command);
}

std::string utc_in(int seconds) {
    return sys::format_utc(std::time(nullptr) + seconds);
}

}  // namespace hb::test
