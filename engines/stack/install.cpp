#include "engines/stack/install.hpp"

#include <sys/stat.h>

#include "ipc/path_component.hpp"

namespace hb::exec {
namespace {

bool path_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '/';
}

}  // namespace

std::vector<std::string> unpinned_files_named(const std::string& project_dir,
                                              std::string_view script,
                                              const std::set<std::string>& pinned) {
    std::set<std::string> found;
    std::size_t i = 0;
    while (i < script.size()) {
        if (!path_char(script[i])) {
            ++i;
            continue;
        }
        const std::size_t start = i;
        while (i < script.size() && path_char(script[i])) ++i;
        std::string_view token = script.substr(start, i - start);
        std::vector<std::string_view> candidates;
        if (token.starts_with(project_dir + "/")) {
            candidates.push_back(token.substr(project_dir.size() + 1));
        } else if (token.front() != '/') {
            while (token.starts_with("./")) token.remove_prefix(2);
            candidates.push_back(token);
            // `$here/name` and `${here}/name`: the variable's name is the
            // first component of the token.
            if (const auto slash = token.find('/'); slash != std::string_view::npos)
                candidates.push_back(token.substr(slash + 1));
        }
        for (std::string_view candidate : candidates) {
            if (!is_plain_relative(candidate)) continue;
            const std::string rel(candidate);
            if (pinned.contains(rel) || found.contains(rel)) continue;
            struct stat st {};
            const std::string full = project_dir + "/" + rel;
            if (::lstat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode)) found.insert(rel);
        }
    }
    return {found.begin(), found.end()};
}

std::string_view stack_agent_words(Verb verb, bool verified) {
    switch (verb) {
        case Verb::Status:
            return verified ? "the project's own status text, then each service's containers: "
                              "state, health, restarts, image, start time (`services`)"
                            : "shows the state of the services";
        case Verb::Health:
            return verified ? "runs the project's health check, then each container's "
                              "healthcheck once; `done` only when both pass: every service runs, "
                              "healthy where it has a check; `failed` names the others, with "
                              "their last log lines"
                            : "runs the project's health check";
        case Verb::Logs:
            return "the service's recent logs";
        case Verb::Up:
            return "starts the application";
        case Verb::Restart:
            return "restarts that service";
        case Verb::Rebuild:
            return "rebuilds that service's image";
        case Verb::Init:
            return "initialises the application (this resets seed data)";
        default:
            return "";
    }
}

}  // namespace hb::exec
