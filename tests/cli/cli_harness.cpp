#include "tests/cli/cli_harness.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "admin/install/units.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"
#include "tests/support/utc.hpp"

namespace hb::test {
namespace {

void must(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(what);
}

void run_checked(const std::vector<std::string>& argv, const std::string& cwd) {
    cli::RunOptions options;
    options.cwd = cwd;
    options.env_set = {"HOME=" + cwd, "GIT_CONFIG_NOSYSTEM=1"};
    auto ran = cli::run_process(argv, options);
    must(ran && ran->ok(), "command failed: " + argv[0] + " " + (ran ? ran->err : ""));
}

void list_tree(const std::string& base, const std::string& rel, std::vector<std::string>& out) {
    DIR* dir = ::opendir((base + (rel.empty() ? "" : "/" + rel)).c_str());
    if (dir == nullptr) return;
    while (dirent* e = ::readdir(dir)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string child = rel.empty() ? name : rel + "/" + name;
        out.push_back(child);
        struct stat st {};
        if (::lstat((base + "/" + child).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            list_tree(base, child, out);
        }
    }
    ::closedir(dir);
}

}  // namespace

TempRoot::TempRoot() {
    char templ[] = "/tmp/hb-cli-test-XXXXXX";
    must(::mkdtemp(templ) != nullptr, "mkdtemp");
    path_ = templ;
}

TempRoot::~TempRoot() {
    (void)cli::remove_tree(path_);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_file(const std::string& path, const std::string& content, mode_t mode) {
    auto slash = path.rfind('/');
    must(cli::make_dirs(path.substr(0, slash), 0755).ok(), "mkdir " + path);
    must(cli::write_file_atomic(path, content, mode).ok(), "write " + path);
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return 0;
    return st.st_mode & 07777;
}

std::vector<std::string> tree(const std::string& dir) {
    std::vector<std::string> out;
    list_tree(dir, "", out);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

bool has_line(const std::string& text, const std::string& line) {
    auto lines = lines_of(text);
    return std::find(lines.begin(), lines.end(), line) != lines.end();
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

Home::Home(const std::string& r)
    : root(r),
      home(r + "/home"),
      config_home(r + "/xdg-config"),
      state_home(r + "/xdg-state"),
      runtime_dir(r + "/runtime") {
    for (const auto& d : {home, config_home, state_home}) must(cli::make_dirs(d, 0755).ok(), d);
    must(cli::make_dirs(runtime_dir, 0700).ok(), runtime_dir);
}

std::vector<std::string> Home::env() const {
    std::vector<std::string> e = {
        "HOME=" + home,
        "XDG_CONFIG_HOME=" + config_home,
        "XDG_STATE_HOME=" + state_home,
        "XDG_RUNTIME_DIR=" + runtime_dir,
        "SHELL=/bin/bash",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LC_ALL=C.UTF-8"};
    // A sanitized build's options, as run-tests sets them (as the executor
    // fixtures do, tests/executor/drain_fixture.hpp). Without them a
    // sanitized `hostbridge request` ran LeakSanitizer at exit, whose
    // stop-the-world hung under load one run in about seven (issue 26:
    // RequestOnHost.AnAnswerTheExecutorWroteIsReportedAsItIs, the client
    // traced by its own LSan thread with /proc/PID/task open, never exiting).
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
        if (const char* value = std::getenv(name)) e.push_back(std::string(name) + "=" + value);
    }
    return e;
}

Prompted Home::hostbridge_on_a_terminal(const std::vector<std::string>& args,
                                        const std::string& answer) const {
    std::vector<std::string> argv = {std::string(HB_BIN_DIR) + "/hostbridge"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    const std::vector<std::string> environment = env();
    int master = -1;
    const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    must(pid >= 0, "forkpty");
    if (pid == 0) {
        for (const auto& e : environment) ::putenv(::strdup(e.c_str()));
        ::execv(c_argv[0], c_argv.data());
        ::_exit(127);
    }
    Prompted out;
    char buf[4096];
    while (!contains(out.shown, "[y/N]")) {
        const ssize_t n = ::read(master, buf, sizeof buf);
        if (n <= 0) break;
        out.shown.append(buf, static_cast<std::size_t>(n));
    }
    must(::write(master, answer.data(), answer.size()) == static_cast<ssize_t>(answer.size()),
         "write the answer");
    // What it says after the answer is part of what the person sees.
    for (ssize_t n; (n = ::read(master, buf, sizeof buf)) > 0;) {
        out.shown.append(buf, static_cast<std::size_t>(n));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
}

Ran Home::hostbridge(const std::vector<std::string>& args, const std::string& cwd,
                     const std::vector<std::string>& extra_env) const {
    std::vector<std::string> argv = {std::string(HB_BIN_DIR) + "/hostbridge"};
    argv.insert(argv.end(), args.begin(), args.end());
    cli::RunOptions options;
    options.timeout = std::chrono::seconds(60);
    options.cwd = cwd.empty() ? root : cwd;
    options.env_set = env();
    options.env_set.insert(options.env_set.end(), extra_env.begin(), extra_env.end());
    options.env_unset = {"DBUS_SESSION_BUS_ADDRESS", "XDG_DATA_HOME", "HOSTBRIDGE_SPOOL",
                         "REPO_ROOT", "EDITOR"};
    auto ran = cli::run_process(argv, options);
    must(ran.ok(), "cannot run hostbridge");
    return Ran{ran->timed_out ? -2 : ran->exit_code, ran->out, ran->err};
}

std::string Home::config_dir(const std::string& slug) const {
    return config_home + "/hostbridge/" + slug;
}
std::string Home::state_dir(const std::string& slug) const {
    return state_home + "/hostbridge/" + slug;
}
std::string Home::lib_dir(const std::string& slug) const {
    return home + "/.local/lib/hostbridge/" + slug;
}
std::string Home::unit_dir() const {
    return config_home + "/systemd/user";
}

nlohmann::json Home::bridge_json(const std::string& slug) const {
    return nlohmann::json::parse(read_file(config_dir(slug) + "/bridge.json"));
}

Project::Project(const std::string& parent, const std::string& name)
    : dir(parent + "/" + name),
      stack(dir + "/stack"),
      calls(dir + "/calls.log"),
      compose(dir + "/compose.yaml") {
    must(cli::make_dirs(dir, 0755).ok(), dir);
    run_checked({"/usr/bin/git", "init", "-q", "."}, dir);
    // A real stack script: records how it was called, answers like one. It
    // runs from its approved copy in the run tree, so it records into the
    // checkout the executor names (executor/run_tree.hpp).
    write_file(
        stack,
        "#!/bin/sh\n"
        "printf '%s\\n' \"$*\" >> \"${HOSTBRIDGE_PROJECT_DIR:-$(dirname \"$0\")}/calls.log\"\n"
        "echo \"stack ran: $*\"\n",
        0755);
    write_file(compose,
               "x-built: &built\n"
               "  build: .\n"
               "services:\n"
               "  api:\n"
               "    <<: *built\n"
               "  db:\n"
               "    image: postgres:16\n"
               "  web:\n"
               "    build:\n"
               "      context: ./web\n"
               "  worker:\n"
               "    image: busybox\n"
               "    profiles: [jobs]\n");
}

std::vector<std::string> install_args(const Project& project,
                                      const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"install",     "--project-dir",  project.dir,    "--stack-bin",
                                     project.stack, "--compose-file", project.compose};
    if (::geteuid() == 0) args.push_back("--allow-root");
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
}

std::string drop_request(const std::string& spool, const std::string& verb,
                         const std::string& arg) {
    static std::mt19937_64 rng{std::random_device{}()};
    char nonce[17];
    std::snprintf(nonce, sizeof nonce, "%016llx", static_cast<unsigned long long>(rng()));
    const std::string name = utc(std::time(nullptr), false) + "-" + verb + "-" + nonce + ".json";
    nlohmann::json body = {{"verb", verb}, {"requested_at", utc(std::time(nullptr), true)}};
    if (!arg.empty()) body["arg"] = arg;
    write_file(spool + "/tmp/" + name, body.dump());
    must(::rename((spool + "/tmp/" + name).c_str(), (spool + "/requests/" + name).c_str()) == 0,
         "publish " + name);
    return name;
}

Drained run_drain_until_answered(const std::vector<std::string>& argv, const std::string& spool,
                                 const std::string& request, std::chrono::seconds limit) {
    Drained result;
    char log_templ[] = "/tmp/hb-cli-drain-log-XXXXXX";
    int log_fd = ::mkstemp(log_templ);
    must(log_fd >= 0, "mkstemp");
    std::vector<std::string> args = argv;
    std::vector<char*> argp;
    for (auto& a : args) argp.push_back(a.data());
    argp.push_back(nullptr);
    pid_t pid = ::fork();
    must(pid >= 0, "fork");
    if (pid == 0) {
        ::dup2(log_fd, 1);
        ::dup2(log_fd, 2);
        int devnull = ::open("/dev/null", O_RDONLY);
        ::dup2(devnull, 0);
        ::execv(argp[0], argp.data());
        ::_exit(127);
    }
    ::close(log_fd);
    const std::string response = spool + "/responses/" + request + ".response.json";
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
        if (exists(response)) {
            try {
                auto json = nlohmann::json::parse(read_file(response));
                std::string state = json.value("state", "");
                if (state != "queued" && state != "running") {
                    result.response = json;
                    break;
                }
            } catch (const nlohmann::json::exception&) {
            }
        }
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            if (exists(response)) result.response = nlohmann::json::parse(read_file(response));
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!exited) {
        ::kill(pid, SIGTERM);
        const auto stop_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (::waitpid(pid, &status, WNOHANG) != pid) {
            if (std::chrono::steady_clock::now() > stop_deadline) {
                ::kill(pid, SIGKILL);
                ::waitpid(pid, &status, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.log = read_file(log_templ);
    ::unlink(log_templ);
    return result;
}

std::vector<std::string> exec_start_of(const Home& home, const std::string& slug) {
    return cli::parse_exec_start(read_file(home.unit_dir() + "/hostbridge-" + slug + ".service"));
}

}  // namespace hb::test
