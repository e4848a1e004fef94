#include "admin/util/resolve_binary.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"

namespace hb::admin {
namespace {

bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
}

// Only names that are inert in every shell reach the shell's command line.
bool is_plain_command_name(std::string_view name) {
    if (name.empty() || name.size() > 128 || name[0] == '-') return false;
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '+' || c == '-';
        if (!ok) return false;
    }
    return true;
}

Result<std::string> resolve_path(const std::string& given) {
    std::string abs = absolute_path(given);
    if (!is_executable_file(abs)) {
        return make_error(given + " is not an executable file");
    }
    auto slash = abs.rfind('/');
    auto dir = canonical_path(slash == 0 ? "/" : abs.substr(0, slash));
    if (!dir) return dir.error();
    return (*dir == "/" ? "" : *dir) + abs.substr(slash);
}

std::string trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) {
        s.remove_prefix(1);
    }
    while (!s.empty() &&
           (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return std::string(s);
}

// "alias ll='ls -l'" (bash), "ll='ls -l'" (dash), "ll=ls" (zsh): the value,
// with the shell's single quoting undone.
std::optional<std::string> parse_alias_line(std::string_view text, std::string_view name) {
    std::string line = trim(text);
    if (line.rfind("alias ", 0) == 0) line.erase(0, 6);
    if (line.compare(0, name.size(), name) != 0 || line.size() <= name.size() ||
        line[name.size()] != '=') {
        return std::nullopt;
    }
    std::string_view raw = std::string_view(line).substr(name.size() + 1);
    std::string value;
    bool quoted = false;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        char c = raw[i];
        if (c == '\'') {
            quoted = !quoted;
        } else if (!quoted && c == '\\' && i + 1 < raw.size()) {
            value.push_back(raw[++i]);
        } else {
            value.push_back(c);
        }
    }
    return value;
}

std::string between(const std::string& text, std::string_view from, std::string_view to) {
    auto a = text.find(from);
    if (a == std::string::npos) return {};
    a += from.size();
    auto b = text.find(to, a);
    return text.substr(a, b == std::string::npos ? std::string::npos : b - a);
}

Result<std::string> resolve_with_shell(std::string_view name, const ResolveEnv& env) {
    const std::string n(name);
    const std::string not_found = "cannot resolve " + n + ": it is not a path, not on PATH, and " +
                                  env.shell + " -i does not know it as an alias";
    if (env.shell.empty() || env.shell[0] != '/') return make_error(not_found);
    // Markers separate our answers from whatever the rc files print.
    const std::string script = "printf '\\036HB-ALIAS\\n'; alias " + n +
                               "; printf '\\036HB-TYPE\\n'; type " + n +
                               "; printf '\\036HB-END\\n'";
    RunOptions options;
    options.timeout = std::chrono::seconds(10);
    options.err = Stream::Null;
    auto ran = run_process({env.shell, "-ic", script}, options);
    if (!ran) return make_error(not_found);
    if (ran->timed_out) {
        return make_error("cannot resolve " + n + ": " + env.shell +
                          " -i did not answer within 10 seconds");
    }
    std::string alias_part = between(ran->out, "\036HB-ALIAS\n", "\036HB-TYPE\n");
    std::string type_part = between(ran->out, "\036HB-TYPE\n", "\036HB-END\n");

    if (auto value = parse_alias_line(alias_part, name)) {
        std::string target = trim(*value);
        if (target.empty() || target.find_first_of(" \t\n;|&$`\"'<>()") != std::string::npos) {
            return make_error(n + " is an alias for '" + target + "' in " + env.shell +
                              ", which is not a single binary; pass the binary's path instead");
        }
        if (target.rfind("~/", 0) == 0) target = env.home + target.substr(1);
        if (target.find('/') != std::string::npos) {
            auto resolved = resolve_path(target);
            if (!resolved) {
                return make_error(n + " is an alias for " + target + ", which is not an " +
                                  "executable file");
            }
            return resolved;
        }
        if (auto found = find_on_path(target, env.path_var)) return resolve_path(*found);
        return make_error(n + " is an alias for " + target + ", which is not on PATH");
    }
    if (type_part.find("function") != std::string::npos) {
        return make_error(n + " is a shell function in " + env.shell +
                          ", which has no path; pass the path of the binary it runs");
    }
    if (type_part.find("builtin") != std::string::npos ||
        type_part.find("reserved") != std::string::npos ||
        type_part.find("keyword") != std::string::npos) {
        return make_error(n + " is a shell builtin in " + env.shell + ", not a binary");
    }
    return make_error(not_found);
}

}  // namespace

ResolveEnv resolve_env_from_process() {
    ResolveEnv env;
    const char* path = std::getenv("PATH");
    env.path_var = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
    const char* shell = std::getenv("SHELL");
    if (shell != nullptr && shell[0] == '/') {
        env.shell = shell;
    } else if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr && pw->pw_shell) {
        env.shell = pw->pw_shell;
    }
    if (env.shell.empty()) env.shell = "/bin/sh";
    const char* home = std::getenv("HOME");
    env.home = home != nullptr ? home : "";
    return env;
}

std::optional<std::string> find_on_path(std::string_view name, std::string_view path_var) {
    if (name.empty() || name.find('/') != std::string_view::npos) return std::nullopt;
    std::size_t pos = 0;
    while (pos <= path_var.size()) {
        std::size_t colon = path_var.find(':', pos);
        std::string_view dir = path_var.substr(
            pos, colon == std::string_view::npos ? std::string_view::npos : colon - pos);
        // An empty or relative PATH entry means the cwd: never for a baked path.
        if (!dir.empty() && dir[0] == '/') {
            std::string candidate = std::string(dir) + "/" + std::string(name);
            if (is_executable_file(candidate)) return lexically_normal(candidate);
        }
        if (colon == std::string_view::npos) break;
        pos = colon + 1;
    }
    return std::nullopt;
}

Result<std::string> resolve_binary(std::string_view name_or_path, const ResolveEnv& env) {
    std::string given(name_or_path);
    if (given.empty()) return make_error("an empty command name cannot be resolved");
    if (given.find('/') != std::string::npos) return resolve_path(given);
    if (!is_plain_command_name(given)) {
        return make_error("cannot resolve '" + given + "': not a plain command name");
    }
    if (auto found = find_on_path(given, env.path_var)) return resolve_path(*found);
    return resolve_with_shell(given, env);
}

}  // namespace hb::admin
