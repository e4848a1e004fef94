#include "engines/argv_table.hpp"

#include <algorithm>

#include "engines/podman_compose/rows.hpp"
#include "engines/stack/rows.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/log_cursor.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {
namespace {

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

ComposeDialect compose_dialect(const Config& config) {
    return ComposeDialect{podman_compose(config.backend), logs_by_container(config), snapshot_dir,
                          image_id_file};
}

}  // namespace

ArgvOutcome argv_for(Verb verb, std::optional<std::size_t> arg, const Config& config) {
    if (auto denied = check_arg(verb, arg, config)) return *denied;
    if (verb == Verb::Ping) return NoCommand{};
    if (verb == Verb::JoinNetwork) {
        // No test runs it on docker (docs/DOCKER.md).
        if (docker_compose(config.backend)) return Denied{ReasonCode::UntestedCompose};
        if (!config.join_network) return Denied{ReasonCode::JoinNetworkNotConfigured};
        const JoinNetwork& jn = *config.join_network;
        return Plan{Step{{jn.engine, "network", "connect", jn.network, jn.agent_container}, {}}};
    }
    // The backend's own rows, each in its room (engines/stack/,
    // engines/podman_compose/), each a switch over every Verb.
    if (stack_backend(config.backend.kind)) return stack_rows(verb, arg, config);
    return compose_rows(verb, arg, config, compose_dialect(config));
}

bool recreates(const Config& config) {
    return config.settle && compose_backend(config.backend.kind) &&
           podman_compose(config.backend) && !config.settle->definitions.empty();
}

std::optional<Plan> recreate_rows(const Config& config, std::size_t index) {
    if (!recreates(config) || index >= config.services.size()) return std::nullopt;
    return compose_recreate(config, index);
}

bool settles(Verb verb, const Config& config) {
    return config.settle && (verb == Verb::Up || verb == Verb::Restart || verb == Verb::Rebuild);
}

bool looks(Verb verb, const Config& config) {
    return config.settle && (verb == Verb::Status || verb == Verb::Health);
}

// podman runs no healthcheck by itself here (engines/podman/rows.hpp,
// Posture): docker's daemon runs its own. A stack's settle engine is
// always podman (common/config.cpp).
Posture posture(const Config& config) {
    return Posture{compose_backend(config.backend.kind),
                   config.settle && !docker_compose(config.backend)};
}

// Where the engine is asked (settle): podman's, or docker's through its
// engine user (docs/DOCKER.md), whose `logs --timestamps --since` the
// sandbox reads as podman's.
bool accepts_log_window(const Config& config) {
    return config.settle && (!docker_compose(config.backend) || config.engine);
}

bool logs_by_container(const Config& config) {
    return compose_backend(config.backend.kind) && accepts_log_window(config);
}

Config symbolic_config(Config config) {
    const bool stack = stack_backend(config.backend.kind);
    config.backend.argv = {stack ? "$STACK" : "$COMPOSE"};
    config.backend.file = stack ? "" : "$COMPOSE_FILE";
    config.run_dir = "$RUN_DIR";
    if (config.pins) {
        config.project_dir = "$PROJECT_DIR";
        config.pins->engine = "$ENGINE";
        config.pins->binary = "$PIN";
    }
    if (config.build) {
        config.build->engine = "$ENGINE";
        if (!config.build->buildah.empty()) config.build->buildah = "$BUILDAH";
        config.build->project = "$PROJECT";
    }
    if (config.settle) {
        config.settle->engine = "$ENGINE";
        config.settle->project = "$PROJECT";
    }
    if (config.join_network)
        config.join_network = JoinNetwork{"$ENGINE", "$NETWORK", "$AGENT_CONTAINER"};
    return config;
}

namespace {

// An argv's words joined by spaces, as a dry run shows it.
std::string joined(const Argv& argv) {
    std::string line;
    for (const std::string& word : argv) line += (line.empty() ? "" : " ") + word;
    return line;
}

}  // namespace

std::string symbolic_command(Verb verb, std::optional<std::size_t> arg, const Config& config,
                             const LogWindow& window) {
    if (verb == Verb::Logs &&
        (window.given() ? accepts_log_window(config) : logs_by_container(config)) && arg &&
        *arg < config.services.size()) {
        // `logs S` alone there is its last kPlainLogLines lines.
        const LogWindow shown = window.given() ? window : LogWindow{kPlainLogLines, kNoTime, 0};
        // The id is the engine's, found when it runs: shown as a name.
        Argv row = *window_log(symbolic_config(config), std::string(64, '0'), shown);
        row.back() = "$CONTAINER";
        std::string line = joined(row);
        // A tail is chosen from the `--since` view where its lines begin.
        if (shown.since_ns == kNoTime)
            line += ", then $ENGINE logs --timestamps --since $OLDEST $CONTAINER";
        std::string asked;
        if (shown.lines != 0) asked = "lines " + std::to_string(shown.lines);
        if (shown.since_ns != kNoTime) {
            asked += (asked.empty() ? "since " : ", since ") +
                     format_cursor(LogCursor{shown.since_ns, shown.since_seen});
        }
        return line + " ($CONTAINER: " + config.services[*arg] +
               "'s container, found by the look's rows; docs/ARGV-TABLE.md, \"Settling\"; " +
               asked + ")";
    }
    const ArgvOutcome outcome = argv_for(verb, arg, symbolic_config(config));
    if (const auto* denied = std::get_if<Denied>(&outcome)) {
        return std::string(reason_text(denied->reason));
    }
    if (std::holds_alternative<NoCommand>(outcome)) return "nothing (answered by the executor)";
    std::string out;
    for (const Step& step : std::get<Plan>(outcome)) {
        if (!out.empty()) out += " && ";
        out += joined(step.argv);
    }
    // The engine queries that follow (engines/podman/settle.hpp), in words.
    if (verb == Verb::Up && recreates(config))
        out +=
            ", then each service whose definition changed recreated (docs/ARGV-TABLE.md, "
            "\"Recreating\")";
    if (settles(verb, config)) out += ", then the settle step (docs/ARGV-TABLE.md, \"Settling\")";
    if (looks(verb, config)) {
        out += out.empty() ? "one look at the services" : ", then one look at the services";
        out += " (docs/ARGV-TABLE.md, \"Settling\")";
    }
    return out;
}

}  // namespace hb::exec
