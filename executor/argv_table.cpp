#include "executor/argv_table.hpp"

#include <algorithm>

#include "executor/run_tree.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {
namespace {

// The backend's fixed prefix: `$STACK` or `$COMPOSE -f FILE`, where a stack
// script or compose file of the project is its verified copy in the run tree
// (executor/run_tree.hpp), never the checkout's file.
Argv backend_prefix(const Config& config) {
    Argv argv = config.backend.argv;
    if (const std::string copy = in_run_tree(config, argv.front()); !copy.empty()) {
        argv.front() = copy;
    }
    if (config.backend.kind == BackendKind::Compose) {
        argv.push_back("-f");
        // The rendered copy in the run tree; a file outside the checkout
        // (the placeholders of docs/ARGV-TABLE.md) stays.
        const std::string copy = in_run_tree(config, config.backend.file);
        argv.push_back(copy.empty() ? config.backend.file : copy);
    }
    return argv;
}

Argv with(const Config& config, std::initializer_list<std::string> words) {
    Argv argv = backend_prefix(config);
    argv.insert(argv.end(), words);
    return argv;
}

// The argument check, independent of the parser's.
std::optional<Denied> check_arg(Verb verb, std::optional<std::size_t> arg, const Config& config) {
    const ArgKind kind = verb_info(verb).arg;
    if (kind == ArgKind::None) {
        if (arg) return Denied{ReasonCode::ArgForbidden};
        return std::nullopt;
    }
    if (!arg) return Denied{ReasonCode::ArgRequired};
    if (*arg >= config.services.size()) return Denied{ReasonCode::ArgNotAService};
    if (kind == ArgKind::Buildable && std::find(config.buildable.begin(), config.buildable.end(),
                                                config.services[*arg]) == config.buildable.end()) {
        return Denied{ReasonCode::ArgNotBuildable};
    }
    return std::nullopt;
}

}  // namespace

ArgvOutcome argv_for(Verb verb, std::optional<std::size_t> arg, const Config& config) {
    if (auto denied = check_arg(verb, arg, config)) return *denied;
    // Only valid after check_arg: the verbs that take a service.
    auto service = [&]() -> const std::string& { return config.services[*arg]; };
    const bool compose = config.backend.kind == BackendKind::Compose;

    // No default: a new Verb must be given its argv here or the build fails.
    switch (verb) {
        case Verb::Ping:
            return NoCommand{};
        case Verb::Status:
            return compose ? with(config, {"ps"}) : with(config, {"status"});
        case Verb::Health:
            return compose ? with(config, {"ps"}) : with(config, {"health"});
        case Verb::Logs:
            if (!compose) return with(config, {"logs", service()});
            // podman-compose's logs has no --no-color (it never colours).
            if (config.backend.flavour == ComposeFlavour::PodmanCompose)
                return with(config, {"logs", "--tail", "200", service()});
            return with(config, {"logs", "--no-color", "--tail", "200", service()});
        case Verb::Up:
            return compose ? with(config, {"up", "-d"}) : with(config, {"start"});
        case Verb::Down:  // `stop` in both backends
            return with(config, {"stop"});
        case Verb::Restart:
            return with(config, {"restart", service()});
        case Verb::Rebuild:
            return with(config, {"build", service()});
        case Verb::Init:
            if (compose) return Denied{ReasonCode::NotSupportedByCompose};
            return with(config, {"init"});
        case Verb::JoinNetwork: {
            if (!config.join_network) return Denied{ReasonCode::JoinNetworkNotConfigured};
            const JoinNetwork& jn = *config.join_network;
            return Argv{jn.engine, "network", "connect", jn.network, jn.agent_container};
        }
    }
    // A Verb value outside the enum (cast from a bad integer) runs nothing.
    return Denied{ReasonCode::UnknownVerb};
}

Config symbolic_config(Config config) {
    const bool stack = config.backend.kind == BackendKind::Stack;
    config.backend.argv = {stack ? "$STACK" : "$COMPOSE"};
    config.backend.file = stack ? "" : "$COMPOSE_FILE";
    if (config.join_network)
        config.join_network = JoinNetwork{"$ENGINE", "$NETWORK", "$AGENT_CONTAINER"};
    return config;
}

std::string symbolic_command(Verb verb, std::optional<std::size_t> arg, const Config& config) {
    const ArgvOutcome outcome = argv_for(verb, arg, symbolic_config(config));
    if (const auto* denied = std::get_if<Denied>(&outcome)) {
        return std::string(reason_text(denied->reason));
    }
    if (std::holds_alternative<NoCommand>(outcome)) return "nothing (answered by the executor)";
    std::string out;
    for (const std::string& word : std::get<Argv>(outcome)) out += (out.empty() ? "" : " ") + word;
    return out;
}

}  // namespace hb::exec
