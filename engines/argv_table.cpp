#include "engines/argv_table.hpp"

#include <algorithm>

#include "engines/podman/log_lines.hpp"
#include "executor/run_tree.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/log_cursor.hpp"
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
        // One project name, whatever directory the file is read from
        // (podman-compose 1.0.3 tags images <project>_<service>).
        if (config.build || config.settle) {
            argv.push_back("-p");
            argv.push_back(config.build ? config.build->project : config.settle->project);
        }
        argv.push_back("-f");
        // The rendered copy in the run tree; a file outside the checkout
        // (the placeholders of docs/ARGV-TABLE.md) stays.
        const std::string copy = in_run_tree(config, config.backend.file);
        argv.push_back(copy.empty() ? config.backend.file : copy);
    }
    return argv;
}

Plan with(const Config& config, std::initializer_list<std::string> words) {
    Argv argv = backend_prefix(config);
    argv.insert(argv.end(), words);
    return Plan{Step{std::move(argv), std::nullopt}};
}

// Before a compose command that may start a container: pin every bind
// source the rendered file names, inside the engine's namespaces, where runc
// resolves them (engines/podman/bind_pin.hpp). The other rows start nothing.
Plan pinned(const Config& config, Plan plan) {
    if (!config.pins || config.pins->sources.empty()) return plan;
    Argv pin = {config.pins->engine, "unshare",     config.pins->executor, "pin",
                config.project_dir,  config.run_dir};
    pin.insert(pin.end(), config.pins->sources.begin(), config.pins->sources.end());
    plan.insert(plan.begin(), Step{std::move(pin), std::nullopt});
    return plan;
}

// rebuild S with the compose backend: build S's image from the host-owned
// snapshot of its context, then replace only S's container with one from
// that image (docs/BUILDS.md). The compose CLI never builds: podman-compose
// 1.0.3 would read the checkout, and exits 0 after a failed build.
Plan compose_rebuild(const Config& config, std::size_t index, const ServiceBuild& build) {
    const BuildSettings& settings = *config.build;
    const std::string snapshot = snapshot_dir(config, build.service);
    Argv image = {settings.engine,
                  "build",
                  "--network=" + settings.network,
                  "--iidfile",
                  image_id_file(config, build.service),
                  "-t",
                  build.image,
                  "-f",
                  snapshot + "/" + build.containerfile};
    // podman: never a base image the agent names from a registry, whose
    // ONBUILD triggers buildah would run unscreened (docs/BUILDS.md). docker
    // build has no such setting (the trigger attack was measured on buildah).
    if (config.backend.flavour == ComposeFlavour::PodmanCompose) {
        image.insert(image.begin() + 3, "--pull=never");
    }
    if (!build.target.empty()) image.insert(image.end(), {"--target", build.target});
    for (const std::string& arg : build.args) image.insert(image.end(), {"--build-arg", arg});
    image.push_back(snapshot);

    Plan plan = pinned(config, Plan{Step{std::move(image), index}});
    Argv up = backend_prefix(config);
    if (config.backend.flavour == ComposeFlavour::PodmanCompose) {
        // 1.0.3 ignores --no-deps and `up --force-recreate S` takes down S's
        // depends_on too: remove S's container alone, then create it again.
        // Found by its labels (podman ANDs them), never by its name, which
        // a `container_name:` another checkout's run shares.
        Argv rm = {settings.engine, "rm", "--force", "--ignore"};
        for (const std::string& label : {"com.docker.compose.project=" + settings.project,
                                         std::string(kInstallLabel) + "=" + settings.project,
                                         "com.docker.compose.service=" + build.service}) {
            rm.insert(rm.end(), {"--filter", "label=" + label});
        }
        plan.push_back(Step{std::move(rm), {}});
        up.insert(up.end(), {"up", "-d", "--no-build", build.service});
    } else {
        up.insert(up.end(),
                  {"up", "-d", "--no-deps", "--force-recreate", "--no-build", build.service});
    }
    plan.push_back(Step{std::move(up), std::nullopt});
    return plan;
}

// podman's: docker runs its healthchecks itself. A stack's settle engine is
// always podman (common/config.cpp).
bool podman_settles(const Config& config) {
    return config.settle && (config.backend.kind == BackendKind::Stack ||
                             config.backend.flavour == ComposeFlavour::PodmanCompose);
}

// `--filter` words that list only the project's containers, and for a
// compose install only those its own rendered file made.
Argv project_filters(const Config& config) {
    const std::string& project = config.settle->project;
    Argv words = {"--filter", "label=com.docker.compose.project=" + project};
    if (install_labelled(config)) {
        words.insert(words.end(),
                     {"--filter", "label=" + std::string(kInstallLabel) + "=" + project});
    }
    return words;
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
        case Verb::Health:
            if (!compose) return with(config, {verb == Verb::Status ? "status" : "health"});
            // podman-compose's ps lists by its project label alone, which a
            // hand run with the same -p sets too: the engine's list of the
            // install's own containers instead.
            if (podman_settles(config)) {
                Argv ps = {config.settle->engine, "ps", "-a"};
                const Argv filters = project_filters(config);
                ps.insert(ps.end(), filters.begin(), filters.end());
                return Plan{Step{std::move(ps), std::nullopt}};
            }
            return with(config, {"ps"});
        case Verb::Logs:
            if (!compose) return with(config, {"logs", service()});
            // Read from S's own container, never by its name, which another
            // checkout's `container_name:` may share (follow_log.hpp).
            if (logs_by_container(config)) return Plan{};
            // podman-compose's logs has no --no-color (it never colours).
            if (config.backend.flavour == ComposeFlavour::PodmanCompose)
                return with(config, {"logs", "--tail", "200", service()});
            return with(config, {"logs", "--no-color", "--tail", "200", service()});
        case Verb::Up:
            // Never a build from the checkout: a missing image is an error
            // until `rebuild` makes it from a snapshot.
            return compose ? pinned(config, with(config, {"up", "-d", "--no-build"}))
                           : with(config, {"start"});
        case Verb::Down:  // `stop` in both backends
            return with(config, {"stop"});
        case Verb::Restart:
            return pinned(config, with(config, {"restart", service()}));
        case Verb::Rebuild: {
            if (!compose) {
                // With a recorded context the stack builds from the snapshot
                // the executor hands it (HOSTBRIDGE_BUILD_CONTEXT); without
                // one it reads the checkout itself, which the seeded policy
                // holds for a person (docs/BUILDS.md).
                Plan plan = with(config, {"build", service()});
                if (find_build(config.build, service()) != nullptr) plan.front().snapshot_of = *arg;
                return plan;
            }
            const ServiceBuild* build = find_build(config.build, service());
            if (build == nullptr) return Denied{ReasonCode::BuildNotConfigured};
            return compose_rebuild(config, *arg, *build);
        }
        case Verb::Init:
            if (compose) return Denied{ReasonCode::NotSupportedByCompose};
            return with(config, {"init"});
        case Verb::JoinNetwork: {
            if (!config.join_network) return Denied{ReasonCode::JoinNetworkNotConfigured};
            const JoinNetwork& jn = *config.join_network;
            return Plan{
                Step{{jn.engine, "network", "connect", jn.network, jn.agent_container}, {}}};
        }
    }
    // A Verb value outside the enum (cast from a bad integer) runs nothing.
    return Denied{ReasonCode::UnknownVerb};
}

bool settles(Verb verb, const Config& config) {
    return config.settle && (verb == Verb::Up || verb == Verb::Restart || verb == Verb::Rebuild);
}

bool looks(Verb verb, const Config& config) {
    return config.settle && (verb == Verb::Status || verb == Verb::Health);
}

bool install_labelled(const Config& config) {
    return config.backend.kind == BackendKind::Compose;
}

Posture posture(const Config& config) {
    return Posture{install_labelled(config), podman_settles(config)};
}

bool accepts_log_window(const Config& config) {
    return podman_settles(config);
}

bool logs_by_container(const Config& config) {
    return config.backend.kind == BackendKind::Compose && accepts_log_window(config);
}

Config symbolic_config(Config config) {
    const bool stack = config.backend.kind == BackendKind::Stack;
    config.backend.argv = {stack ? "$STACK" : "$COMPOSE"};
    config.backend.file = stack ? "" : "$COMPOSE_FILE";
    config.run_dir = "$RUN_DIR";
    if (config.pins) {
        config.project_dir = "$PROJECT_DIR";
        config.pins->engine = "$ENGINE";
        config.pins->executor = "$EXECUTOR";
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
    if (settles(verb, config)) out += ", then the settle step (docs/ARGV-TABLE.md, \"Settling\")";
    if (looks(verb, config))
        out += ", then one look at the services (docs/ARGV-TABLE.md, \"Settling\")";
    return out;
}

}  // namespace hb::exec
