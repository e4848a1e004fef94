#include "engines/argv_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "admin/audit/argv_table_render.hpp"
#include "engines/podman/engine_relay.hpp"
#include "executor/runner.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {

using admin::describe_outcome;
using admin::describe_row;
using admin::display_argv;
using admin::display_plan;
using admin::enumerate_argv_table;

namespace {

Config base_config() {
    Config c;
    c.slug = "demo-app";
    c.project_dir = "/home/u/demo-app";
    c.run_dir = "/home/u/.cache/hostbridge/run/demo-app";
    c.services = {"api", "db", "web", "worker"};
    c.buildable = {"api", "web", "worker"};
    return c;
}

Config stack_config(Argv stack = {"/home/u/demo-app/stack"}) {
    Config c = base_config();
    c.backend = {BackendKind::Stack, std::move(stack), ""};
    return c;
}

Config compose_config(Argv compose = {"/usr/bin/docker", "compose"},
                      ComposeFlavour flavour = ComposeFlavour::Docker) {
    Config c = base_config();
    c.backend = {BackendKind::Compose, std::move(compose), "/home/u/demo-app/compose.yaml",
                 flavour};
    return c;
}

// Where a file of the checkout runs from: the run tree, <run_dir>/<basename>
// (executor/run_tree.hpp).
const std::string kTree = "/home/u/.cache/hostbridge/run/demo-app/demo-app";

std::string tree_path(const std::string& path) {
    const std::string checkout = "/home/u/demo-app/";
    return path.starts_with(checkout) ? kTree + "/" + path.substr(checkout.size()) : path;
}

Config with_join_network(Config c) {
    c.join_network = JoinNetwork{"/usr/bin/podman", "demo-app-network", "agent"};
    return c;
}

Argv join(const Argv& a, const Argv& b) {
    Argv out = a;
    out.insert(out.end(), b.begin(), b.end());
    return out;
}

// A plan of one step that builds nothing.
Plan one(Argv argv) {
    return Plan{Step{std::move(argv), std::nullopt}};
}

// The only argv of a one-step plan.
const Argv& only(const ArgvOutcome& outcome) {
    const Plan& plan = std::get<Plan>(outcome);
    EXPECT_EQ(plan.size(), 1u);
    return plan.front().argv;
}

// Snapshot builds recorded for api and web, not for worker (its build came
// through extends, say): worker's rebuild is refused.
Config with_builds(Config c) {
    const bool podman = c.backend.flavour == ComposeFlavour::PodmanCompose;
    BuildSettings b;
    b.engine = podman ? "/usr/bin/podman" : "/usr/bin/docker";
    if (podman) b.buildah = "/usr/bin/buildah";
    b.project = "demo-app";
    const std::string sep = podman ? "_" : "-";
    b.services = {
        ServiceBuild{"api",
                     "api",
                     "Containerfile",
                     "",
                     {},
                     "demo-app" + sep + "api",
                     "demo-app" + sep + "api" + sep + "1"},
        ServiceBuild{"web",
                     ".",
                     "docker/web.Dockerfile",
                     "prod",
                     {"MODE=prod", "TOKEN"},
                     "registry.example/web:dev",
                     "web-main"},
    };
    c.build = b;
    return c;
}

const std::string kBuilds = "/home/u/.cache/hostbridge/run/demo-app/.hostbridge-build/";

// Rootless podman: the checkout's bind sources are pinned before every row
// that may start a container (engines/podman/bind_pin.hpp).
Config with_pins(Config c) {
    c.checkout_paths = {".", "api", "web/src"};
    c.pins = BindPins{"/usr/bin/podman",
                      "/home/u/.local/lib/hostbridge/demo-app/hostbridge-executor",
                      {".", "web/src"}};
    return c;
}

// Verified outcomes on podman (install writes settle.project = build.project).
Config with_settle(Config c) {
    c.settle = SettleSettings{"/usr/bin/podman", "demo-app", 30};
    return c;
}

// A docker engine user (docs/DOCKER.md): what lets docker's rows run.
Config with_engine(Config c) {
    c.engine = EngineIdentity{"hb-demo-app", "/home/hb-demo-app/engine/docker.sock",
                              "/usr/lib/hostbridge/hostbridge-engine-relay"};
    return c;
}

// The pin step those rows start with, when the config pins anything.
Plan pinned_plan(const Config& c, Plan plan) {
    if (!c.pins || c.pins->sources.empty()) return plan;
    Argv pin = {c.pins->engine, "unshare", c.pins->binary, "pin", c.project_dir, c.run_dir};
    pin.insert(pin.end(), c.pins->sources.begin(), c.pins->sources.end());
    plan.insert(plan.begin(), Step{pin, std::nullopt});
    return plan;
}

// What rebuild S runs with recorded builds (docs/BUILDS.md).
ArgvOutcome expected_rebuild(const Config& c, std::size_t arg, const Argv& cf) {
    const std::string s = c.services[arg];
    const ServiceBuild* b = find_build(c.build, s);
    if (b == nullptr) return Denied{ReasonCode::BuildNotConfigured};
    Argv build = {c.build->engine,
                  "build",
                  "--network=none",
                  "--iidfile",
                  kBuilds + s + ".iid",
                  "-t",
                  b->image,
                  "-f",
                  kBuilds + s + "/" + b->containerfile};
    // docker's build has no --pull=never (docs/DOCKER.md).
    const bool docker = c.backend.flavour == ComposeFlavour::Docker;
    if (!docker) build.insert(build.begin() + 3, "--pull=never");
    if (!b->target.empty()) build = join(build, {"--target", b->target});
    for (const auto& a : b->args) build = join(build, {"--build-arg", a});
    build.push_back(kBuilds + s);
    // docker compose v2 honours --no-deps: its up recreates S alone.
    if (docker) {
        return Plan{
            Step{build, arg},
            Step{join(cf, {"up", "-d", "--no-build", "--no-deps", "--force-recreate", s}), {}}};
    }
    return pinned_plan(c, Plan{Step{build, arg},
                               Step{{c.build->engine, "rm", "--force", "--ignore", "--filter",
                                     "label=com.docker.compose.project=" + c.build->project,
                                     "--filter", "label=io.hostbridge.project=" + c.build->project,
                                     "--filter", "label=com.docker.compose.service=" + s},
                                    {}},
                               Step{join(cf, {"up", "-d", "--no-build", s}), {}}});
}

// docs/PROTOCOL.md's table, restated by hand: what every (verb, arg) must give.
ArgvOutcome expected(Verb verb, std::optional<std::size_t> arg, const Config& c) {
    const ArgKind kind = verb_info(verb).arg;
    if (kind == ArgKind::None && arg) return Denied{ReasonCode::ArgForbidden};
    if (kind != ArgKind::None && !arg) return Denied{ReasonCode::ArgRequired};
    if (arg && *arg >= c.services.size()) return Denied{ReasonCode::ArgNotAService};
    const std::string s = arg ? c.services[*arg] : "";
    if (kind == ArgKind::Buildable && s != "api" && s != "web" && s != "worker") {
        return Denied{ReasonCode::ArgNotBuildable};
    }
    if (verb == Verb::Ping) return NoCommand{};
    const bool docker =
        c.backend.kind == BackendKind::Compose && c.backend.flavour == ComposeFlavour::Docker;
    // docker compose v2 runs no join-network and no down (docs/DOCKER.md).
    if (docker && (verb == Verb::JoinNetwork || verb == Verb::Down))
        return Denied{ReasonCode::UntestedCompose};
    if (verb == Verb::JoinNetwork) {
        if (!c.join_network) return Denied{ReasonCode::JoinNetworkNotConfigured};
        return one(Argv{"/usr/bin/podman", "network", "connect", "demo-app-network", "agent"});
    }
    if (c.backend.kind == BackendKind::Stack) {
        Argv st = c.backend.argv;
        st.front() = tree_path(st.front());
        switch (verb) {
            case Verb::Status:
                return one(join(st, {"status"}));
            case Verb::Health:
                return one(join(st, {"health"}));
            case Verb::Logs:
                return one(join(st, {"logs", s}));
            case Verb::Up:
                return one(join(st, {"start"}));
            case Verb::Down:
                return one(join(st, {"stop"}));
            case Verb::Restart:
                return one(join(st, {"restart", s}));
            case Verb::Rebuild:
                return one(join(st, {"build", s}));
            case Verb::Init:
                return one(join(st, {"init"}));
            default:
                break;
        }
    } else {
        const Argv project = c.build || c.settle ? Argv{"-p", "demo-app"} : Argv{};
        const Argv cf = join(join(c.backend.argv, project), {"-f", kTree + "/compose.yaml"});
        // With settle (podman's, or docker's engine user's), the engine lists and reads the
        // install's own containers (those its rendered file labelled, docs/COMPOSE.md) in the look
        // and the settle rows alone: no compose CLI step.
        const bool own_containers = c.settle && (!docker || c.engine);
        switch (verb) {
            case Verb::Status:
            case Verb::Health:
                return own_containers ? Plan{} : one(join(cf, {"ps"}));
            case Verb::Logs:
                if (own_containers) return Plan{};  // read by container (follow_log.hpp)
                if (c.backend.flavour == ComposeFlavour::PodmanCompose)
                    return one(join(cf, {"logs", "--tail", "200", s}));
                return one(join(cf, {"logs", "--no-color", "--tail", "200", s}));
            case Verb::Up:
                return pinned_plan(c, one(join(cf, {"up", "-d", "--no-build"})));
            case Verb::Down:
                return one(join(cf, {"stop"}));
            case Verb::Restart:
                // The engine's own restart of S's labelled containers
                // (podman's; docker's `restart` takes no --filter).
                if (own_containers && c.backend.flavour == ComposeFlavour::PodmanCompose)
                    return pinned_plan(
                        c, one(Argv{c.settle->engine, "restart", "--filter",
                                    "label=com.docker.compose.project=" + c.settle->project,
                                    "--filter", "label=io.hostbridge.project=" + c.settle->project,
                                    "--filter", "label=com.docker.compose.service=" + s}));
                return pinned_plan(c, one(join(cf, {"restart", s})));
            case Verb::Rebuild:
                return expected_rebuild(c, *arg, cf);
            case Verb::Init:
                return Denied{ReasonCode::NotSupportedByCompose};
            default:
                break;
        }
    }
    ADD_FAILURE() << "no expectation for " << verb_name(verb);
    return NoCommand{};
}

bool same(const ArgvOutcome& a, const ArgvOutcome& b) {
    if (a.index() != b.index()) return false;
    if (const auto* x = std::get_if<Plan>(&a)) return *x == std::get<Plan>(b);
    if (const auto* x = std::get_if<Denied>(&a)) return x->reason == std::get<Denied>(b).reason;
    return true;
}

std::vector<Config> all_configs() {
    return {stack_config(),
            with_join_network(stack_config()),
            stack_config({"/opt/demo/bin/stack", "--project", "demo app"}),
            compose_config(),
            with_join_network(compose_config()),
            compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose),
            with_join_network(
                compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose)),
            with_builds(compose_config()),
            with_builds(compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose)),
            with_pins(with_builds(
                compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose))),
            with_settle(with_pins(with_builds(
                compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose)))),
            with_engine(with_settle(with_join_network(compose_config())))};
}

TEST(ArgvTable, EveryVerbAndArgGivesExactlyTheProtocolArgv) {
    int checked = 0;
    for (const Config& c : all_configs()) {
        for (Verb verb : kAllVerbs) {
            // Every arg the wire can carry: none, each service, and beyond.
            std::vector<std::optional<std::size_t>> args = {std::nullopt};
            for (std::size_t i = 0; i <= c.services.size() + 1; ++i) args.emplace_back(i);
            args.emplace_back(kNoArg - 1);
            for (auto arg : args) {
                const ArgvOutcome got = argv_for(verb, arg, c);
                const ArgvOutcome want = expected(verb, arg, c);
                EXPECT_TRUE(same(got, want))
                    << verb_name(verb) << " arg " << (arg ? std::to_string(*arg) : "none")
                    << ": got " << describe_outcome(got) << ", want " << describe_outcome(want);
                ++checked;
            }
        }
    }
    EXPECT_EQ(checked, 12 * 10 * 8);
}

// rebuild S builds S's image from the snapshot, then replaces S's container
// alone; no compose row ever builds (podman-compose would read the checkout).
TEST(ArgvTable, RebuildBuildsFromTheSnapshotThenReplacesOnlyThatService) {
    const Config c =
        with_builds(compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose));
    const Plan plan = std::get<Plan>(argv_for(Verb::Rebuild, 2, c));  // web
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0].snapshot_of, std::optional<std::size_t>(2));
    EXPECT_EQ(plan[0].argv,
              (Argv{"/usr/bin/podman", "build", "--network=none", "--pull=never", "--iidfile",
                    kBuilds + "web.iid", "-t", "registry.example/web:dev", "-f",
                    kBuilds + "web/docker/web.Dockerfile", "--target", "prod", "--build-arg",
                    "MODE=prod", "--build-arg", "TOKEN", kBuilds + "web"}));
    // web's own container, by its labels: its name (container_name: web-main)
    // another checkout's run may share.
    EXPECT_EQ(plan[1].argv, (Argv{"/usr/bin/podman", "rm", "--force", "--ignore", "--filter",
                                  "label=com.docker.compose.project=demo-app", "--filter",
                                  "label=io.hostbridge.project=demo-app", "--filter",
                                  "label=com.docker.compose.service=web"}));
    EXPECT_EQ(plan[2].argv, (Argv{"/usr/bin/podman-compose", "-p", "demo-app", "-f",
                                  kTree + "/compose.yaml", "up", "-d", "--no-build", "web"}));
    EXPECT_FALSE(plan[1].snapshot_of);
    EXPECT_EQ(std::get<Denied>(argv_for(Verb::Rebuild, 3, c)).reason,
              ReasonCode::BuildNotConfigured);  // worker: no recorded build
    for (Verb verb : kAllVerbs) {
        for (std::size_t i = 0; i < c.services.size(); ++i) {
            const ArgvOutcome out = argv_for(
                verb,
                verb_info(verb).arg == ArgKind::None ? std::nullopt : std::optional<std::size_t>(i),
                c);
            const auto* p = std::get_if<Plan>(&out);
            if (p == nullptr) continue;
            for (const Step& step : *p) {
                if (step.argv.front() != "/usr/bin/podman-compose") continue;
                EXPECT_EQ(std::count(step.argv.begin(), step.argv.end(), "build"), 0)
                    << display_plan(*p);
            }
        }
    }
    Config network = c;
    network.build->network = "private";
    EXPECT_EQ(std::get<Plan>(argv_for(Verb::Rebuild, 0, network))[0].argv[2], "--network=private");
}

// up recreating S: S's container alone removed by its labels, then made
// again from the rendered file, never a build; only where bridge.json
// records the definitions (podman-compose with settle).
TEST(ArgvTable, UpRecreatesOneServiceWithoutABuild) {
    Config c = with_pins(
        with_builds(compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose)));
    c.settle = SettleSettings{"/usr/bin/podman", "demo-app", 30};
    EXPECT_FALSE(recreates(c));  // an install older than the definitions
    EXPECT_FALSE(recreate_rows(c, 1));
    c.settle->definitions = {{"db", std::string(64, 'a')}};
    ASSERT_TRUE(recreates(c));
    const Plan plan = *recreate_rows(c, 1);  // db: not buildable, recreated all the same
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0].argv, (Argv{"/usr/bin/podman", "unshare", c.pins->binary, "pin",
                                  "/home/u/demo-app", c.run_dir, ".", "web/src"}));
    EXPECT_EQ(plan[1].argv, (Argv{"/usr/bin/podman", "rm", "--force", "--ignore", "--filter",
                                  "label=com.docker.compose.project=demo-app", "--filter",
                                  "label=io.hostbridge.project=demo-app", "--filter",
                                  "label=com.docker.compose.service=db"}));
    EXPECT_EQ(plan[2].argv, (Argv{"/usr/bin/podman-compose", "-p", "demo-app", "-f",
                                  kTree + "/compose.yaml", "up", "-d", "--no-build", "db"}));
    for (const Step& step : plan) EXPECT_FALSE(step.snapshot_of);
    EXPECT_FALSE(recreate_rows(c, 4));  // out of range
    EXPECT_NE(symbolic_command(Verb::Up, std::nullopt, c).find("recreated"), std::string::npos);
    Config stack = stack_config();
    stack.settle = SettleSettings{"/usr/bin/podman", "demo-app", 30};
    EXPECT_FALSE(recreates(stack));
}

TEST(ArgvTable, SpotChecksStack) {
    const Config c = stack_config();
    EXPECT_EQ(only(argv_for(Verb::Restart, 0, c)), (Argv{kTree + "/stack", "restart", "api"}));
    EXPECT_EQ(only(argv_for(Verb::Up, std::nullopt, c)), (Argv{kTree + "/stack", "start"}));
    EXPECT_TRUE(std::holds_alternative<NoCommand>(argv_for(Verb::Ping, std::nullopt, c)));
    EXPECT_EQ(std::get<Denied>(argv_for(Verb::JoinNetwork, std::nullopt, c)).reason,
              ReasonCode::JoinNetworkNotConfigured);
    EXPECT_EQ(std::get<Denied>(argv_for(Verb::Rebuild, 1, c)).reason,
              ReasonCode::ArgNotBuildable);  // db has no build
}

TEST(ArgvTable, SpotChecksCompose) {
    const Config c = compose_config();
    EXPECT_EQ(only(argv_for(Verb::Logs, 3, c)),
              (Argv{"/usr/bin/docker", "compose", "-f", kTree + "/compose.yaml", "logs",
                    "--no-color", "--tail", "200", "worker"}));
    EXPECT_EQ(std::get<Denied>(argv_for(Verb::Init, std::nullopt, c)).reason,
              ReasonCode::NotSupportedByCompose);
    // No test runs join-network on docker (docs/DOCKER.md).
    EXPECT_EQ(
        std::get<Denied>(argv_for(Verb::JoinNetwork, std::nullopt, with_join_network(c))).reason,
        ReasonCode::UntestedCompose);
    const Config podman = with_join_network(
        compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose));
    EXPECT_EQ(only(argv_for(Verb::JoinNetwork, std::nullopt, podman)),
              (Argv{"/usr/bin/podman", "network", "connect", "demo-app-network", "agent"}));
}

// podman-compose 1.0.3 refuses `logs --no-color` (usage error, exit 2); the
// docker flavour keeps it, so no colour codes reach the agent.
TEST(ArgvTable, LogsFollowTheComposeFlavour) {
    const Config podman =
        compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose);
    EXPECT_EQ(only(argv_for(Verb::Logs, 0, podman)),
              (Argv{"/usr/bin/podman-compose", "-f", kTree + "/compose.yaml", "logs", "--tail",
                    "200", "api"}));
    // Every other verb is the same in both flavours.
    const Config docker = compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::Docker);
    for (Verb verb : kAllVerbs) {
        for (std::optional<std::size_t> arg :
             {std::optional<std::size_t>{}, std::optional<std::size_t>{0}}) {
            // docker runs no build, no join-network, no down (docs/DOCKER.md).
            if (verb == Verb::Logs || verb == Verb::Rebuild || verb == Verb::JoinNetwork ||
                verb == Verb::Down)
                continue;
            EXPECT_TRUE(same(argv_for(verb, arg, podman), argv_for(verb, arg, docker)))
                << verb_name(verb);
        }
    }
}

// One project name for every compose row: with no build recorded, the
// settle step's (install writes the same name to both, bridge.json checks it).
TEST(ArgvTable, SettleProjectIsThePOfEveryComposeRowWithoutBuilds) {
    Config c = compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose);
    EXPECT_EQ(only(argv_for(Verb::Down, std::nullopt, c)),
              (Argv{"/usr/bin/podman-compose", "-f", kTree + "/compose.yaml", "stop"}));
    c.settle = SettleSettings{"/usr/bin/podman", "proj", 30};
    EXPECT_EQ(
        only(argv_for(Verb::Down, std::nullopt, c)),
        (Argv{"/usr/bin/podman-compose", "-p", "proj", "-f", kTree + "/compose.yaml", "stop"}));
    EXPECT_TRUE(settles(Verb::Restart, c));
    EXPECT_TRUE(settles(Verb::Up, c));
    EXPECT_TRUE(settles(Verb::Rebuild, c));
    EXPECT_FALSE(settles(Verb::Status, c));
    EXPECT_FALSE(settles(Verb::Down, c));
    // status and health look once; nothing else does.
    for (Verb verb : hb::kAllVerbs) {
        EXPECT_EQ(looks(verb, c), verb == Verb::Status || verb == Verb::Health) << verb_name(verb);
        EXPECT_FALSE(looks(verb, c) && settles(verb, c)) << verb_name(verb);
    }
    // No compose CLI step runs before it (the engine is read).
    EXPECT_EQ(symbolic_command(Verb::Health, std::nullopt, c),
              "one look at the services (docs/ARGV-TABLE.md, \"Settling\")");
    EXPECT_NE(symbolic_command(Verb::Restart, 0, c).find(", then the settle step"),
              std::string::npos);
    c.settle.reset();
    EXPECT_FALSE(settles(Verb::Restart, c));
    EXPECT_FALSE(looks(Verb::Status, c));
    EXPECT_EQ(symbolic_command(Verb::Health, std::nullopt, c).find("then"), std::string::npos);
}

// A stack installed with --stack-project (docs/COMPOSE.md, "A stack's
// services"): its script's rows are what they were; the engine's queries
// follow them, podman's healthcheck row included, and logs can follow.
TEST(ArgvTable, AStackWithSettleKeepsItsRowsAndTheEngineQueriesFollow) {
    Config c = stack_config();
    const Config plain = c;
    c.settle = SettleSettings{"/usr/bin/podman", "proj", 30};
    for (const auto& row : enumerate_argv_table(c)) {
        EXPECT_TRUE(same(row.outcome, argv_for(row.verb, row.arg, plain))) << verb_name(row.verb);
        const bool starts =
            row.verb == Verb::Up || row.verb == Verb::Restart || row.verb == Verb::Rebuild;
        EXPECT_EQ(settles(row.verb, c), starts) << verb_name(row.verb);
        EXPECT_FALSE(settles(row.verb, plain) || looks(row.verb, plain)) << verb_name(row.verb);
    }
    EXPECT_TRUE(looks(Verb::Status, c) && looks(Verb::Health, c));
    EXPECT_NE(symbolic_command(Verb::Restart, 0, c).find(", then the settle step"),
              std::string::npos);
    const std::string id(64, 'a');
    EXPECT_EQ(settle_healthcheck(c, posture(c), id),
              (Argv{"/usr/bin/podman", "healthcheck", "run", id}));
    EXPECT_TRUE(accepts_log_window(c));
    EXPECT_FALSE(accepts_log_window(plain));
    // docker compose's daemon runs its own healthchecks; its engine user's
    // logs are followed as podman's (docs/DOCKER.md).
    Config docker = compose_config({"/usr/bin/docker", "compose"}, ComposeFlavour::Docker);
    docker.settle = c.settle;
    EXPECT_FALSE(settle_healthcheck(docker, posture(docker), id).has_value());
    EXPECT_FALSE(accepts_log_window(docker));  // no engine user: every verb is denied
    docker.engine = EngineIdentity{"hb-demo-app", "/home/hb-demo-app/engine/docker.sock",
                                   "/usr/lib/hostbridge/hostbridge-engine-relay"};
    EXPECT_TRUE(accepts_log_window(docker));
}

// A compose install reads only the containers its rendered file labelled
// (io.hostbridge.project, docs/COMPOSE.md, "The project's name"): status
// and health list with it beside the project label (podman ANDs them), and
// `logs S` reads S's container so found, never a container by its name,
// which another checkout's `container_name:` may share. A stack keeps its
// own rows and labels.
TEST(ArgvTable, AComposeInstallListsAndReadsOnlyItsLabelledContainers) {
    Config c = compose_config({"/usr/bin/podman-compose"}, ComposeFlavour::PodmanCompose);
    const Config no_settle = c;
    c.settle = SettleSettings{"/usr/bin/podman", "proj", 30};
    EXPECT_TRUE(posture(c).labelled);
    // The settle list stays by project: the pin check sees a container made
    // by hand with -p, which restart starts by name; the sandboxed reader
    // tells the install's (ContainerInspect.WithTheInstallLabel...).
    EXPECT_EQ(settle_list(c), (Argv{"/usr/bin/podman", "ps", "-a", "-q", "--no-trunc", "--filter",
                                    "label=com.docker.compose.project=proj"}));
    // status and health run no row of their own: the look reads the
    // labelled containers (podman-compose's ps lists by project alone).
    EXPECT_TRUE(std::get<Plan>(argv_for(Verb::Status, std::nullopt, c)).empty());
    EXPECT_TRUE(std::get<Plan>(argv_for(Verb::Health, std::nullopt, c)).empty());
    EXPECT_TRUE(looks(Verb::Status, c) && looks(Verb::Health, c));
    EXPECT_TRUE(logs_by_container(c));
    for (std::size_t i = 0; i < c.services.size(); ++i)
        EXPECT_TRUE(std::get<Plan>(argv_for(Verb::Logs, i, c)).empty());
    EXPECT_EQ(symbolic_command(Verb::Logs, 2, c),
              "$ENGINE logs --timestamps --tail 200 $CONTAINER, then $ENGINE logs --timestamps "
              "--since $OLDEST $CONTAINER ($CONTAINER: web's container, found by the look's rows; "
              "docs/ARGV-TABLE.md, \"Settling\"; lines 200)");
    EXPECT_NE(describe_outcome(argv_for(Verb::Logs, 0, c)).find("only the engine's own rows"),
              std::string::npos);
    // Without settle nothing reads the engine: the compose CLI's rows stay.
    EXPECT_FALSE(logs_by_container(no_settle));
    EXPECT_EQ(only(argv_for(Verb::Logs, 0, no_settle)),
              (Argv{"/usr/bin/podman-compose", "-f", kTree + "/compose.yaml", "logs", "--tail",
                    "200", "api"}));
    // A stack with --stack-project: its own labels, its script's rows.
    Config stack = stack_config();
    stack.settle = SettleSettings{"/usr/bin/podman", "proj", 30};
    EXPECT_FALSE(posture(stack).labelled);
    EXPECT_FALSE(logs_by_container(stack));
    EXPECT_EQ(settle_list(stack), (Argv{"/usr/bin/podman", "ps", "-a", "-q", "--no-trunc",
                                        "--filter", "label=com.docker.compose.project=proj"}));
    EXPECT_EQ(only(argv_for(Verb::Logs, 0, stack)), (Argv{kTree + "/stack", "logs", "api"}));
}

TEST(ArgvTable, EnumerationCoversEveryVerbAndService) {
    const Config c = stack_config();
    const auto rows = enumerate_argv_table(c);
    // 7 verbs without an arg, 3 with one (logs, restart, rebuild) x 4 services.
    ASSERT_EQ(rows.size(), 7u + 3u * 4u);
    for (const auto& row : rows) {
        EXPECT_TRUE(same(row.outcome, argv_for(row.verb, row.arg, c)));
        EXPECT_EQ(row.arg.has_value(), verb_info(row.verb).arg != ArgKind::None);
    }
    EXPECT_EQ(describe_row(rows[0], c), "ping -> (answered by the executor, nothing runs)");
}

TEST(ArgvTable, DescribeRow) {
    const Config c = compose_config();
    EXPECT_EQ(describe_row({Verb::Restart, 2, argv_for(Verb::Restart, 2, c)}, c),
              "restart web -> /usr/bin/docker compose -f " + kTree + "/compose.yaml restart web");
    EXPECT_EQ(describe_row({Verb::Init, std::nullopt, argv_for(Verb::Init, std::nullopt, c)}, c),
              "init -> denied: not supported by the compose backend");
    EXPECT_EQ(display_argv({"/a b/c", "x", "", "it's"}), "'/a b/c' x '' 'it's'");
}

// Any verb byte and any arg index (as a hostile parser could send them):
// every argv that comes out is a row of the enumerated table.
TEST(ArgvTable, NothingOutsideTheTableEverComesOut) {
    std::mt19937 rng(20261129);
    for (const Config& c : all_configs()) {
        std::set<Argv> table;
        for (const auto& row : enumerate_argv_table(c)) {
            if (const auto* plan = std::get_if<Plan>(&row.outcome)) {
                for (const Step& step : *plan) table.insert(step.argv);
            }
        }
        int produced = 0;
        for (int i = 0; i < 20000; ++i) {
            const auto verb = static_cast<Verb>(rng() % 256);
            std::optional<std::size_t> arg;
            if (rng() % 4 != 0) arg = rng() % 3 == 0 ? rng() % 0x10000 : rng() % 8;
            const ArgvOutcome out = argv_for(verb, arg, c);
            if (const auto* plan = std::get_if<Plan>(&out)) {
                ++produced;
                for (const Step& step : *plan) {
                    EXPECT_EQ(table.count(step.argv), 1u) << display_argv(step.argv);
                }
            } else if (std::find(kAllVerbs.begin(), kAllVerbs.end(), verb) == kAllVerbs.end()) {
                EXPECT_TRUE(std::holds_alternative<Denied>(out));  // not a verb: nothing runs
            }
        }
        EXPECT_GT(produced, 0);
    }
}

// --- docs/ARGV-TABLE.md, generated from the code above -------------------

// Placeholders instead of one install's paths: the doc shows the shapes.
Config doc_config(BackendKind kind, ComposeFlavour flavour = ComposeFlavour::Docker) {
    // The same names a dry run answers in (symbolic_config, engines/argv_table.cpp).
    Config c = base_config();
    c.backend.kind = kind;
    c.backend.flavour = kind == BackendKind::Stack ? ComposeFlavour::Docker : flavour;
    c.join_network = JoinNetwork{"/usr/bin/podman", "net", "agent"};
    if (kind == BackendKind::Compose) {
        c = with_builds(std::move(c));
        c.settle = SettleSettings{"/usr/bin/podman", c.build->project, 30};
    }
    if (flavour == ComposeFlavour::PodmanCompose) c = with_pins(std::move(c));
    if (kind == BackendKind::Compose && flavour == ComposeFlavour::Docker)
        c = with_engine(std::move(c));
    c = symbolic_config(std::move(c));
    c.slug = "$SLUG";
    c.systemd = {true, "$SYSTEMD_RUN", ""};
    return c;
}

std::string render_table(const Config& c) {
    std::string md = "| verb | arg | runs |\n|---|---|---|\n";
    for (const auto& row : enumerate_argv_table(c)) {
        md += "| `" + std::string(verb_name(row.verb)) + "` | ";
        md += row.arg ? "`" + c.services[*row.arg] + "`" : "";
        md += " | ";
        const auto* plan = std::get_if<Plan>(&row.outcome);
        if (plan != nullptr && !plan->empty()) {
            std::string steps;
            for (const Step& step : *plan) {
                steps += (steps.empty() ? "`" : "`, then `") + display_argv(step.argv);
            }
            md += steps + "`";
        } else {
            md += describe_outcome(row.outcome);
        }
        md += " |\n";
    }
    return md;
}

std::string render_doc() {
    const Config stack = doc_config(BackendKind::Stack);
    Config no_join = stack;
    no_join.join_network.reset();
    const Argv scoped = scoped_argv({"$COMMAND..."}, Verb::Restart, stack, "$NONCE", true);

    std::string md;
    md += "# The argv table: every command hostbridge can run\n\n";
    md += "<!-- Generated by tests/executor/test_argv_table.cpp from engines/argv_table.cpp;\n";
    md +=
        "     do not edit. Regenerate: HB_REGENERATE_DOCS=1 build/tests/executor/executor_tests\n"
        "     --gtest_filter=ArgvTable.DocsListTheCompleteTable -->\n\n";
    md += "This is the complete list. The executor runs nothing that is not a row of\n";
    md += "this table, and a unit test fails when this file and `argv_for()` in\n";
    md += "`engines/argv_table.cpp` (the backends' rows in `engines/stack/rows.cpp` and\n";
    md += "`engines/podman_compose/rows.cpp`) disagree. Nothing is ever run through a shell:\n";
    md += "each row is an argv handed to `execve`, one word per element.\n\n";
    md += "Words in capitals are fixed at install and recorded in `bridge.json`:\n\n";
    md += "- `$STACK`: `backend.argv` for the stack backend, the project's stack script\n";
    md += "  (absolute path, possibly followed by fixed words). A stack script inside the\n";
    md += "  checkout runs from its approved copy in the run tree, `<run_dir>/<project>/`\n";
    md += "  (docs/DECIDE-AND-RUN.md, \"The run tree\").\n";
    md += "- `$COMPOSE`: `backend.argv` for the compose backend, e.g. `/usr/bin/docker compose`\n";
    md += "  or `/usr/bin/podman-compose`; `$COMPOSE_FILE`: `backend.file`, run from its\n";
    md += "  rendered copy in the run tree. `backend.flavour` is the compose CLI install\n";
    md += "  detected (`$COMPOSE version`): `docker` (docker compose v2, the compose spec\n";
    md += "  CLI) or `podman-compose`; the rows differ only where the CLIs do.\n";
    md += "- `$ENGINE`, `$NETWORK`, `$AGENT_CONTAINER`: `join_network`; `$ENGINE` in a\n";
    md += "  build step is `build.engine`, in a pin step `pins.engine`, in a restart\n";
    md += "  step `settle.engine`. `$PROJECT`:\n";
    md += "  `build.project` (or, with no build, `settle.project`), the compose project\n";
    md += "  name, the checkout's own (docs/COMPOSE.md, \"The project's name\").\n";
    md += "  `$BUILDAH`: `build.buildah` (podman-compose), which reads base\n";
    md += "  images' ONBUILD triggers before a build.\n";
    md += "- `$PROJECT_DIR`, `$RUN_DIR`, `$PIN`: `project_dir`, `run_dir` and\n";
    md += "  `pins.binary`, in the pin step that starts `up`, `restart` and `rebuild`\n";
    md += "  where the engine is rootless podman and the compose file binds checkout\n";
    md += "  paths (here `.` and `web/src`): each is bound, opened with no link followed,\n";
    md += "  onto `$RUN_DIR/.hostbridge-binds/<name>` inside the engine's namespaces,\n";
    md += "  the only path the rendered compose file names (docs/COMPOSE.md, \"Bind\n";
    md += "  sources are pinned\").\n";
    md += "- Services: `services` (here the example `api db web worker`); `rebuild` takes\n";
    md += "  only `buildable` ones (here `api web worker`). The wire carries an index into\n";
    md += "  the sorted `services` list, never free text.\n\n";
    md += "## Backend `stack`\n\n" + render_table(stack) + "\n";
    md += "## Backend `compose`, flavour `docker`\n\n";
    md += "Only through a docker engine user's rootless dockerd (bridge.json `engine`,\n";
    md += "docs/DOCKER.md), for services without binds (images, or builds from the checkout);\n";
    md += "without one every verb but `ping` is denied. Measured on docker 26.1.5 with\n";
    md += "compose 2.26.1 by e2e_bridge_docker: `-p $PROJECT` is the project name\n";
    md += "install chose, and the engine's own rows (below, \"Settling\") read the\n";
    md += "containers, never `compose ps` (JSON lines there, nothing at all for no\n";
    md += "containers) or `compose logs` (it starts every line with `ESC[2K`).\n";
    md += "`rebuild`'s build is screened as BuildKit reads, has no `--pull=never`\n";
    md += "(docker has none: the checks before the build, below), and is followed\n";
    md += "by `up --no-deps --force-recreate S`, which compose v2 honours\n";
    md += "(e2e_rebuild_docker).\n\n";
    md += render_table(doc_config(BackendKind::Compose)) + "\n";
    md += "## Backend `compose`, flavour `podman-compose`\n\n";
    md += "podman-compose (1.0.3 in Debian 12) refuses `logs --no-color`; its logs are\n";
    md += "never coloured. With `settle` (podman), `restart S` is the engine's own\n";
    md += "restart of S's containers, found by the install's labels as `rebuild`'s\n";
    md += "`rm` finds them (never by a name): podman-compose would only run the same\n";
    md += "`podman restart` after its own start-up, and ignore its exit status.\n\n";
    md += render_table(doc_config(BackendKind::Compose, ComposeFlavour::PodmanCompose)) + "\n";
    md += "### Before the build step: base images' ONBUILD triggers\n\n";
    md += "Before a podman build runs (after the snapshot and the screen), the executor\n";
    md += "asks for every image of the store, which a `FROM` could name, then, for each\n";
    md += "id it has not found free of triggers before, how many ONBUILD triggers its\n";
    md += "config holds (`$BUILDAH` is `build.buildah`; `$ID` an id the list printed,\n";
    md += "64 lowercase hex digits). One with any refuses the build (docs/BUILDS.md,\n";
    md += "\"Base images' triggers\").\n\n";
    {
        Config c = doc_config(BackendKind::Compose, ComposeFlavour::PodmanCompose);
        const std::string id(64, 'a');
        std::string count = display_argv(*trigger_count(c, id));
        count.replace(count.find(id), id.size(), "$ID");
        md += "| row | runs |\n|---|---|\n";
        md += "| images | `" + display_argv(trigger_images(c)) + "` |\n";
        md += "| triggers | `" + count + "` |\n\n";
        // An engine user's store, which buildah cannot read (docs/ENGINE-USER.md).
        c.engine = EngineIdentity{"hb-demo-app", "/home/hb-demo-app/engine/podman.sock",
                                  "/home/u/.local/lib/hostbridge/demo-app/hostbridge-engine-relay"};
        std::string save = display_argv(*trigger_save(c, id));
        save.replace(save.find(id), id.size(), "$ID");
        save.replace(save.find(image_save_file(c)), image_save_file(c).size(),
                     "$RUN_DIR/.hostbridge-build/" + std::string(kImageSaveName));
        md += "With an engine user (`engine` in `bridge.json`, docs/ENGINE-USER.md) buildah\n";
        md += "cannot see the store: the triggers row is replaced by a save of the image\n";
        md += "through the engine's socket, one tar nothing extracts, which\n";
        md += "`hostbridge-parser --image-config` walks to its config in the sandbox; the\n";
        md += "copy is removed after.\n\n";
        md += "| row | runs |\n|---|---|\n";
        md += "| save | `" + save + "` |\n\n";
    }
    {
        // docker's: its inspect shows the triggers; its build pulls a FROM
        // the daemon lacks (docs/DOCKER.md).
        Config c = doc_config(BackendKind::Compose, ComposeFlavour::Docker);
        const std::string id(64, 'a');
        std::string count = display_argv(*trigger_count(c, id));
        count.replace(count.find(id), id.size(), "$ID");
        md += "On docker (`$ENGINE` is the docker client) the images row is the same and\n";
        md += "the daemon's inspect shows the triggers. Before them, each image a `FROM` or\n";
        md += "`COPY --from` may name (the person's base images and the install's own,\n";
        md += "`$REF`) is asked for: the screen then allows only those the daemon holds,\n";
        md += "since docker's build pulls any other, whatever its flags.\n\n";
        md += "| row | runs |\n|---|---|\n";
        md += "| present | `" + display_argv(image_present(c, "$REF")) + "` |\n";
        md += "| triggers | `" + count + "` |\n\n";
    }
    md +=
        "## Settling: the engine queries after `up`, `restart`, `rebuild`, `status`, `health`\n\n";
    md += "With `settle` in `bridge.json` (`$ENGINE` is `settle.engine`, `$PROJECT`\n";
    md += "`settle.project`; the compose backend, or a stack installed with\n";
    md += "`--stack-project`, whose script's rows come first: docs/COMPOSE.md, \"A\n";
    md += "stack's services\"), a plan that ran to its end is followed by the\n";
    md += "settle step (docs/COMPOSE.md, \"Verified outcomes\"): once a second, within\n";
    md += "the verb's timeout and at most `settle.seconds`, the executor lists the\n";
    md += "project's containers and inspects them; the inspect output is read by\n";
    md += "`hostbridge-parser --inspect` in the sandbox. `$ID` is a container id the\n";
    md += "list printed (64 lowercase hex digits, checked again before it enters an\n";
    md += "argv). `status` and `health` are one look through the same rows, no\n";
    md += "waiting (after a stack's own script; docs/COMPOSE.md, \"Structured status\n";
    md += "and health\"); `health`'s healthcheck rows run all at once.\n\n";
    {
        const Config settling = doc_config(BackendKind::Compose, ComposeFlavour::PodmanCompose);
        const std::string id(64, 'a');
        const auto shown = [&](const std::optional<Argv>& argv) {
            std::string line = display_argv(*argv);
            return "`" + line.replace(line.find(id), id.size(), "$ID") + "`";
        };
        md += "| row | runs |\n|---|---|\n";
        md += "| list | `" + display_argv(settle_list(settling)) + "` |\n";
        md += "| inspect | " + shown(settle_inspect(settling, {id})) + " (every listed id) |\n";
        md += "| healthcheck | " + shown(settle_healthcheck(settling, posture(settling), id)) +
              " (podman only, while a healthcheck is `starting`, and for `health` once per running "
              "container "
              "that has one: its timers are systemd's) |\n";
        md += "| logs | " + shown(settle_log(settling, id)) +
              " (a service that did not settle, or that `health` found not healthy) |\n";
        Config pinning = settling;
        pinning.pins->engine = "$ENGINE";
        pinning.pins->binary = "$PIN";
        pinning.run_dir = "$RUN_DIR";
        std::string check =
            display_argv(*settle_pin_check(pinning, 4242, {{"web/src", "/srv/src"}}));
        check.replace(check.find("4242"), 4, "$PID");
        md += "| binds | " + shown(settle_mounts(settling, {id})) +
              " (with `pins`: every listed id, each round, before the inspect row is read; "
              "docs/COMPOSE.md, \"Bind sources are pinned\") |\n";
        md += "| pin check | `" + check +
              "` (per running container started since the request began, once per start: each "
              "bind whose source is a pin, with its target; `$PID` the container's, from the "
              "binds row) |\n";
        md += "| stop | " + shown(settle_stop(settling, id)) +
              " (a container whose check failed, or that binds a checkout path by its path) "
              "|\n\n";
        md += "On a compose install the inspect reader counts a container as the\n";
        md += "project's only when it also carries `io.hostbridge.project=$PROJECT`, the\n";
        md += "label its rendered compose file sets on every service (docs/COMPOSE.md,\n";
        md += "\"The project's name\"); the list row stays by the project label, so the\n";
        md += "pin check also meets a container made by hand with `-p`. A stack's reader\n";
        md += "asks for the project label alone.\n\n";
        md += "A `logs` request with `lines` or `since` (docs/PROTOCOL.md, \"Following\n";
        md += "logs\"; only on such an install), and on a compose install every `logs`\n";
        md += "(`lines` 200 when none is given), runs none of the compose CLI's rows: the\n";
        md += "list and inspect rows find the service's one container, then\n\n";
        md += "| step | runs |\n|---|---|\n";
        md += "| `lines` N alone: where the last N lines begin | " +
              shown(window_log(settling, id, LogWindow{50, kNoTime, 0})) + " (here N = 50) |\n";
        md += "| the view the lines are chosen from | " +
              shown(window_log(settling, id, LogWindow{0, 1796245045602731173, 2})) +
              " (one nanosecond before NS: the cursor's NS for `since`, with or without "
              "`lines`; the oldest stamp the tail printed for `lines` alone; here NS = "
              "1796245045602731173) |\n";
        md += "| the same from the start (`since` 0:0) | " +
              shown(window_log(settling, id, LogWindow{0, 0, 0})) + " |\n";
        md +=
            "| recount | the view row again, from the last line's stamp (only when a piece "
            "of the line before it was written at that stamp: how many lines the next "
            "request will see there) |\n\n";
    }
    md += "## Recreating: `up` applies an approved edit\n\n";
    md += "With `settle.definitions` in `bridge.json` (podman-compose; docs/COMPOSE.md,\n";
    md += "\"Applying an approved edit\"), `up`'s rows are followed by the list and\n";
    md += "inspect rows above; the sandboxed reader compares each container's\n";
    md += "`io.hostbridge.definition` label with its service's recorded hash, and each\n";
    md += "service one of whose containers carries another, or none, is recreated with\n";
    md += "these rows, one after the other; then the settle step runs.\n\n";
    md += "| service | runs |\n|---|---|\n";
    {
        Config recreating = doc_config(BackendKind::Compose, ComposeFlavour::PodmanCompose);
        recreating.settle->definitions = {{"api", std::string(64, 'a')}};
        for (std::size_t i = 0; i < recreating.services.size(); ++i) {
            md += "| `" + recreating.services[i] + "` | `" +
                  display_plan(*recreate_rows(recreating, i)) + "` |\n";
        }
        md += "\n";
    }
    md += "## `join-network` not configured\n\n";
    md += "Without `join_network` in `bridge.json` (both backends):\n\n";
    md += "    " +
          describe_row(
              {Verb::JoinNetwork, std::nullopt, argv_for(Verb::JoinNetwork, std::nullopt, no_join)},
              no_join) +
          "\n\n";
    md += "## Long-lived verbs in a systemd scope\n\n";
    md += "`up`, `restart`, `init` and `rebuild` (the long-lived verbs) run inside a\n";
    md += "transient user scope, so the containers they start (a stack's build may\n";
    md += "replace a running one) outlive the drain, when\n";
    md += "`systemd.enabled` is true, `systemd.systemd_run` is set and a user manager\n";
    md += "is reachable (`$XDG_RUNTIME_DIR/systemd/private` is a socket). The row's\n";
    md += "argv is then prefixed, unchanged (shown for `restart`):\n\n";
    md += "    " + display_argv(scoped) + "\n\n";
    md += "`$NONCE` is the request's nonce. Otherwise the argv runs as it is, in a new\n";
    md += "session.\n\n";
    md += "## The environment of every row\n\n";
    md += "Every row runs with exactly `PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:`\n";
    md += "`/usr/bin:/sbin:/bin`, `HOME` from the password database, `XDG_RUNTIME_DIR`\n";
    md += "when the drain's is set and absolute, and `LANG=C.UTF-8`\n";
    md += "(`child_environment()`, executor/runner.cpp), plus what each row's section\n";
    md += "names (the run tree's variables: docs/DECIDE-AND-RUN.md). With an engine\n";
    md += "user (`engine` in `bridge.json`) every row also gets\n\n";
    md += "    CONTAINER_HOST=unix://$RUN_DIR/.hostbridge-engine-XXXXXX/s\n\n";
    md += "(`engine_environment()`): a relay the drain runs for the command\n";
    md += "(engines/podman/engine_relay.hpp) to `engine.socket` as it was opened, with no\n";
    md += "link followed and checked to be a socket the engine user owns\n";
    md += "(common/engine_socket.hpp; otherwise the row does not run). That makes\n";
    md += "every podman it runs, podman-compose's included, a client of the engine\n";
    md += "user's rootless podman service (docs/ENGINE-USER.md), whatever the name\n";
    md += "is made to point at meanwhile. On docker the rows also get\n";
    md += "`DOCKER_HOST`, the same relay, and `DOCKER_BUILDKIT=1`: without its buildx\n";
    md += "plugin docker's build would fall back to the legacy builder, another\n";
    md += "parser than the screen's, with a warning alone (docs/DOCKER.md). Nothing\n";
    md += "else of the drain's environment reaches a command.\n";
    return md;
}

constexpr const char* kRegenerate = "ArgvTable.DocsListTheCompleteTable";

TEST(ArgvTable, DocsListTheCompleteTable) {
    const std::string path = std::string(HB_SOURCE_DIR) + "/docs/ARGV-TABLE.md";
    const std::string doc = render_doc();
    if (const char* regen = std::getenv("HB_REGENERATE_DOCS"); regen && *regen == '1') {
        std::ofstream(path, std::ios::binary | std::ios::trunc) << doc;
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream on_disk;
    on_disk << in.rdbuf();
    EXPECT_EQ(on_disk.str(), doc) << path << " is out of date; regenerate it: HB_REGENERATE_DOCS=1 "
                                  << "executor_tests --gtest_filter=" << kRegenerate;
}

}  // namespace
}  // namespace hb::exec
