// Drives the real `hostbridge` binary in a temporary home: HOME,
// XDG_CONFIG_HOME and XDG_STATE_HOME all point into a fresh directory
// (XDG dirs deliberately away from their defaults, to prove they are
// honoured), XDG_RUNTIME_DIR at an empty dir (so no user manager is ever
// reachable by accident), and projects are real git work trees with a
// stack script that records every call.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/files.hpp"
#include "tests/support/process.hpp"
#include "tests/support/pty.hpp"
#include "tests/support/spool.hpp"

namespace hb::test {

// TempDir, read_file, write_file, split_lines: tests/support/files.hpp.
bool exists(const std::string& path);     // lstat
mode_t mode_of(const std::string& path);  // lstat, & 07777
// Every entry below `dir` (files, dirs, links), relative, sorted.
std::vector<std::string> tree(const std::string& dir);
bool has_line(const std::string& text, const std::string& line);
bool contains(const std::string& text, const std::string& part);

struct Ran {
    int code = -1;
    std::string out;
    std::string err;
};

// What a command that asks "[y/N]" showed on its terminal before the
// question, and how it exited once answered.
struct Prompted {
    std::string shown;
    int code = -1;
};

// The temporary home plus helpers to run hostbridge in it.
class Home {
  public:
    explicit Home(const std::string& root);
    std::string root;
    std::string home;
    std::string config_home;
    std::string state_home;
    std::string runtime_dir;

    // hostbridge ARGS, in `cwd` (default: root), with this home's env plus
    // `extra_env` ("K=V"); stdin is /dev/null.
    Ran hostbridge(const std::vector<std::string>& args, const std::string& cwd = "",
                   const std::vector<std::string>& extra_env = {}) const;
    std::vector<std::string> env() const;
    // hostbridge ARGS for a test that starts it itself (tests/support:
    // Child, Interactive), in the environment hostbridge() gives it.
    Command command(const std::vector<std::string>& args) const;
    // hostbridge ARGS on a pseudo-terminal (tests/support/pty.hpp), with
    // this process's environment and this home's: `answer` ("y\n") is
    // typed once it has asked "[y/N]".
    Prompted hostbridge_on_a_terminal(const std::vector<std::string>& args,
                                      const std::string& answer) const;

    std::string config_dir(const std::string& slug) const;
    std::string state_dir(const std::string& slug) const;
    std::string lib_dir(const std::string& slug) const;
    std::string unit_dir() const;
    nlohmann::json bridge_json(const std::string& slug) const;
};

// A git work tree with a recording stack script and a compose file.
struct Project {
    Project(const std::string& parent, const std::string& name);
    std::string dir;
    std::string stack;    // dir/stack: appends "$*" to dir/calls.log
    std::string calls;    // dir/calls.log
    std::string compose;  // dir/compose.yaml: api (build), db, web (build), worker
    std::string spool() const { return dir + "/untracked/hostbridge"; }
};

// `install --project-dir P --stack-bin P/stack --compose-file P/compose.yaml`
// plus --allow-root when the tests run as root (the drain refuses root
// otherwise) and `extra`.
std::vector<std::string> install_args(const Project& project,
                                      const std::vector<std::string>& extra = {});

// Publishes a request (tmp/ then rename into requests/) for now; returns its
// basename.
std::string drop_request(const std::string& spool, const std::string& verb,
                         const std::string& arg = "");

// Runs `argv` (a drain from a unit's ExecStart), waits until
// responses/<name>.response.json holds a terminal state, then stops the
// drain with SIGTERM (it may be lingering). Returns the response (null JSON
// if none came within `limit`) and the drain's exit code (-signal when
// one ended it).
struct Drained {
    nlohmann::json response;
    int exit_code = -1;
    std::string log;  // the drain's stderr+stdout
};
// `also`, when given, must hold too before the drain is stopped: a request
// answered first says nothing of the entries after it in the spool.
Drained run_drain_until_answered(const std::vector<std::string>& argv, const std::string& spool,
                                 const std::string& request,
                                 std::chrono::seconds limit = std::chrono::seconds(30),
                                 const std::function<bool()>& also = {});

// The ExecStart argv of the installed .service unit of `slug`.
std::vector<std::string> exec_start_of(const Home& home, const std::string& slug);

}  // namespace hb::test
