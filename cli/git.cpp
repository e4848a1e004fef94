#include "cli/git.hpp"

#include "cli/fs_util.hpp"
#include "cli/process.hpp"
#include "cli/resolve_binary.hpp"

namespace hb::cli {
namespace {

Result<RunResult> git(const std::string& dir, std::vector<std::string> args) {
    auto found = find_on_path("git", resolve_env_from_process().path_var);
    if (!found) return make_error("git is not installed (not on PATH)");
    args.insert(args.begin(), {*found, "-C", dir});
    RunOptions options;
    options.timeout = std::chrono::seconds(30);
    // The user's pager and prompts have no place here.
    options.env_set = {"GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"};
    auto ran = run_process(args, options);
    if (!ran) return ran.error();
    if (ran->timed_out) return make_error("git did not answer within 30 seconds");
    return ran;
}

std::string first_line(const std::string& text) {
    auto nl = text.find('\n');
    return text.substr(0, nl);
}

}  // namespace

Result<std::string> git_toplevel(const std::string& dir) {
    auto ran = git(dir, {"rev-parse", "--show-toplevel"});
    if (!ran) return ran.error();
    if (!ran->ok()) {
        std::string why = first_line(ran->err);
        return make_error(dir + " is not in a git work tree" +
                          (why.empty() ? "" : " (" + why + ")"));
    }
    return canonical_path(first_line(ran->out));
}

Result<bool> git_is_ignored(const std::string& top, const std::string& rel) {
    auto ran = git(top, {"check-ignore", "-q", "--", rel + "/"});
    if (!ran) return ran.error();
    if (ran->exit_code == 0) return true;
    if (ran->exit_code == 1) return false;
    return make_error("git check-ignore failed: " + first_line(ran->err));
}

Result<std::string> git_exclude(const std::string& top, const std::string& rel) {
    auto ran = git(top, {"rev-parse", "--git-path", "info/exclude"});
    if (!ran) return ran.error();
    if (!ran->ok()) return make_error("git cannot name its info/exclude: " + first_line(ran->err));
    std::string path = first_line(ran->out);
    if (path.empty() || path[0] != '/') path = top + "/" + path;
    path = lexically_normal(path);
    auto made = make_dirs(path.substr(0, path.rfind('/')), 0755);
    if (!made) return made.error();
    auto old = read_file_if_exists(path);
    if (!old) return old.error();
    std::string content = old->value_or("");
    if (!content.empty() && content.back() != '\n') content.push_back('\n');
    content += "# hostbridge spool (added by hostbridge install)\n/" + rel + "/\n";
    auto wrote = write_file_atomic(path, content, 0644);
    if (!wrote) return wrote.error();
    return path;
}

Result<bool> git_tracks_under(const std::string& top, const std::string& rel) {
    auto ran = git(top, {"ls-files", "--", rel});
    if (!ran) return ran.error();
    return !ran->out.empty();
}

}  // namespace hb::cli
