#include "engines/podman_compose/rows.hpp"

#include "executor/run_tree.hpp"
#include "ipc/inspect_wire.hpp"

namespace hb::exec {
namespace {

// `$COMPOSE -p $PROJECT -f FILE`, where the compose command and file of the
// project are their verified copies in the run tree (executor/run_tree.hpp),
// never the checkout's files.
Argv compose_prefix(const Config& config) {
    Argv argv = config.backend.argv;
    if (const std::string copy = in_run_tree(config, argv.front()); !copy.empty()) {
        argv.front() = copy;
    }
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
    return argv;
}

Plan with(const Config& config, std::initializer_list<std::string> words) {
    Argv argv = compose_prefix(config);
    argv.insert(argv.end(), words);
    return Plan{Step{std::move(argv), std::nullopt}};
}

// Before a compose command that may start a container: pin every bind
// source the rendered file names, inside the engine's namespaces, where runc
// resolves them (engines/podman/bind_pin.hpp). The other rows start nothing.
Plan pinned(const Config& config, Plan plan) {
    if (!config.pins || config.pins->sources.empty()) return plan;
    Argv pin = {config.pins->engine, "unshare",     config.pins->binary, "pin",
                config.project_dir,  config.run_dir};
    pin.insert(pin.end(), config.pins->sources.begin(), config.pins->sources.end());
    plan.insert(plan.begin(), Step{std::move(pin), std::nullopt});
    return plan;
}

// S's containers as the engine finds them: by the install's labels (podman
// ANDs them), never by a name, which a `container_name:` another checkout's
// run shares; S is bridge.json's name for the checked index.
void service_filter(Argv& argv, const std::string& project, const std::string& service) {
    for (const std::string& label :
         {"com.docker.compose.project=" + project, std::string(kInstallLabel) + "=" + project,
          "com.docker.compose.service=" + service}) {
        argv.insert(argv.end(), {"--filter", "label=" + label});
    }
}

// S's container replaced by one made from the rendered file as it is now.
// podman-compose 1.0.3 ignores --no-deps and `up --force-recreate S` takes
// down S's depends_on too: remove S's container alone (service_filter),
// then create it again. (docker compose v2 recreates nothing on `up`:
// ComposeDialect.)
Plan replace(const Config& config, const std::string& engine, const std::string& project,
             const std::string& service) {
    Argv rm = {engine, "rm", "--force", "--ignore"};
    service_filter(rm, project, service);
    Argv up = compose_prefix(config);
    up.insert(up.end(), {"up", "-d", "--no-build", service});
    return Plan{Step{std::move(rm), {}}, Step{std::move(up), std::nullopt}};
}

// rebuild S: build S's image from the host-owned snapshot of its context,
// then replace only S's container with one from that image
// (docs/BUILDS.md). The compose CLI never builds: podman-compose 1.0.3
// would read the checkout, and exits 0 after a failed build.
Plan rebuild(const Config& config, std::size_t index, const ServiceBuild& build,
             const ComposeDialect& dialect) {
    const BuildSettings& settings = *config.build;
    const std::string snapshot = dialect.snapshot_dir(config, build.service);
    Argv image = {settings.engine, "build", "--network=" + settings.network};
    // --pull=never: never a base image the agent names from a registry,
    // whose ONBUILD triggers buildah would run unscreened (docs/BUILDS.md).
    // docker's build has none: the registry lets the screen allow only
    // images its daemon holds (docs/DOCKER.md).
    if (dialect.podman_compose) image.push_back("--pull=never");
    image.insert(image.end(), {"--iidfile", dialect.image_id_file(config, build.service), "-t",
                               build.image, "-f", snapshot + "/" + build.containerfile});
    if (!build.target.empty()) image.insert(image.end(), {"--target", build.target});
    for (const std::string& arg : build.args) image.insert(image.end(), {"--build-arg", arg});
    image.push_back(snapshot);

    Plan plan = pinned(config, Plan{Step{std::move(image), index}});
    // docker compose v2 honours --no-deps: its up recreates S alone.
    if (!dialect.podman_compose) {
        plan.push_back(with(
            config, {"up", "-d", "--no-build", "--no-deps", "--force-recreate", build.service})[0]);
        return plan;
    }
    Plan replaced = replace(config, settings.engine, settings.project, build.service);
    plan.insert(plan.end(), replaced.begin(), replaced.end());
    return plan;
}

}  // namespace

Plan compose_recreate(const Config& config, std::size_t index) {
    const SettleSettings& settle = *config.settle;
    return pinned(config, replace(config, settle.engine, settle.project, config.services[index]));
}

ArgvOutcome compose_rows(Verb verb, std::optional<std::size_t> arg, const Config& config,
                         const ComposeDialect& dialect) {
    // Only valid after the table's check: the verbs that take a service.
    auto service = [&]() -> const std::string& { return config.services[*arg]; };
    // No default: a new Verb must be given its argv here or the build fails.
    switch (verb) {
        case Verb::Ping:
        case Verb::JoinNetwork:
            break;  // the table's own (engines/argv_table.cpp)
        case Verb::Status:
        case Verb::Health:
            // podman-compose's ps lists by its project label alone, which a
            // hand run with the same -p sets too. Where the engine is read,
            // the look alone answers (engines/podman/settle.hpp: the
            // install's labelled containers, their JSON read in the
            // sandbox), and no list is printed before it.
            if (!dialect.engine_lists) return with(config, {"ps"});
            return Plan{};
        case Verb::Logs:
            // Read from S's own container, never by its name, which another
            // checkout's `container_name:` may share (follow_log.hpp).
            if (dialect.engine_lists) return Plan{};
            // podman-compose's logs has no --no-color (it never colours).
            if (dialect.podman_compose) return with(config, {"logs", "--tail", "200", service()});
            return with(config, {"logs", "--no-color", "--tail", "200", service()});
        case Verb::Up:
            // Never a build from the checkout: a missing image is an error
            // until `rebuild` makes it from a snapshot.
            return pinned(config, with(config, {"up", "-d", "--no-build"}));
        case Verb::Down:
            // docker: its one try hung past the client's timeout (docs/DOCKER.md).
            if (!dialect.podman_compose) return Denied{ReasonCode::UntestedCompose};
            return with(config, {"stop"});
        case Verb::Restart: {
            // docker's `restart` takes no --filter: docker compose restarts S.
            if (!dialect.engine_lists || !dialect.podman_compose)
                return pinned(config, with(config, {"restart", service()}));
            // The engine restarts S's containers itself: podman-compose 1.0.3
            // only runs this after its own start-up (0.16-0.2 s, issue 48)
            // and ignores its exit status. The settle step then checks them.
            Argv restart = {config.settle->engine, "restart"};
            service_filter(restart, config.settle->project, service());
            return pinned(config, Plan{Step{std::move(restart), std::nullopt}});
        }
        case Verb::Rebuild: {
            const ServiceBuild* build = find_build(config.build, service());
            if (build == nullptr) return Denied{ReasonCode::BuildNotConfigured};
            return rebuild(config, *arg, *build, dialect);
        }
        case Verb::Init:
            return Denied{ReasonCode::NotSupportedByCompose};
    }
    return Denied{ReasonCode::UnknownVerb};
}

}  // namespace hb::exec
