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
        } else if (said->find("Docker Compose") != std::string::npos ||
                   said->find("docker-compose") != std::string::npos) {
            read = {false, "from `version`"};
        }
    }
    return read;
}

}  // namespace hb::exec
