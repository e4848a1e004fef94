#include "tests/cli/cli_harness.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <stdexcept>

#include "admin/install/units.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"
#include "tests/support/utc.hpp"

namespace hb::test {
namespace {

// What hostbridge never gets from the test's environment.
const std::vector<std::string> kUnset = {"DBUS_SESSION_BUS_ADDRESS", "XDG_DATA_HOME",
                                         "HOSTBRIDGE_SPOOL", "REPO_ROOT", "EDITOR"};

void must(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(what);
}

void run_checked(const std::vector<std::string>& argv, const std::string& cwd) {
    admin::RunOptions options;
    options.cwd = cwd;
    options.env_set = {"HOME=" + cwd, "GIT_CONFIG_NOSYSTEM=1"};
    auto ran = admin::run_process(argv, options);
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

bool has_line(const std::string& text, const std::string& line) {
    auto lines = split_lines(text);
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
    for (const auto& d : {home, config_home, state_home}) must(admin::make_dirs(d, 0755).ok(), d);
    must(admin::make_dirs(runtime_dir, 0700).ok(), runtime_dir);
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
    // A sanitized build's options, as run-tests sets them. Without them a
    // sanitized `hostbridge request` ran LeakSanitizer at exit, whose
    // stop-the-world hung under load one run in about seven (issue 26:
    // RequestOnHost.AnAnswerTheExecutorWroteIsReportedAsItIs, the client
    // traced by its own LSan thread with /proc/PID/task open, never exiting).
    for (auto& option : sanitizer_env()) e.push_back(std::move(option));
    return e;
}

Command Home::command(const std::vector<std::string>& args) const {
    Command command;
    command.argv = {std::string(HB_BIN_DIR) + "/hostbridge"};
    command.argv.insert(command.argv.end(), args.begin(), args.end());
    command.env = environment_with(env(), kUnset);
    return command;
}

Prompted Home::hostbridge_on_a_terminal(const std::vector<std::string>& args,
                                        const std::string& answer) const {
    Interactive terminal(command(args));
    terminal.read_until("[y/N]");
    terminal.type(answer);
    // What it says after the answer is part of what the person sees.
    Prompted out;
    out.code = terminal.finish();
    out.shown = terminal.shown();
    return out;
}

Ran Home::hostbridge(const std::vector<std::string>& args, const std::string& cwd,
                     const std::vector<std::string>& extra_env) const {
    std::vector<std::string> argv = {std::string(HB_BIN_DIR) + "/hostbridge"};
    argv.insert(argv.end(), args.begin(), args.end());
    admin::RunOptions options;
    options.timeout = std::chrono::seconds(60);
    options.cwd = cwd.empty() ? root : cwd;
    options.env_set = env();
    options.env_set.insert(options.env_set.end(), extra_env.begin(), extra_env.end());
    options.env_unset = kUnset;
    auto ran = admin::run_process(argv, options);
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
    must(admin::make_dirs(dir, 0755).ok(), dir);
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
               "    profiles: [jobs]\n",
               0644);
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
                                 const std::string& request, std::chrono::seconds limit,
                                 const std::function<bool()>& also) {
    Drained result;
    TempDir scratch("cli-drain-log");
    Command command;
    command.argv = argv;
    command.out = command.err = scratch.path("log");
    Child drain(command);
    const std::string response = spool + "/responses/" + request + ".response.json";
    wait_until(
        [&] {
            if (exists(response)) {
                try {
                    auto json = nlohmann::json::parse(read_file(response));
                    const std::string state = json.value("state", "");
                    if (state != "queued" && state != "running" && (!also || also())) {
                        result.response = json;
                        return true;
                    }
                } catch (const nlohmann::json::exception&) {
                }
            }
            if (drain.running()) return false;
            if (exists(response)) result.response = nlohmann::json::parse(read_file(response));
            return true;
        },
        limit);
    result.exit_code = drain.stop(std::chrono::seconds(10));
    result.log = read_file(scratch.path("log"));
    return result;
}

std::vector<std::string> exec_start_of(const Home& home, const std::string& slug) {
    return admin::parse_exec_start(read_file(home.unit_dir() + "/hostbridge-" + slug + ".service"));
}

}  // namespace hb::test
