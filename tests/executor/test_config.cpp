// bridge.json: the example parses, the canonical text round-trips, and every
// rule of the strict reader has a case that fails if the rule is removed.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include <gtest/gtest.h>

#include "admin/install/config_write.hpp"
#include "common/config.hpp"
#include "tests/support/files.hpp"

namespace {

using nlohmann::ordered_json;
using Json = ordered_json;

const std::string kShaA(64, 'a');
const std::string kShaB(64, 'b');

// docs/CONFIG.md's example, comments removed and the elided hashes filled in.
const char* const kArchitectureExample = R"({
  "version": 1,
  "slug": "demo-app",
  "project_dir": "/home/u/Projects/demo-app",
  "spool_dir": "/home/u/Projects/demo-app/untracked/hostbridge",
  "state_dir": "/home/u/.local/state/hostbridge/demo-app",
  "policy_file": "/home/u/.config/hostbridge/demo-app/policy.conf",
  "parser": "/home/u/.local/lib/hostbridge/demo-app/hostbridge-parser",
  "snapshot": "/home/u/.local/lib/hostbridge/demo-app/hostbridge-snapshot",
  "allow_root": false,
  "file_mode": "0644",
  "agent_gid": null,
  "backend": {"kind": "stack", "argv": ["/home/u/Projects/demo-app/stack"]},
  "services": ["api", "db", "web", "worker"],
  "buildable": ["api", "web", "worker"],
  "tcb": [{"path": "stack", "sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},
          {"path": "compose.yaml", "sha256": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
          {"path": ".env", "sha256": null}],
  "run_dir": "/home/u/.cache/hostbridge/run/demo-app",
  "limits": {"mutating": {"count": 20, "seconds": 600},
             "read_only": {"count": 120, "seconds": 60},
             "ttl_seconds": 600, "future_skew_seconds": 120},
  "timeouts": {"default": 300, "rebuild": 1200},
  "drain": {"time_budget_seconds": 1800, "linger_seconds": 10},
  "retention": {"archive_days": 7, "responses_days": 1},
  "systemd": {"enabled": true, "systemd_run": "/usr/bin/systemd-run"},
  "join_network": null
})";

Json base() {
    return Json::parse(kArchitectureExample);
}

Json compose_backend() {
    return Json::parse(R"({"kind": "compose", "argv": ["/usr/bin/docker", "compose"],
                          "file": "/home/u/Projects/demo-app/compose.yaml"})");
}

Json join_network_object() {
    return Json::parse(R"({"engine": "/usr/bin/podman", "network": "demo-app-network",
                          "agent_container": "agent"})");
}

std::string text_of(const Json& j) {
    return j.dump(2);
}

// --- the example and the round trip -------------------------------------

TEST(Config, ArchitectureExampleParses) {
    auto config = hb::parse_config(kArchitectureExample);
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->version, 1);
    EXPECT_EQ(config->slug, "demo-app");
    EXPECT_EQ(config->project_dir, "/home/u/Projects/demo-app");
    EXPECT_EQ(config->spool_dir, "/home/u/Projects/demo-app/untracked/hostbridge");
    EXPECT_EQ(config->state_dir, "/home/u/.local/state/hostbridge/demo-app");
    EXPECT_EQ(config->policy_file, "/home/u/.config/hostbridge/demo-app/policy.conf");
    EXPECT_EQ(config->parser, "/home/u/.local/lib/hostbridge/demo-app/hostbridge-parser");
    EXPECT_EQ(config->snapshot, "/home/u/.local/lib/hostbridge/demo-app/hostbridge-snapshot");
    EXPECT_FALSE(config->allow_root);
    EXPECT_EQ(config->file_mode, 0644u);
    EXPECT_FALSE(config->agent_gid.has_value());
    EXPECT_EQ(config->backend.kind, hb::BackendKind::Stack);
    EXPECT_EQ(config->backend.argv, std::vector<std::string>{"/home/u/Projects/demo-app/stack"});
    EXPECT_EQ(config->backend.file, "");
    EXPECT_EQ(config->services, (std::vector<std::string>{"api", "db", "web", "worker"}));
    EXPECT_EQ(config->buildable, (std::vector<std::string>{"api", "web", "worker"}));
    ASSERT_EQ(config->tcb.size(), 3u);
    EXPECT_EQ(config->tcb[0].path, "stack");
    EXPECT_EQ(config->tcb[0].sha256, kShaA);
    EXPECT_EQ(config->tcb[1].sha256, kShaB);
    EXPECT_EQ(config->tcb[2].path, ".env");
    EXPECT_FALSE(config->tcb[2].sha256.has_value());
    EXPECT_EQ(config->limits.mutating.count, 20);
    EXPECT_EQ(config->limits.mutating.seconds, 600);
    EXPECT_EQ(config->limits.read_only.count, 120);
    EXPECT_EQ(config->limits.read_only.seconds, 60);
    EXPECT_EQ(config->limits.ttl_seconds, 600);
    EXPECT_EQ(config->limits.future_skew_seconds, 120);
    EXPECT_EQ(config->timeouts.default_seconds, 300);
    EXPECT_EQ(config->timeouts.rebuild_seconds, 1200);
    EXPECT_TRUE(config->timeouts.per_verb.empty());
    EXPECT_EQ(config->drain.time_budget_seconds, 1800);
    EXPECT_EQ(config->drain.linger_seconds, 10);
    EXPECT_EQ(config->retention.archive_days, 7);
    EXPECT_EQ(config->retention.responses_days, 1);
    // audit_budget is optional: absent, the log's defaults.
    EXPECT_EQ(config->audit_budget.bytes, 256 * 1024);
    EXPECT_EQ(config->audit_budget.seconds, 600);
    EXPECT_TRUE(config->systemd.enabled);
    EXPECT_EQ(config->systemd.systemd_run, "/usr/bin/systemd-run");
    EXPECT_FALSE(config->join_network.has_value());
}

TEST(Config, SerializeParseRoundTrips) {
    auto config = hb::parse_config(kArchitectureExample);
    ASSERT_TRUE(config.ok()) << config.error().message;
    const std::string text = hb::serialize_config(*config);
    // The canonical text is the schema's key order, which the example uses.
    EXPECT_EQ(text, base().dump(2) + "\n");
    auto again = hb::parse_config(text);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *config);
    EXPECT_EQ(hb::serialize_config(*again), text);
}

// Install writes each backend's names (engines/registry_admin.cpp) and the
// executor reads them (engines/registry_names.cpp): one table each way,
// held to agree here for every kind and flavour.
TEST(Config, BackendNamesReadBack) {
    for (const auto& [kind, flavour] : std::vector<std::pair<std::string, std::string>>{
             {"stack", ""}, {"compose", "docker"}, {"compose", "podman-compose"}}) {
        Json j = base();
        if (kind == "compose") {
            j["backend"] = compose_backend();
            j["backend"]["flavour"] = flavour;
        }
        auto config = hb::parse_config(j.dump());
        ASSERT_TRUE(config.ok()) << kind << " " << flavour << ": " << config.error().message;
        const Json written = Json::parse(hb::serialize_config(*config))["backend"];
        EXPECT_EQ(written["kind"], kind);
        EXPECT_EQ(written.value("flavour", ""), flavour);
        EXPECT_EQ(hb::stack_backend(config->backend.kind), kind == "stack");
        EXPECT_EQ(hb::podman_compose(config->backend), flavour == "podman-compose");
        EXPECT_EQ(hb::docker_compose(config->backend), flavour == "docker");
    }
}

// The stack backend's `build` (install --build-context): only the budgets
// and each service's context and Containerfile; the compose build step's
// words (engine, project, image, ...) are refused there (docs/BUILDS.md).
TEST(Config, AStackBuildHoldsOnlyContextsAndRoundTrips) {
    Json j = base();
    j["build"] = {{"max_files", 500},
                  {"max_bytes", 1048576},
                  {"services", Json::array({{{"service", "api"},
                                             {"context", "."},
                                             {"containerfile", "services/api/Containerfile"}},
                                            {{"service", "web"},
                                             {"context", "services/web"},
                                             {"containerfile", "Containerfile"}}})}};
    auto config = hb::parse_config(j.dump());
    ASSERT_TRUE(config.ok()) << config.error().message;
    ASSERT_TRUE(config->build.has_value());
    EXPECT_EQ(config->build->services.size(), 2U);
    EXPECT_EQ(config->build->services[0].containerfile, "services/api/Containerfile");
    EXPECT_TRUE(config->build->engine.empty());
    const std::string text = hb::serialize_config(*config);
    EXPECT_EQ(Json::parse(text)["build"], j["build"]);
    auto again = hb::parse_config(text);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *config);

    Json engine = j;
    engine["build"]["engine"] = "/usr/bin/podman";
    auto refused = hb::parse_config(engine.dump());
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.error().message.find("build.engine"), std::string::npos)
        << refused.error().message;
    Json image = j;
    image["build"]["services"][0]["image"] = "x";
    EXPECT_FALSE(hb::parse_config(image.dump()).ok());
    Json climbs = j;
    climbs["build"]["services"][1]["context"] = "../elsewhere";
    EXPECT_FALSE(hb::parse_config(climbs.dump()).ok());
}

// Bind pins (engines/podman/bind_pin.hpp): podman-compose only, each source one
// of checkout_paths (the walk covers it), sorted, and round-tripped.
// The person's opt-in for bind sources nothing pins (admin/compose/unpinned_binds.hpp).
TEST(Config, UnpinnedBindsAreComposeOnlySortedAndNeverTheRoot) {
    Json j = base();
    j["backend"] = compose_backend();
    j["unpinned_binds"] = {"data", "web/src"};
    auto config = hb::parse_config(j.dump());
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->unpinned_binds, (std::vector<std::string>{"data", "web/src"}));
    const std::string text = hb::serialize_config(*config);
    EXPECT_EQ(Json::parse(text)["unpinned_binds"], j["unpinned_binds"]);
    EXPECT_EQ(*hb::parse_config(text), *config);
    EXPECT_FALSE(Json::parse(hb::serialize_config(*hb::parse_config(base().dump())))
                     .contains("unpinned_binds"));  // written only when there is one
    auto refused = [&](Json bad, const std::string& key) {
        auto got = hb::parse_config(bad.dump());
        ASSERT_FALSE(got.ok()) << key;
        EXPECT_NE(got.error().message.find(key), std::string::npos) << got.error().message;
    };
    Json root = j;
    root["unpinned_binds"] = {"."};
    refused(root, "unpinned_binds[0]");
    Json unsorted = j;
    unsorted["unpinned_binds"] = {"web/src", "data"};
    refused(unsorted, "unpinned_binds[1]");
    Json climbs = j;
    climbs["unpinned_binds"] = {"../x"};
    refused(climbs, "unpinned_binds[0]");
    Json stack = base();
    stack["unpinned_binds"] = {"data"};
    refused(stack, "unpinned_binds");
}

TEST(Config, BindPinsArePodmanComposeOnlyAndEachSourceIsWalked) {
    Json j = base();
    j["backend"] = compose_backend();
    j["backend"]["flavour"] = "podman-compose";
    j["checkout_paths"] = {".", "app", "web/src"};
    j["pins"] = {{"engine", "/usr/bin/podman"},
                 {"binary", "/opt/hb/hostbridge-pin"},
                 {"sources", {".", "web/src"}}};
    auto config = hb::parse_config(j.dump());
    ASSERT_TRUE(config.ok()) << config.error().message;
    ASSERT_TRUE(config->pins.has_value());
    EXPECT_EQ(config->pins->sources, (std::vector<std::string>{".", "web/src"}));
    const std::string text = hb::serialize_config(*config);
    EXPECT_EQ(Json::parse(text)["pins"], j["pins"]);
    auto again = hb::parse_config(text);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *config);

    Json none = j;
    none["pins"]["sources"] = Json::array();  // pinning on, nothing bound yet
    EXPECT_TRUE(hb::parse_config(none.dump()).ok());

    auto refused = [&](Json bad, const std::string& key) {
        auto got = hb::parse_config(bad.dump());
        ASSERT_FALSE(got.ok()) << key;
        EXPECT_NE(got.error().message.find(key), std::string::npos) << got.error().message;
    };
    Json unwalked = j;
    unwalked["pins"]["sources"] = {"src"};
    refused(unwalked, "pins.sources[0]");
    Json unsorted = j;
    unsorted["pins"]["sources"] = {"web/src", "."};
    refused(unsorted, "pins.sources[1]");
    Json climbs = j;
    climbs["pins"]["sources"] = {"../x"};
    refused(climbs, "pins.sources[0]");
    Json relative = j;
    relative["pins"]["engine"] = "podman";
    refused(relative, "pins.engine");
    Json docker = j;
    docker["backend"]["flavour"] = "docker";
    refused(docker, "pins");
    Json extra = j;
    extra["pins"]["unshare"] = true;
    refused(extra, "pins.unshare");
}

// The engine as its own identity (docs/ENGINE-USER.md): a login name, a
// socket and the relay binary outside the checkout; podman only, and never with bind pins, which
// only the person's own engine can enter.
TEST(Config, EngineUserTakesALoginNameAndASocketOutsideTheCheckout) {
    Json j = base();
    j["engine"] = {{"user", "hb-demo-app"},
                   {"socket", "/home/hb-demo-app/engine/podman.sock"},
                   {"relay", "/home/u/.local/lib/hostbridge/demo-app/hostbridge-engine-relay"}};
    auto config = hb::parse_config(j.dump());
    ASSERT_TRUE(config.ok()) << config.error().message;
    ASSERT_TRUE(config->engine.has_value());
    EXPECT_EQ(config->engine->user, "hb-demo-app");
    const std::string text = hb::serialize_config(*config);
    EXPECT_EQ(Json::parse(text)["engine"], j["engine"]);
    EXPECT_EQ(*hb::parse_config(text), *config);
    EXPECT_FALSE(Json::parse(hb::serialize_config(*hb::parse_config(base().dump())))
                     .contains("engine"));  // written only when there is one

    auto refused = [&](Json bad, const std::string& key) {
        auto got = hb::parse_config(bad.dump());
        ASSERT_FALSE(got.ok()) << key;
        EXPECT_NE(got.error().message.find(key), std::string::npos) << got.error().message;
    };
    for (const char* name :
         {"", "Root", "-x", "1abc", "a b", "abcdefghijklmnopqrstuvwxyz0123456"}) {
        Json bad = j;
        bad["engine"]["user"] = name;
        refused(bad, "engine.user");
    }
    for (const char* socket : {"podman.sock", "/home/u/Projects/demo-app/podman.sock",
                               "/home/u/Projects/demo-app", "/a/../b.sock"}) {
        Json bad = j;
        bad["engine"]["socket"] = socket;
        refused(bad, "engine.socket");
    }
    for (const char* relay : {"hostbridge-engine-relay", "/home/u/Projects/demo-app/relay"}) {
        Json bad = j;
        bad["engine"]["relay"] = relay;
        refused(bad, "engine.relay");
    }
    Json no_relay = j;
    no_relay["engine"].erase("relay");
    refused(no_relay, "engine.relay");
    Json extra = j;
    extra["engine"]["uid"] = 1001;
    refused(extra, "engine");
    // A docker engine user's rootless dockerd (docs/DOCKER.md).
    Json docker = j;
    docker["backend"] = compose_backend();
    EXPECT_TRUE(hb::parse_config(docker.dump()).ok());
    Json pinned = j;
    pinned.erase("engine");
    pinned["backend"] = compose_backend();
    pinned["backend"]["flavour"] = "podman-compose";
    pinned["checkout_paths"] = {"."};
    pinned["pins"] = {
        {"engine", "/usr/bin/podman"}, {"binary", "/opt/hb/hostbridge-pin"}, {"sources", {"."}}};
    ASSERT_TRUE(hb::parse_config(pinned.dump()).ok());  // pins alone are fine
    pinned["engine"] = j["engine"];
    refused(pinned, "cannot go with pins");
}

TEST(Config, SettleTakesTheBuildsProjectAndForAStackOnlyPodman) {
    Json j = base();
    j["backend"] = compose_backend();
    j["settle"] = {{"engine", "/usr/bin/podman"}, {"project", "demo-app"}, {"seconds", 45}};
    auto config = hb::parse_config(j.dump());
    ASSERT_TRUE(config.ok()) << config.error().message;
    ASSERT_TRUE(config->settle.has_value());
    EXPECT_EQ(config->settle->seconds, 45);
    const std::string text = hb::serialize_config(*config);
    EXPECT_EQ(Json::parse(text)["settle"], j["settle"]);
    auto again = hb::parse_config(text);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *config);

    auto refused = [&](Json bad, const std::string& key) {
        auto got = hb::parse_config(bad.dump());
        ASSERT_FALSE(got.ok()) << key;
        EXPECT_NE(got.error().message.find(key), std::string::npos) << got.error().message;
    };
    // A stack whose containers carry compose's labels (docs/COMPOSE.md, "A
    // stack's services"): podman only, and no build project to match.
    Json stack = base();
    stack["settle"] = j["settle"];
    ASSERT_TRUE(hb::parse_config(stack.dump()).ok());
    stack["settle"]["engine"] = "/usr/bin/docker";
    refused(stack, "settle.engine");
    for (const int seconds : {0, 601}) {
        Json bad = j;
        bad["settle"]["seconds"] = seconds;
        refused(bad, "settle.seconds");
    }
    Json relative = j;
    relative["settle"]["engine"] = "podman";
    refused(relative, "settle.engine");
    Json project = j;
    project["settle"]["project"] = "Bad Name";
    refused(project, "settle.project");
    Json extra = j;
    extra["settle"]["poll"] = 1;
    refused(extra, "settle");
}

TEST(Config, EveryOptionalShapeRoundTrips) {
    Json j = base();
    j["backend"] = compose_backend();
    j["backend"]["flavour"] = "podman-compose";
    j["agent_gid"] = 1000;
    j["file_mode"] = "0640";
    j["allow_root"] = true;
    j["join_network"] = join_network_object();
    j["systemd"]["enabled"] = false;
    j["systemd"]["systemd_run"] = "";
    j["drain"]["linger_seconds"] = 0;
    j["timeouts"]["up"] = 60;
    j["timeouts"]["join-network"] = 30;
    j["timeouts"]["logs"] = 20;
    j["services"] = Json::array();
    j["buildable"] = Json::array();
    j["tcb"] = Json::array();
    auto config = hb::parse_config(text_of(j));
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->backend.kind, hb::BackendKind::Compose);
    EXPECT_EQ(config->backend.file, "/home/u/Projects/demo-app/compose.yaml");
    EXPECT_EQ(config->backend.flavour, hb::ComposeFlavour::PodmanCompose);
    EXPECT_EQ(config->agent_gid, 1000u);
    EXPECT_EQ(config->file_mode, 0640u);
    ASSERT_TRUE(config->join_network.has_value());
    EXPECT_EQ(config->join_network->engine, "/usr/bin/podman");
    EXPECT_EQ(config->join_network->network, "demo-app-network");
    EXPECT_EQ(config->join_network->agent_container, "agent");
    EXPECT_EQ(config->drain.linger_seconds, 0);
    // Stored in verb order whatever the file's order.
    const std::vector<std::pair<hb::Verb, int>> expected = {
        {hb::Verb::Logs, 20}, {hb::Verb::Up, 60}, {hb::Verb::JoinNetwork, 30}};
    EXPECT_EQ(config->timeouts.per_verb, expected);

    const std::string text = hb::serialize_config(*config);
    auto again = hb::parse_config(text);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *config);
    EXPECT_EQ(hb::serialize_config(*again), text);
    // Key order is the schema's, per-verb keys after default and rebuild.
    const Json written = Json::parse(text);
    std::vector<std::string> timeout_keys;
    for (const auto& item : written["timeouts"].items()) timeout_keys.push_back(item.key());
    EXPECT_EQ(timeout_keys,
              (std::vector<std::string>{"default", "rebuild", "logs", "up", "join-network"}));
    std::vector<std::string> backend_keys;
    for (const auto& item : written["backend"].items()) backend_keys.push_back(item.key());
    EXPECT_EQ(backend_keys, (std::vector<std::string>{"kind", "argv", "file", "flavour"}));
}

// bridge.json written before install recorded the compose flavour ran the
// docker argv; it still does, and the next write names the flavour.
TEST(Config, ComposeWithoutFlavourIsDocker) {
    Json j = base();
    j["backend"] = compose_backend();
    auto config = hb::parse_config(text_of(j));
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->backend.flavour, hb::ComposeFlavour::Docker);
    EXPECT_EQ(Json::parse(hb::serialize_config(*config))["backend"]["flavour"], "docker");
    // The stack backend has no flavour, and none is written.
    auto stack = hb::parse_config(kArchitectureExample);
    ASSERT_TRUE(stack.ok()) << stack.error().message;
    EXPECT_FALSE(Json::parse(hb::serialize_config(*stack))["backend"].contains("flavour"));
}

TEST(Config, AuditBudgetIsReadAndWrittenOnlyWhenNotTheDefault) {
    Json j = base();
    j["audit_budget"] = {{"bytes", 1LL << 40}, {"seconds", 3600}};
    auto config = hb::parse_config(text_of(j));
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->audit_budget.bytes, 1LL << 40);
    EXPECT_EQ(config->audit_budget.seconds, 3600);
    const std::string text = hb::serialize_config(*config);
    const Json written = Json::parse(text);
    ASSERT_TRUE(written.contains("audit_budget")) << text;
    EXPECT_EQ(written["audit_budget"], j["audit_budget"]);
    auto again = hb::parse_config(text);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *config);
    EXPECT_EQ(hb::serialize_config(*again), text);

    // The defaults spelled out read the same as none, and are not written.
    j["audit_budget"] = {{"bytes", 262144}, {"seconds", 600}};
    auto spelled = hb::parse_config(text_of(j));
    ASSERT_TRUE(spelled.ok()) << spelled.error().message;
    EXPECT_EQ(*spelled, *hb::parse_config(kArchitectureExample));
    EXPECT_EQ(hb::serialize_config(*spelled), base().dump(2) + "\n");
}

// notify_command (executor/notify.hpp): read as written, written only when set.
TEST(Config, NotifyCommandIsReadAndWrittenOnlyWhenSet) {
    Json j = base();
    j["notify_command"] = {"/usr/bin/curl", "-d", "@-", "https://ntfy.sh/my topic"};
    auto config = hb::parse_config(text_of(j));
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->notify_command,
              (std::vector<std::string>{"/usr/bin/curl", "-d", "@-", "https://ntfy.sh/my topic"}));
    const std::string text = hb::serialize_config(*config);
    EXPECT_EQ(Json::parse(text)["notify_command"], j["notify_command"]);
    auto again = hb::parse_config(text);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *config);
    auto none = hb::parse_config(kArchitectureExample);
    ASSERT_TRUE(none.ok()) << none.error().message;
    EXPECT_TRUE(none->notify_command.empty());
    EXPECT_FALSE(Json::parse(hb::serialize_config(*none)).contains("notify_command"));
}

TEST(Config, ForVerbUsesOverridesThenRebuildThenDefault) {
    hb::Timeouts t;
    t.default_seconds = 300;
    t.rebuild_seconds = 1200;
    t.per_verb = {{hb::Verb::Up, 60}};
    EXPECT_EQ(t.for_verb(hb::Verb::Up), 60);
    EXPECT_EQ(t.for_verb(hb::Verb::Rebuild), 1200);
    EXPECT_EQ(t.for_verb(hb::Verb::Restart), 300);
    t.per_verb.emplace_back(hb::Verb::Rebuild, 900);
    EXPECT_EQ(t.for_verb(hb::Verb::Rebuild), 900);
}

TEST(Config, BoundaryValuesAreAccepted) {
    Json j = base();
    j["slug"] = std::string("a") + std::string(62, '-');  // 63 bytes
    j["services"] = Json::array();
    for (int i = 0; i < 64; ++i) {
        char name[8];
        std::snprintf(name, sizeof name, "s%02d", i);
        j["services"].push_back(name);
    }
    j["services"][63] = "s" + std::string(63, 'z');  // 64 bytes, still sorted last
    j["buildable"] = Json::array({"s00"});
    j["agent_gid"] = 4294967294U;
    j["limits"]["ttl_seconds"] = INT_MAX;
    j["timeouts"]["rebuild"] = 1800;  // equal to the budget
    j["tcb"] = Json::parse(R"([{"path": "a/b/.c", "sha256": null}])");
    j["audit_budget"] = {{"bytes", INT64_MAX}, {"seconds", INT_MAX}};
    auto config = hb::parse_config(text_of(j));
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->services.size(), 64u);
}

// --- every rule: one named case each ------------------------------------

struct RuleCase {
    std::string name;
    std::function<void(Json&)> mutate;
    std::string key;  // the key the message must name ("" for the document)
    std::string why;  // a substring of the reason
};

std::ostream& operator<<(std::ostream& os, const RuleCase& c) {
    return os << c.name;
}

RuleCase set(std::string name, std::string pointer, Json value, std::string key, std::string why) {
    return {std::move(name), [pointer, value](Json& j) { j[Json::json_pointer(pointer)] = value; },
            std::move(key), std::move(why)};
}

RuleCase erase(std::string name, std::string pointer, std::string key) {
    return {std::move(name),
            [pointer](Json& j) {
                const Json::json_pointer ptr(pointer);
                j[ptr.parent_pointer()].erase(ptr.back());
            },
            std::move(key), "is required but missing"};
}

RuleCase with(std::string name, std::function<void(Json&)> mutate, std::string key,
              std::string why) {
    return {std::move(name), std::move(mutate), std::move(key), std::move(why)};
}

const char* const kPositive = "must be a positive integer";
const char* const kAbsolute = "must be an absolute path";

std::vector<RuleCase> rule_cases() {
    std::vector<RuleCase> cases;
    auto add = [&cases](RuleCase c) { cases.push_back(std::move(c)); };

    // Unknown keys at every level.
    add(set("unknown_top", "/extra", 1, "extra", "unknown key"));
    add(set("unknown_backend", "/backend/extra", 1, "backend.extra", "unknown key"));
    add(set("unknown_tcb_entry", "/tcb/1/mode", "0644", "tcb[1].mode", "unknown key"));
    add(set("unknown_limits", "/limits/burst", 1, "limits.burst", "unknown key"));
    add(set("unknown_window", "/limits/read_only/burst", 1, "limits.read_only.burst",
            "unknown key"));
    add(set("unknown_timeouts", "/timeouts/frobnicate", 5, "timeouts.frobnicate", "unknown key"));
    add(set("unknown_timeouts_denied_verb", "/timeouts/exec", 5, "timeouts.exec", "unknown key"));
    add(set("unknown_drain", "/drain/extra", 1, "drain.extra", "unknown key"));
    add(set("unknown_retention", "/retention/quarantine_days", 1, "retention.quarantine_days",
            "unknown key"));
    add(set("unknown_systemd", "/systemd/extra", 1, "systemd.extra", "unknown key"));
    add(with(
        "unknown_audit_budget",
        [](Json& j) {
            j["audit_budget"] = {{"bytes", 1000}, {"seconds", 60}, {"events", 10}};
        },
        "audit_budget.events", "unknown key"));
    add(with(
        "unknown_join_network",
        [](Json& j) {
            j["join_network"] = join_network_object();
            j["join_network"]["extra"] = 1;
        },
        "join_network.extra", "unknown key"));

    // Missing required keys: every top-level key, and every nested one.
    for (const char* key :
         {"version",   "slug",         "project_dir", "spool_dir", "state_dir", "policy_file",
          "parser",    "allow_root",   "file_mode",   "agent_gid", "backend",   "services",
          "buildable", "tcb",          "limits",      "timeouts",  "drain",     "retention",
          "systemd",   "join_network", "run_dir",     "snapshot"}) {
        add(erase(std::string("missing_") + key, std::string("/") + key, key));
    }
    add(erase("missing_backend_kind", "/backend/kind", "backend.kind"));
    add(erase("missing_backend_argv", "/backend/argv", "backend.argv"));
    add(erase("missing_tcb_path", "/tcb/0/path", "tcb[0].path"));
    add(erase("missing_tcb_sha256", "/tcb/2/sha256", "tcb[2].sha256"));
    add(erase("missing_limits_mutating", "/limits/mutating", "limits.mutating"));
    add(erase("missing_limits_read_only", "/limits/read_only", "limits.read_only"));
    add(erase("missing_window_count", "/limits/mutating/count", "limits.mutating.count"));
    add(erase("missing_window_seconds", "/limits/read_only/seconds", "limits.read_only.seconds"));
    add(erase("missing_ttl", "/limits/ttl_seconds", "limits.ttl_seconds"));
    add(erase("missing_skew", "/limits/future_skew_seconds", "limits.future_skew_seconds"));
    add(erase("missing_timeout_default", "/timeouts/default", "timeouts.default"));
    add(erase("missing_timeout_rebuild", "/timeouts/rebuild", "timeouts.rebuild"));
    add(erase("missing_drain_budget", "/drain/time_budget_seconds", "drain.time_budget_seconds"));
    add(erase("missing_drain_linger", "/drain/linger_seconds", "drain.linger_seconds"));
    add(erase("missing_retention_archive", "/retention/archive_days", "retention.archive_days"));
    add(erase("missing_retention_responses", "/retention/responses_days",
              "retention.responses_days"));
    for (const char* key : {"bytes", "seconds"}) {
        add(with(
            std::string("missing_audit_budget_") + key,
            [key](Json& j) {
                j["audit_budget"] = {{"bytes", 1000}, {"seconds", 60}};
                j["audit_budget"].erase(key);
            },
            std::string("audit_budget.") + key, "is required but missing"));
    }
    add(erase("missing_systemd_enabled", "/systemd/enabled", "systemd.enabled"));
    add(erase("missing_systemd_run", "/systemd/systemd_run", "systemd.systemd_run"));
    for (const char* key : {"engine", "network", "agent_container"}) {
        add(with(
            std::string("missing_join_network_") + key,
            [key](Json& j) {
                j["join_network"] = join_network_object();
                j["join_network"].erase(key);
            },
            std::string("join_network.") + key, "is required but missing"));
    }

    // Wrong types.
    add(with(
        "document_not_object", [](Json& j) { j = Json::array(); }, "", "must be a JSON object"));
    add(set("version_string", "/version", "1", "version", "must be 1"));
    add(set("version_two", "/version", 2, "version", "must be 1"));
    add(set("slug_number", "/slug", 5, "slug", "must be a string"));
    add(set("project_dir_number", "/project_dir", 1, "project_dir", "must be a string"));
    add(set("allow_root_string", "/allow_root", "false", "allow_root", "must be true or false"));
    add(set("allow_root_number", "/allow_root", 0, "allow_root", "must be true or false"));
    add(set("agent_gid_string", "/agent_gid", "1000", "agent_gid", "group id"));
    add(set("agent_gid_float", "/agent_gid", 1000.5, "agent_gid", "group id"));
    add(set("agent_gid_negative", "/agent_gid", -1, "agent_gid", "group id"));
    add(set("agent_gid_no_change_sentinel", "/agent_gid", 4294967295U, "agent_gid", "group id"));
    add(set("backend_array", "/backend", Json::array(), "backend", "must be an object"));
    add(set("backend_argv_string", "/backend/argv", "/bin/stack", "backend.argv",
            "must be a non-empty array"));
    add(set("backend_argv_empty", "/backend/argv", Json::array(), "backend.argv",
            "must be a non-empty array"));
    add(set("backend_argv0_number", "/backend/argv/0", 5, "backend.argv[0]", "must be a string"));
    add(set("backend_argv1_empty", "/backend/argv/1", "", "backend.argv[1]", "must not be empty"));
    add(set("backend_argv1_number", "/backend/argv/1", 1, "backend.argv[1]", "must be a string"));
    add(set("services_string", "/services", "api", "services", "must be an array"));
    add(set("services_item_number", "/services/0", 1, "services[0]", "must be a string"));
    add(set("buildable_object", "/buildable", Json::object(), "buildable", "must be an array"));
    add(set("tcb_object", "/tcb", Json::object(), "tcb", "must be an array"));
    add(set("tcb_item_string", "/tcb/0", "stack", "tcb[0]", "must be an object"));
    add(set("tcb_sha_number", "/tcb/0/sha256", 1, "tcb[0].sha256", "must be a string"));
    add(set("limits_array", "/limits", Json::array(), "limits", "must be an object"));
    add(set("window_number", "/limits/mutating", 20, "limits.mutating", "must be an object"));
    add(set("timeouts_array", "/timeouts", Json::array(), "timeouts", "must be an object"));
    add(set("drain_null", "/drain", nullptr, "drain", "must be an object"));
    add(set("retention_string", "/retention", "7", "retention", "must be an object"));
    add(set("audit_budget_null", "/audit_budget", nullptr, "audit_budget", "must be an object"));
    add(set("audit_budget_number", "/audit_budget", 262144, "audit_budget", "must be an object"));
    add(set("audit_budget_array", "/audit_budget", Json::array({262144, 600}), "audit_budget",
            "must be an object"));
    add(set("systemd_null", "/systemd", nullptr, "systemd", "must be an object"));
    add(set("systemd_enabled_string", "/systemd/enabled", "yes", "systemd.enabled",
            "must be true or false"));
    add(set("systemd_run_null", "/systemd/systemd_run", nullptr, "systemd.systemd_run",
            "must be a string"));
    add(set("join_network_string", "/join_network", "podman", "join_network", "must be an object"));
    add(set("nul_in_path", "/parser", std::string("/usr/bin/x\0y", 12), "parser", "NUL"));

    // Every path absolute and normalised.
    add(set("project_dir_relative", "/project_dir", "Projects/demo-app", "project_dir", kAbsolute));
    add(set("project_dir_empty", "/project_dir", "", "project_dir", kAbsolute));
    add(set("spool_dir_relative", "/spool_dir", "untracked/hostbridge", "spool_dir", kAbsolute));
    add(set("state_dir_relative", "/state_dir", "state", "state_dir", kAbsolute));
    add(set("policy_file_relative", "/policy_file", "policy.conf", "policy_file", kAbsolute));
    add(set("parser_relative", "/parser", "hostbridge-parser", "parser", kAbsolute));
    add(set("snapshot_relative", "/snapshot", "hostbridge-snapshot", "snapshot", kAbsolute));
    add(set("backend_argv0_relative", "/backend/argv/0", "stack", "backend.argv[0]", kAbsolute));
    add(with(
        "backend_file_relative",
        [](Json& j) {
            j["backend"] = compose_backend();
            j["backend"]["file"] = "compose.yaml";
        },
        "backend.file", kAbsolute));
    add(set("systemd_run_relative", "/systemd/systemd_run", "systemd-run", "systemd.systemd_run",
            kAbsolute));
    add(with(
        "join_network_engine_relative",
        [](Json& j) {
            j["join_network"] = join_network_object();
            j["join_network"]["engine"] = "podman";
        },
        "join_network.engine", kAbsolute));
    add(set("path_dotdot", "/policy_file", "/home/u/.config/../x/policy.conf", "policy_file",
            "\"..\""));
    add(set("path_dot", "/state_dir", "/home/u/./state", "state_dir", "normalised"));
    add(set("path_double_slash", "/state_dir", "/home//u/state", "state_dir", "normalised"));
    add(set("path_trailing_slash", "/state_dir", "/home/u/state/", "state_dir", "normalised"));
    add(set("path_too_long", "/state_dir", "/" + std::string(PATH_MAX, 'a'), "state_dir",
            "PATH_MAX"));

    // The run tree (executor/run_tree.hpp): out of the agent's reach, apart
    // from the state directory, and its two optional lists well formed.
    add(set("run_dir_relative", "/run_dir", "run", "run_dir", kAbsolute));
    add(set("run_dir_inside_project", "/run_dir", "/home/u/Projects/demo-app/.run", "run_dir",
            "must lie outside project_dir"));
    add(set("run_dir_contains_project", "/run_dir", "/home/u/Projects", "run_dir",
            "must not contain project_dir"));
    add(set("run_dir_inside_state", "/run_dir", "/home/u/.local/state/hostbridge/demo-app/run",
            "run_dir", "must lie outside state_dir"));
    add(set("rendered_null_sha", "/rendered",
            Json::array({{{"path", "compose.yaml"}, {"sha256", nullptr}}}), "rendered[0].sha256",
            "64 lowercase hex"));
    add(set("rendered_absolute_path", "/rendered",
            Json::array({{{"path", "/etc/passwd"}, {"sha256", std::string(64, 'a')}}}),
            "rendered[0].path", "relative"));
    add(set("checkout_paths_string", "/checkout_paths", ".", "checkout_paths",
            "must be an array of strings"));
    add(set("checkout_paths_dotdot", "/checkout_paths", Json::array({"../etc"}),
            "checkout_paths[0]", "\"..\""));

    // Where things must (not) live relative to the checkout.
    add(set("spool_outside_project", "/spool_dir", "/home/u/spool", "spool_dir",
            "must lie inside project_dir"));
    add(set("spool_is_project", "/spool_dir", "/home/u/Projects/demo-app", "spool_dir",
            "must lie inside project_dir"));
    add(set("spool_sibling_prefix", "/spool_dir", "/home/u/Projects/demo-app2/spool", "spool_dir",
            "must lie inside project_dir"));
    add(set("state_inside_project", "/state_dir", "/home/u/Projects/demo-app/.state", "state_dir",
            "must lie outside project_dir"));
    add(set("state_is_project", "/state_dir", "/home/u/Projects/demo-app", "state_dir",
            "must lie outside project_dir"));
    add(set("policy_inside_project", "/policy_file", "/home/u/Projects/demo-app/policy.conf",
            "policy_file", "must lie outside project_dir"));
    add(set("parser_inside_project", "/parser", "/home/u/Projects/demo-app/bin/parser", "parser",
            "must lie outside project_dir"));
    // The agent's checkout must not hold the program that copies it.
    add(set("snapshot_inside_project", "/snapshot", "/home/u/Projects/demo-app/bin/snapshot",
            "snapshot", "must lie outside project_dir"));
    add(set("systemd_run_inside_project", "/systemd/systemd_run",
            "/home/u/Projects/demo-app/systemd-run", "systemd.systemd_run",
            "must lie outside project_dir"));
    add(with(
        "engine_inside_project",
        [](Json& j) {
            j["join_network"] = join_network_object();
            j["join_network"]["engine"] = "/home/u/Projects/demo-app/podman";
        },
        "join_network.engine", "must lie outside project_dir"));
    add(with(
        "compose_file_outside_project",
        [](Json& j) {
            j["backend"] = compose_backend();
            j["backend"]["file"] = "/home/u/compose.yaml";
        },
        "backend.file", "must lie inside project_dir"));

    // Slug.
    add(set("slug_uppercase", "/slug", "Demo-app", "slug", "^[a-z0-9][a-z0-9-]{0,62}$"));
    add(set("slug_leading_dash", "/slug", "-demo", "slug", "^[a-z0-9]"));
    add(set("slug_empty", "/slug", "", "slug", "^[a-z0-9]"));
    add(set("slug_underscore", "/slug", "demo_app", "slug", "^[a-z0-9]"));
    add(set("slug_too_long", "/slug", std::string(64, 'a'), "slug", "^[a-z0-9]"));

    // Service lists.
    add(set("services_unsorted", "/services", Json::array({"db", "api"}), "services[1]",
            "out of order"));
    add(set("services_duplicate", "/services", Json::array({"api", "api"}), "services[1]",
            "listed twice"));
    add(set("services_uppercase", "/services/0", "API", "services[0]", "^[a-z][a-z0-9_-]*$"));
    add(set("services_leading_digit", "/services/0", "1api", "services[0]", "^[a-z]"));
    add(set("services_option_like", "/services/0", "-api", "services[0]", "^[a-z]"));
    add(set("services_empty_name", "/services/0", "", "services[0]", "^[a-z]"));
    add(set("services_name_65_bytes", "/services/3", "w" + std::string(64, 'x'), "services[3]",
            "at most 64 bytes"));
    add(with(
        "services_65",
        [](Json& j) {
            j["services"] = Json::array();
            for (int i = 0; i < 65; ++i) {
                char name[8];
                std::snprintf(name, sizeof name, "s%02d", i);
                j["services"].push_back(name);
            }
            j["buildable"] = Json::array();
        },
        "services", "more than 64"));
    add(set("buildable_not_subset", "/buildable", Json::array({"api", "cache"}), "buildable[1]",
            "not in services"));
    add(set("buildable_unsorted", "/buildable", Json::array({"web", "api"}), "buildable[1]",
            "out of order"));
    add(set("buildable_duplicate", "/buildable", Json::array({"api", "api"}), "buildable[1]",
            "listed twice"));
    add(set("buildable_shape", "/buildable", Json::array({"Api"}), "buildable[0]", "^[a-z]"));

    // file_mode.
    add(set("file_mode_number", "/file_mode", 420, "file_mode", "must be a string"));
    add(set("file_mode_three_digits", "/file_mode", "644", "file_mode", "octal mode string"));
    add(set("file_mode_0o", "/file_mode", "0o644", "file_mode", "octal mode string"));
    add(set("file_mode_not_octal", "/file_mode", "0648", "file_mode", "octal mode string"));
    add(set("file_mode_setuid", "/file_mode", "04755", "file_mode", "octal mode string"));
    add(set("file_mode_world_writable", "/file_mode", "0666", "file_mode", "world-writable"));
    add(set("file_mode_world_write_only", "/file_mode", "0642", "file_mode", "world-writable"));

    // tcb.
    add(set("tcb_absolute", "/tcb/0/path", "/etc/passwd", "tcb[0].path", "not absolute"));
    add(set("tcb_dotdot", "/tcb/0/path", "../outside", "tcb[0].path", "\"..\""));
    add(set("tcb_inner_dotdot", "/tcb/0/path", "a/../../b", "tcb[0].path", "\"..\""));
    add(set("tcb_empty", "/tcb/0/path", "", "tcb[0].path", "must not be empty"));
    add(set("tcb_dot", "/tcb/0/path", "./stack", "tcb[0].path", "normalised"));
    add(set("tcb_double_slash", "/tcb/0/path", "a//b", "tcb[0].path", "normalised"));
    add(set("tcb_duplicate", "/tcb/1/path", "stack", "tcb[1].path", "pinned twice"));
    add(set("tcb_sha_uppercase", "/tcb/0/sha256", std::string(64, 'A'), "tcb[0].sha256",
            "lowercase hex"));
    add(set("tcb_sha_short", "/tcb/0/sha256", std::string(63, 'a'), "tcb[0].sha256",
            "lowercase hex"));
    add(set("tcb_sha_long", "/tcb/0/sha256", std::string(65, 'a'), "tcb[0].sha256",
            "lowercase hex"));
    add(set("tcb_sha_not_hex", "/tcb/0/sha256", std::string(64, 'g'), "tcb[0].sha256",
            "lowercase hex"));

    // Limits: positive integers, each key.
    for (const char* pointer :
         {"/limits/mutating/count", "/limits/mutating/seconds", "/limits/read_only/count",
          "/limits/read_only/seconds", "/limits/ttl_seconds", "/limits/future_skew_seconds",
          "/timeouts/default", "/timeouts/rebuild", "/drain/time_budget_seconds",
          "/retention/archive_days", "/retention/responses_days"}) {
        std::string key = std::string(pointer + 1);
        std::replace(key.begin(), key.end(), '/', '.');
        std::string base_name = key;
        std::replace(base_name.begin(), base_name.end(), '.', '_');
        add(set(base_name + "_zero", pointer, 0, key, kPositive));
        add(set(base_name + "_negative", pointer, -1, key, kPositive));
        add(set(base_name + "_float", pointer, 20.0, key, kPositive));
        add(set(base_name + "_bool", pointer, true, key, kPositive));
        add(set(base_name + "_string", pointer, "20", key, kPositive));
        add(set(base_name + "_over_int", pointer, 2147483648LL, key, kPositive));
    }
    // audit_budget: both subkeys positive integers (the bytes up to INT64_MAX).
    for (const char* key : {"bytes", "seconds"}) {
        for (const auto& [suffix, value] : std::vector<std::pair<std::string, Json>>{
                 {"zero", 0},
                 {"negative", -1},
                 {"float", 600.0},
                 {"bool", true},
                 {"string", "600"},
                 {"null", nullptr},
                 {"over_range", std::string(key) == "bytes" ? Json(9223372036854775808ULL)
                                                            : Json(2147483648LL)}}) {
            add(with(
                std::string("audit_budget_") + key + "_" + suffix,
                [key, v = value](Json& j) {
                    j["audit_budget"] = {{"bytes", 1000}, {"seconds", 60}};
                    j["audit_budget"][key] = v;
                },
                std::string("audit_budget.") + key, kPositive));
        }
    }
    add(set("linger_negative", "/drain/linger_seconds", -1, "drain.linger_seconds",
            "non-negative integer"));
    add(set("linger_float", "/drain/linger_seconds", 0.5, "drain.linger_seconds",
            "non-negative integer"));

    // Timeouts: per-verb keys and the drain budget.
    add(set("timeout_per_verb_zero", "/timeouts/up", 0, "timeouts.up", kPositive));
    add(set("timeout_per_verb_string", "/timeouts/restart", "60", "timeouts.restart", kPositive));
    add(set("timeout_ping", "/timeouts/ping", 5, "timeouts.ping", "ping runs no command"));
    add(set("timeout_default_over_budget", "/timeouts/default", 1801, "timeouts.default",
            "time_budget_seconds"));
    add(set("timeout_rebuild_over_budget", "/timeouts/rebuild", 1801, "timeouts.rebuild",
            "time_budget_seconds"));
    add(set("timeout_per_verb_over_budget", "/timeouts/join-network", 1801, "timeouts.join-network",
            "time_budget_seconds"));

    // Backend kinds.
    add(set("backend_kind_unknown", "/backend/kind", "docker", "backend.kind",
            "\"stack\" or \"compose\""));
    add(set("backend_kind_number", "/backend/kind", 1, "backend.kind", "must be a string"));
    add(set("stack_with_file", "/backend/file", "/home/u/Projects/demo-app/compose.yaml",
            "backend.file", "only allowed with kind \"compose\""));
    add(with(
        "compose_without_file",
        [](Json& j) {
            j["backend"] = compose_backend();
            j["backend"].erase("file");
        },
        "backend.file", "is required with kind \"compose\""));
    // The compose flavour: a closed set, compose only.
    add(set("stack_with_flavour", "/backend/flavour", "docker", "backend.flavour",
            "only allowed with kind \"compose\""));
    for (const auto& [suffix, value] :
         std::vector<std::pair<std::string, Json>>{{"unknown", "podman"},
                                                   {"case", "Docker"},
                                                   {"version", "podman-compose-1.0.3"},
                                                   {"empty", ""},
                                                   {"number", 1},
                                                   {"null", nullptr}}) {
        add(with(
            "compose_flavour_" + suffix,
            [v = value](Json& j) {
                j["backend"] = compose_backend();
                j["backend"]["flavour"] = v;
            },
            "backend.flavour",
            value.is_string() ? "\"docker\" or \"podman-compose\"" : "must be a string"));
    }

    // notify_command: a fixed argv, the program outside the checkout.
    const auto notify = [&add](std::string name, Json value, std::string key, std::string why) {
        add(set("notify_command_" + name, "/notify_command", std::move(value), std::move(key),
                std::move(why)));
    };
    notify("string", "/usr/bin/curl -d @- https://ntfy.sh/t", "notify_command",
           "must be an array of 1 to 32 strings");
    notify("empty", Json::array(), "notify_command", "must be an array of 1 to 32 strings");
    notify("too_many_words", Json(std::vector<std::string>(33, "/usr/bin/true")), "notify_command",
           "must be an array of 1 to 32 strings");
    notify("relative", {"curl", "-d", "@-"}, "notify_command[0]", kAbsolute);
    notify("in_checkout", {"/home/u/Projects/demo-app/notify"}, "notify_command[0]",
           "must lie outside project_dir");
    notify("not_normalised", {"/usr/bin/../bin/curl"}, "notify_command[0]", "\"..\"");
    notify("number_word", {"/usr/bin/curl", 1}, "notify_command[1]", "must be a string");
    notify("empty_word", {"/usr/bin/curl", ""}, "notify_command[1]", "must be 1 to 4096 bytes");
    notify("long_word", {"/usr/bin/curl", std::string(4097, 'x')}, "notify_command[1]",
           "must be 1 to 4096 bytes");
    notify("control_word", {"/usr/bin/curl", "-d\n@-"}, "notify_command[1]",
           "must not contain control characters");
    notify("nul_word", {"/usr/bin/curl", std::string("a\0b", 3)}, "notify_command[1]",
           "must not contain a NUL byte");

    // join_network names.
    for (const char* key : {"network", "agent_container"}) {
        for (const auto& [suffix, value] : std::vector<std::pair<std::string, std::string>>{
                 {"option_like", "-x"}, {"empty", ""}, {"space", "a b"}, {"slash", "a/b"}}) {
            add(with(
                std::string("join_network_") + key + "_" + suffix,
                [key, v = value](Json& j) {
                    j["join_network"] = join_network_object();
                    j["join_network"][key] = v;
                },
                std::string("join_network.") + key, "^[a-zA-Z0-9]"));
        }
    }
    return cases;
}

class ConfigRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(ConfigRule, IsEnforcedWithAMessageNamingTheKey) {
    const RuleCase& c = GetParam();
    Json j = base();
    c.mutate(j);
    auto config = hb::parse_config(text_of(j));
    ASSERT_FALSE(config.ok()) << "accepted: " << text_of(j);
    const std::string& message = config.error().message;
    const std::string prefix =
        c.key.empty() ? std::string("bridge.json: ") : "bridge.json: key \"" + c.key + "\": ";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    EXPECT_NE(message.find(c.why), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(Rules, ConfigRule, ::testing::ValuesIn(rule_cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& param_info) {
                             std::string name = param_info.param.name;
                             for (char& ch : name) {
                                 if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                             }
                             return name;
                         });

// --- text-level rules: syntax and duplicate keys ------------------------

std::string replace_once(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

void expect_error(const std::string& text, const std::string& expected_start) {
    auto config = hb::parse_config(text);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.error().message.rfind(expected_start, 0), 0u) << config.error().message;
}

TEST(ConfigText, DuplicateTopLevelKeyIsRefused) {
    const std::string text = replace_once(base().dump(2), "\"slug\": \"demo-app\"",
                                          "\"slug\": \"demo-app\", \"slug\": \"other\"");
    expect_error(text, "bridge.json: key \"slug\": appears twice");
}

TEST(ConfigText, DuplicateNestedKeyNamesItsPath) {
    const std::string text =
        replace_once(base().dump(2), "\"count\": 20", "\"count\": 20, \"count\": 21");
    expect_error(text, "bridge.json: key \"limits.mutating.count\": appears twice");
}

TEST(ConfigText, DuplicateKeyInsideArrayNamesItsIndex) {
    const std::string text = replace_once(base().dump(2), "\"path\": \"compose.yaml\"",
                                          "\"path\": \"compose.yaml\", \"path\": \"x\"");
    expect_error(text, "bridge.json: key \"tcb[1].path\": appears twice");
}

TEST(ConfigText, SameKeyInDifferentObjectsIsFine) {
    // "count" and "seconds" appear in both windows: only repeats within one
    // object are duplicates.
    EXPECT_TRUE(hb::parse_config(base().dump()).ok());
}

TEST(ConfigText, SyntaxErrorsAreRefused) {
    expect_error("", "bridge.json: not valid JSON");
    expect_error("{", "bridge.json: not valid JSON");
    expect_error(base().dump() + " {}", "bridge.json: not valid JSON");
    expect_error(replace_once(base().dump(2), "\"version\": 1,", "// comment\n\"version\": 1,"),
                 "bridge.json: not valid JSON");
    expect_error(replace_once(base().dump(2), "\"demo-app\"", "\"demo-\xff\""),
                 "bridge.json: not valid JSON");
}

TEST(ConfigText, OversizedTextIsRefused) {
    std::string text = base().dump();
    text.append(hb::kMaxConfigBytes, ' ');
    expect_error(text, "bridge.json: larger than 1 MiB");
}

// --- load_config ---------------------------------------------------------

class LoadConfig : public ::testing::Test {
  protected:
    std::string write(const std::string& name, const std::string& text, mode_t mode = 0644) {
        const std::string path = dir_ + "/" + name;
        hb::test::write_file(path, text, mode);
        return path;
    }

    hb::test::TempDir tmp_{"config"};
    std::string dir_ = tmp_.path();
};

TEST_F(LoadConfig, ReadsARegularFile) {
    const std::string path = write("bridge.json", kArchitectureExample);
    auto config = hb::load_config(path);
    ASSERT_TRUE(config.ok()) << config.error().message;
    EXPECT_EQ(config->slug, "demo-app");
}

TEST_F(LoadConfig, ErrorsNameTheRealFile) {
    Json j = base();
    j["limits"]["mutating"]["count"] = 0;
    const std::string path = write("bridge.json", j.dump());
    auto config = hb::load_config(path);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.error().message,
              path + ": key \"limits.mutating.count\": must be a positive integer");
}

TEST_F(LoadConfig, RefusesASymlink) {
    const std::string target = write("real.json", kArchitectureExample);
    const std::string link = dir_ + "/bridge.json";
    ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
    auto config = hb::load_config(link);
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("symlink"), std::string::npos) << config.error().message;
}

TEST_F(LoadConfig, RefusesAFifoWithoutBlocking) {
    const std::string path = dir_ + "/bridge.json";
    ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
    auto config = hb::load_config(path);  // would hang forever if it opened blocking
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("not a regular file"), std::string::npos)
        << config.error().message;
}

TEST_F(LoadConfig, RefusesADirectory) {
    const std::string path = dir_ + "/bridge.json";
    ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
    auto config = hb::load_config(path);
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("not a regular file"), std::string::npos)
        << config.error().message;
}

TEST_F(LoadConfig, RefusesAFileOverOneMiB) {
    std::string text = kArchitectureExample;
    text.append(hb::kMaxConfigBytes, ' ');
    const std::string path = write("bridge.json", text);
    auto config = hb::load_config(path);
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("larger than 1 MiB"), std::string::npos)
        << config.error().message;
}

TEST_F(LoadConfig, RefusesAWorldWritableFile) {
    const std::string path = write("bridge.json", kArchitectureExample, 0646);
    auto config = hb::load_config(path);
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("world-writable"), std::string::npos)
        << config.error().message;
}

TEST_F(LoadConfig, ReportsAMissingFile) {
    auto config = hb::load_config(dir_ + "/nope.json");
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.error().message.find("cannot open"), std::string::npos)
        << config.error().message;
}

}  // namespace
