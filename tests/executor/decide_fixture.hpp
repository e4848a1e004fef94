// A DrainFixture whose backend is a real recording stack script, for the
// end-to-end tests of the decide-and-run step (and bench_status).
//
// The script (POSIX sh, in the project like a real `stack`) appends its argv,
// one line per call, the words separated by tabs, to <root>/record: OUTSIDE
// the project, so nothing it writes can touch the integrity gate's pins.
// What it does besides recording is told per test through <root>/ctl/mode
// (also outside the project, so changing it changes no pinned file):
//   exit=N     print a line, exit N
//   timeout    a grandchild sleeping in the background, deaf to SIGTERM,
//              then wait for it
//   killself   SIGKILL itself
//   daemon     a background sleep that keeps stdout open, then exit 0
//              (its pid appended to <root>/ctl/daemons)
//   cat        print <root>/ctl/payload byte for byte
//   stderr=N   print <root>/ctl/payload on stderr, exit N (podman-compose's
//              recovered errors: issue 48)
//   fds        list the shell's own fd table (ls -l /proc/$$/fd)
//   env        print the environment it was exec'd with and its cwd
// Every mode writes the script's pid (its process group id: the runner
// makes it a session leader) to <root>/ctl/pgid.
#pragma once

#include <dirent.h>
#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include "common/config.hpp"
#include "common/sha256.hpp"
#include "tests/support/drain_fixture.hpp"

namespace hb::test {

// The recording script; `record` and `ctl` are absolute paths outside the project.
inline std::string recording_script(const std::string& record, const std::string& ctl) {
    return "#!/bin/sh\n"
           "# A recording stand-in for the project's stack script (tests only).\n"
           "line=$0\n"
           "for a in \"$@\"; do line=\"$line\t$a\"; done\n"
           "printf '%s\\n' \"$line\" >> '" +
           record +
           "'\n"
           "CTL='" +
           ctl +
           "'\n"
           "mode=\n"
           "[ -f \"$CTL/mode\" ] && read -r mode < \"$CTL/mode\"\n"
           "[ -z \"$mode\" ] && exit 0\n"
           "echo $$ > \"$CTL/pgid\"\n"
           "case $mode in\n"
           "  exit=*) echo \"exiting with ${mode#exit=}\"; exit \"${mode#exit=}\" ;;\n"
           "  timeout) (trap '' TERM; exec sleep 300) & echo $! > \"$CTL/grandchild\"; wait ;;\n"
           "  daemon) sleep 60 & echo $! >> \"$CTL/daemons\"; echo started; exit 0 ;;\n"
           "  killself) kill -KILL $$ ;;\n"
           "  cat) cat \"$CTL/payload\" ;;\n"
           "  stderr=*) cat \"$CTL/payload\" >&2; exit \"${mode#stderr=}\" ;;\n"
           "  fds) ls -l /proc/$$/fd ;;\n"
           "  env) tr '\\0' '\\n' < /proc/$$/environ; echo \"cwd=$(pwd -P)\" ;;\n"
           "esac\n";
}

// Runs `argv` (argv[0] looked up in PATH) with stdout and stderr together;
// throws unless it exits 0. Returns what it printed.
inline std::string run_program(const std::vector<std::string>& args) {
    Command command;
    command.argv = args;
    command.search_path = true;
    const Output o = run_output(command);
    if (o.code != 0) {
        throw std::runtime_error(args[0] + " " + (args.size() > 1 ? args.back() : "") +
                                 " failed: " + o.text);
    }
    return o.text;
}

// Every live (non-zombie) process whose process group is `pgid`.
inline std::vector<pid_t> live_group_members(pid_t pgid) {
    std::vector<pid_t> out;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return out;
    while (const dirent* e = ::readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        const std::string stat = read_file(std::string("/proc/") + e->d_name + "/stat");
        const auto close = stat.rfind(')');
        if (close == std::string::npos || close + 2 >= stat.size()) continue;
        std::istringstream rest(stat.substr(close + 2));
        char state = 0;
        long ppid = 0, pgrp = 0;
        rest >> state >> ppid >> pgrp;
        if (pgrp == pgid && state != 'Z') out.push_back(static_cast<pid_t>(pid));
    }
    ::closedir(proc);
    return out;
}

class StackFixture : public DrainFixture {
  public:
    explicit StackFixture(const std::string& base = "/tmp") : DrainFixture(HB_PARSER_BIN, base) {
        record_path = root + "/record";
        ctl = root + "/ctl";
        stack = project + "/stack";
        fs::create_directories(ctl);
        install_script(stack);
        config["backend"] = {{"kind", "stack"}, {"argv", {stack}}};
        // As install does: the stack script is pinned, and runs from its
        // approved copy in the run tree.
        pin({"stack"});
    }

    // Writes the recording script to `path`, mode 0755.
    void install_script(const std::string& path) const {
        write_file(path, recording_script(record_path, ctl));
        fs::permissions(path, fs::perms(0755));
    }

    // policy.conf with every verb auto but those `extra` sets (MODE_<verb>
    // keys replace the verb's line, per-service keys are added).
    void policy_all_auto_but(const std::string& extra) const {
        std::string text;
        for (const char* verb :
             {"ping", "status", "health", "logs", "down", "restart", "rebuild"}) {
            const std::string key = std::string("MODE_") + verb + "=";
            if (extra.find(key) == std::string::npos) text += key + "auto\n";
        }
        write_file(root + "/policy.conf", text + extra);
    }

    // The reason of a request's response, "(no reason)" when it has none.
    std::string reason_of(const std::string& name) const {
        const auto r = response(name);
        if (!r || !(*r)["reason"].is_string()) return "(no reason)";
        return (*r)["reason"];
    }

    // What the script does on its next calls (empty: record only).
    void behave(const std::string& mode) const { write_file(ctl + "/mode", mode + "\n"); }
    std::string ctl_file(const std::string& name) const { return read_file(ctl + "/" + name); }

    // Every call the script recorded so far, one argv each.
    std::vector<std::vector<std::string>> recorded() const {
        std::vector<std::vector<std::string>> calls;
        std::istringstream in(read_file(record_path));
        for (std::string line; std::getline(in, line);) {
            std::vector<std::string> argv;
            std::size_t start = 0;
            for (;;) {
                const auto tab = line.find('\t', start);
                argv.push_back(line.substr(start, tab - start));
                if (tab == std::string::npos) break;
                start = tab + 1;
            }
            calls.push_back(std::move(argv));
        }
        return calls;
    }

    // The project as a real git repository with everything committed (the
    // spool ignored, as the installer arranges).
    void git_init() const {
        write_file(project + "/.gitignore", "/untracked/\n");
        run_git({"init", "-q"});
        run_git({"add", "-A"});
        commit("initial");
    }
    void git(const std::vector<std::string>& args) const { run_git(args); }
    void commit(const std::string& message) const {
        run_git({"commit", "-q", "-a", "-m", message});
    }
    std::string git_status() const { return run_git({"status", "--porcelain"}); }

    // The compose backend as install sets it up: compose.yaml pinned and its
    // rendered copy stored (admin/compose/compose_render.hpp), the recording script in
    // place of the compose command. Returns the checkout's compose file.
    std::string use_compose(const std::string& text = "services: {}\n") {
        const std::string file = project + "/compose.yaml";
        write_file(file, text);
        const std::string rendered = state + "/rendered/compose.yaml";
        fs::create_directories(fs::path(rendered).parent_path());
        write_file(rendered, text);
        // podman-compose: docker compose's rows are denied until a test
        // runs them (docs/COMPOSE.md, "docker compose").
        config["backend"] = {
            {"kind", "compose"}, {"argv", {stack}}, {"file", file}, {"flavour", "podman-compose"}};
        config["rendered"] =
            json::array({{{"path", "compose.yaml"}, {"sha256", hb::common::sha256_hex(text)}}});
        pin({"stack", "compose.yaml"});
        return file;
    }

    // Where a pinned file of the checkout runs from (executor/run_tree.hpp).
    std::string in_tree(const std::string& rel) const { return root + "/run/project/" + rel; }

    void limits(int mutating, int mutating_s, int read_only, int read_only_s) {
        config["limits"]["mutating"] = {{"count", mutating}, {"seconds", mutating_s}};
        config["limits"]["read_only"] = {{"count", read_only}, {"seconds", read_only_s}};
        write_config();
    }

    // The config as the executor reads it.
    hb::Config parsed_config() const {
        auto parsed = hb::parse_config(config.dump());
        if (!parsed) throw std::runtime_error("config: " + parsed.error().message);
        return *parsed;
    }

    // A request with an explicit requested_at.
    std::string publish_at(const std::string& verb, const std::string& arg, std::time_t at) {
        json b = {{"verb", verb}};
        if (!arg.empty()) b["arg"] = arg;
        b["requested_at"] = utc(at, true);
        return publish_as(name(verb), b.dump());
    }

    // Runs one drain and checks it exited 0.
    void drain() {
        const Exit e = run();
        if (e.code != 0)
            throw std::runtime_error("drain exited " + std::to_string(e.code) + ": " + e.err);
    }

    // Runs one drain with exactly `env` as its environment (DrainFixture's
    // drains get an empty one) and checks it exited 0.
    void drain_with_env(const std::vector<std::string>& env) {
        SpawnOptions options;
        options.env = env;
        options.log = root + "/stderr-env";
        const Exit e = finish(start("drain", options));
        if (e.code != 0) throw std::runtime_error("drain failed: " + e.err);
    }

    // The reason of the last audit event for `request`.
    std::string audit_reason(const std::string& request, const std::string& event) const {
        const auto lines = audit_for(request, event);
        if (lines.size() != 1) return "<" + std::to_string(lines.size()) + " " + event + " events>";
        return lines[0]["reason"].is_null() ? "<null>" : lines[0]["reason"].get<std::string>();
    }

    std::string record_path, ctl, stack;

  private:
    // git in the project, with a fixed identity; returns what it printed.
    std::string run_git(const std::vector<std::string>& args) const {
        std::vector<std::string> argv = {"git",
                                         "-C",
                                         project,
                                         "-c",
                                         "user.name=hostbridge-test",
                                         "-c",
                                         "user.email=test@example.invalid",
                                         "-c",
                                         "commit.gpgsign=false"};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_program(argv);
    }
};

// The stack backend with a context recorded by `install --build-context`:
// `rebuild S` is still `$STACK build S`, but the stack is handed a
// host-owned snapshot with a screened Containerfile, never the checkout
// (docs/BUILDS.md, "The stack backend").
inline void record_stack_build(StackFixture& f, const std::string& containerfile_text) {
    fs::create_directories(f.project + "/services/web");
    write_file(f.project + "/services/web/Containerfile", containerfile_text);
    write_file(f.project + "/services/web/index.html", "<h1>web</h1>\n");
    f.config["build"] = {
        {"max_files", 100},
        {"max_bytes", 1 << 20},
        {"services",
         {{{"service", "web"}, {"context", "services/web"}, {"containerfile", "Containerfile"}}}}};
    f.write_config();
}

}  // namespace hb::test
