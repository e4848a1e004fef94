#include "admin/commands/policy_edit.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <vector>

#include "admin/install/agent_files.hpp"
#include "admin/install/install_record.hpp"
#include "admin/util/args.hpp"
#include "admin/util/change_view.hpp"
#include "admin/util/fs_util.hpp"
#include "common/engine_hold.hpp"
#include "common/policy.hpp"
#include "display/visible.hpp"
#include "engines/registry.hpp"

namespace hb::admin {
namespace {

using display::visible;

constexpr std::string_view kCmd = "policy";
constexpr std::size_t kMaxPolicy = 1u << 20;

// $VISUAL, else $EDITOR, else Debian's `editor` alternative, else vi:
// split on blanks (`code --wait` works), run from PATH with this terminal.
// The person's own environment: this is their command, run by them.
std::vector<std::string> editor_argv() {
    const char* chosen = nullptr;
    for (const char* name : {"VISUAL", "EDITOR"}) {
        const char* value = std::getenv(name);
        if (value != nullptr && *value != '\0') {
            chosen = value;
            break;
        }
    }
    if (chosen == nullptr) chosen = ::access("/usr/bin/editor", X_OK) == 0 ? "editor" : "vi";
    std::vector<std::string> argv;
    std::istringstream words(chosen);
    for (std::string word; words >> word;) argv.push_back(word);
    return argv;
}

// The editor's exit status, or -1 when it could not be run.
int run_editor(std::vector<std::string> argv, const std::string& file) {
    argv.push_back(file);
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        ::execvp(raw[0], raw.data());
        std::cerr << "hostbridge policy: cannot run " << raw[0] << ": " << std::strerror(errno)
                  << "\n";
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Up and rebuild set auto where the install holds them anyway: said, so
// the person is not surprised (common/engine_hold.hpp).
void say_held(const Config& config, const common::Policy& policy) {
    const common::EngineHold hold = exec::engine_hold(config);
    for (Verb verb : common::kEngineVerbs) {
        if (common::effective_mode(config, hold, policy, verb) != policy.mode(verb, {})) {
            std::cout << "note: " << verb_info(verb).policy_key
                      << "=auto stays ask on this install: " << hold.of(verb) << "\n";
        }
    }
}

}  // namespace

int run_policy_edit(const Config& config, const std::optional<std::string>& from) {
    const std::string& path = config.policy_file;
    const std::string copy = path + ".edit";
    auto current = read_file_if_exists(path, kMaxPolicy);
    if (!current) {
        print_error(kCmd, "cannot read " + visible(path) + ": " + current.error().message);
        return kExitFailure;
    }
    const std::string before = current->value_or("");
    if (from) {
        // The edit is FILE's text, in place of the editor's; a kept copy
        // is replaced by it.
        auto given = read_file_if_exists(*from, kMaxPolicy);
        if (!given || !given->has_value()) {
            print_error(kCmd, "cannot read " + visible(*from) +
                                  (given ? ": no such file" : ": " + given.error().message) +
                                  "; policy.conf is unchanged");
            return kExitFailure;
        }
        if (auto made = write_file_atomic(copy, **given, 0600); !made) {
            print_error(kCmd, made.error().message);
            return kExitFailure;
        }
    } else {
        // A copy an earlier edit left (refused) is where this one starts.
        auto kept = read_file_if_exists(copy, kMaxPolicy);
        if (!kept) {
            print_error(kCmd, "cannot read " + visible(copy) + ": " + kept.error().message);
            return kExitFailure;
        }
        if (kept->has_value()) {
            std::cout << "continuing from the edit kept in " << visible(copy) << "\n";
        } else if (auto made = write_file_atomic(copy, before, 0600); !made) {
            print_error(kCmd, made.error().message);
            return kExitFailure;
        }
        const int status = run_editor(editor_argv(), copy);
        if (status != 0) {
            print_error(kCmd,
                        "the editor " + std::string(status < 0 ? "could not be run" : "failed") +
                            "; policy.conf is unchanged, the edit is kept in " + visible(copy));
            return kExitFailure;
        }
    }
    auto edited = read_file_if_exists(copy, kMaxPolicy);
    if (!edited || !edited->has_value()) {
        print_error(kCmd, "cannot read the edit back from " + visible(copy) + "; policy.conf is " +
                              "unchanged");
        return kExitFailure;
    }
    const std::string& text = **edited;
    // Read as the executor reads it: a line it does not understand would
    // deny every command, so such a file is not put in place.
    const common::Policy parsed = common::parse_policy(text, config.services);
    if (!parsed.not_understood.empty()) {
        print_error(kCmd, "the edit is not put in place: " + visible(parsed.not_understood) +
                              "; policy.conf is unchanged, the edit is kept in " + visible(copy) +
                              " and `" + self_command() + " policy edit` goes on from it");
        return kExitFailure;
    }
    for (const auto& warning : parsed.warnings) print_warning(kCmd, visible(warning));
    // An edit of policy.conf meanwhile (by hand, by another command) is not
    // overwritten.
    auto again = read_file_if_exists(path, kMaxPolicy);
    if (!again || again->value_or("") != before) {
        print_error(kCmd, visible(path) + " changed while it was being edited; it is left as " +
                              "it is, the edit is kept in " + visible(copy));
        return kExitFailure;
    }
    if (text != before) {
        mode_t mode = 0644;
        struct stat st {};
        if (::lstat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;
        if (auto diff = render_change(path + " (before)", before, path + " (now)", text); diff)
            std::cout << *diff;
        if (auto wrote = write_file_atomic(path, text, mode); !wrote) {
            print_error(kCmd, wrote.error().message + "; the edit is kept in " + visible(copy));
            return kExitFailure;
        }
        std::cout << "wrote " << visible(path) << "; the executor reads it for the next request\n";
    } else {
        std::cout << visible(path) << ": no change\n";
    }
    ::unlink(copy.c_str());
    say_held(config, parsed);
    // What the agent is told follows, even for a file edited by hand
    // before (then saved unchanged here).
    return refresh_what_the_agent_reads(config);
}

int refresh_what_the_agent_reads(const Config& config) {
    auto refreshed = refresh_agent_files(config);
    if (!refreshed) {
        print_error(kCmd, "policy.conf is in place, but what the agent reads of it is not: " +
                              refreshed.error().message);
        return kExitFailure;
    }
    for (const auto& [file, what] : *refreshed) std::cout << visible(file) << ": " << what << "\n";
    return kExitOk;
}

}  // namespace hb::admin
