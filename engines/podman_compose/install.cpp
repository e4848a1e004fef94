#include "engines/podman_compose/install.hpp"

namespace hb::exec {

std::optional<std::vector<std::string>> default_compose_command(const InstallHost& host) {
    if (auto docker = host.find("docker")) {
        if (host.run({*docker, "compose", "version"})) {
            return std::vector<std::string>{"docker", "compose"};
        }
    }
    if (host.find("podman-compose")) return std::vector<std::string>{"podman-compose"};
    return std::nullopt;
}

ComposeFlavourRead read_compose_flavour(const std::vector<std::string>& words, bool inside_checkout,
                                        const InstallHost& host) {
    const std::string base = words[0].substr(words[0].rfind('/') + 1);
    ComposeFlavourRead read{base == "podman-compose", "by its name"};
    if (inside_checkout) return read;
    std::vector<std::string> argv = words;
    argv.push_back("version");
    if (const auto said = host.run(argv)) {
        if (said->find("podman-compose") != std::string::npos) {
            read = {true, "from `version`"};
        } else if (said->rfind("docker-compose version 1.", 0) == 0) {
            read = {false, "from `version`", true};
        } else if (said->find("Docker Compose") != std::string::npos ||
                   said->find("docker-compose") != std::string::npos) {
            read = {false, "from `version`"};
        }
    }
    return read;
}

std::string_view compose_agent_words(Verb verb, bool verified) {
    switch (verb) {
        case Verb::Status:
            return verified ? "each service's containers: state, health, restarts, image, start "
                              "time (`services`), then the `ps` text"
                            : "shows the state of the containers";
        case Verb::Health:
            return verified ? "runs each healthcheck once; `done` only when every service runs, "
                              "healthy where it has a check; `failed` names the others, with "
                              "their last log lines"
                            : "shows the state of the containers";
        case Verb::Logs:
            return "the last 200 lines of the service's log";
        case Verb::Up:
            // docs/COMPOSE.md, "Applying an approved edit".
            return verified ? "starts the containers and recreates exactly the services whose "
                              "definition in the approved compose file changed (`services` "
                              "says `recreated (definition changed)` or `unchanged`); builds "
                              "nothing (a missing image waits for `rebuild`)"
                            : "starts the containers; builds nothing (a missing image waits "
                              "for `rebuild`)";
        case Verb::Restart:
            return verified ? "restarts that service's container: bind-mounted code is picked "
                              "up; a new image is not (that is `rebuild`), nor an approved "
                              "edit of its compose entry (that is `up`)"
                            : "restarts that service's container: bind-mounted code is picked "
                              "up, a new image is not (that is `rebuild`)";
        case Verb::Rebuild:
            return "rebuilds that service's image and replaces its container with one of it";
        default:
            return "";
    }
}

}  // namespace hb::exec
