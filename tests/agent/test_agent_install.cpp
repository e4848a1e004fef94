// `hostbridge install` drops hostbridge-agent and its tool manifest into the
// spool's bin/, through the pinned spool fd like every other spool file;
// the manifest follows the policy; uninstall takes them away.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "admin/install/agent_manifest.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class AgentInstall : public ::testing::Test {
  protected:
    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
    std::string bin() const { return project.spool() + "/bin"; }
    nlohmann::json manifest() const {
        return nlohmann::json::parse(read_file(bin() + "/hostbridge-agent.json"));
    }
    static std::string verb_mode(const nlohmann::json& m, const std::string& verb) {
        for (const auto& v : m["verbs"])
            if (v["verb"] == verb) return v["mode"];
        return "(absent)";
    }
};

// `log_window` says the executor's logs takes `lines` and `since`: compose
// with podman-compose and `settle`, docker compose through its engine user
// (docs/DOCKER.md), or a stack with `settle` (podman:
// install --stack-project; exec::accepts_log_window), nowhere else.
TEST(AgentManifest, OffersTheLogWindowOnlyWherePodmanSettles) {
    Config config;
    config.slug = "demo-app";
    config.services = {"web"};
    config.backend.argv = {"/home/u/demo-app/stack"};
    const auto log_window = [&config] {
        return nlohmann::json::parse(admin::render_agent_manifest(
            config, common::Policy{}, "untracked/hostbridge"))["log_window"];
    };
    EXPECT_EQ(log_window(), false);  // the stack backend
    config.settle = SettleSettings{"/usr/bin/podman", "demo-app", 30};
    EXPECT_EQ(log_window(), true);  // the stack backend with settle
    config.backend = {BackendKind::Compose,
                      {"/usr/bin/podman-compose"},
                      "/home/u/demo-app/compose.yaml",
                      ComposeFlavour::PodmanCompose};
    EXPECT_EQ(log_window(), true);
    config.backend.flavour = ComposeFlavour::Docker;
    EXPECT_EQ(log_window(), false);  // docker runs only through its engine user
    config.engine =
        EngineIdentity{"hb-demo-app", "/home/hb-demo-app/engine/docker.sock",
                       "/home/u/.local/lib/hostbridge/demo-app/hostbridge-engine-relay"};
    EXPECT_EQ(log_window(), true);
    config.engine.reset();
    config.backend.flavour = ComposeFlavour::PodmanCompose;
    config.settle.reset();
    EXPECT_EQ(log_window(), false);
}

// The manifest (and so the MCP tools and AGENT.md) offers no verb the
// install's engine never runs: on docker compose through its engine user
// not down nor join-network, without one nothing but ping (docs/DOCKER.md).
TEST(AgentManifest, OffersNoVerbTheEngineNeverRuns) {
    Config config;
    config.slug = "demo-app";
    config.services = {"web"};
    config.backend = {BackendKind::Compose,
                      {"/usr/bin/docker-compose"},
                      "/home/u/demo-app/compose.yaml",
                      ComposeFlavour::Docker};
    config.settle = SettleSettings{"/usr/bin/docker", "demo-app", 30};
    config.join_network = JoinNetwork{"/usr/bin/docker", "net", "agent"};
    const auto offered = [&config] {
        const auto manifest = nlohmann::json::parse(
            admin::render_agent_manifest(config, common::Policy{}, "untracked/hostbridge"));
        std::vector<std::string> verbs;
        for (const auto& v : manifest["verbs"]) verbs.push_back(v["verb"]);
        return verbs;
    };
    EXPECT_EQ(offered(), std::vector<std::string>{"ping"});
    config.engine =
        EngineIdentity{"hb-demo-app", "/home/hb-demo-app/engine/docker.sock",
                       "/home/u/.local/lib/hostbridge/demo-app/hostbridge-engine-relay"};
    const std::vector<std::string> docker = offered();
    for (const char* verb : {"ping", "status", "health", "logs", "restart", "up"})
        EXPECT_NE(std::find(docker.begin(), docker.end(), verb), docker.end()) << verb;
    for (const char* verb : {"down", "join-network", "init"})
        EXPECT_EQ(std::find(docker.begin(), docker.end(), verb), docker.end()) << verb;
    config.backend.flavour = ComposeFlavour::PodmanCompose;
    config.engine.reset();
    const std::vector<std::string> podman = offered();
    for (const char* verb : {"down", "join-network"})
        EXPECT_NE(std::find(podman.begin(), podman.end(), verb), podman.end()) << verb;
}

TEST_F(AgentInstall, DropsTheBuiltBinaryAndAManifestOfThisInstall) {
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_EQ(mode_of(bin()), 0755u);
    EXPECT_EQ(mode_of(bin() + "/hostbridge-agent"), 0755u);
    EXPECT_EQ(read_file(bin() + "/hostbridge-agent"),
              read_file(std::string(HB_BIN_DIR) + "/hostbridge-agent"));
    auto m = manifest();
    EXPECT_EQ(m["format"], 1);
    EXPECT_EQ(m["services"], nlohmann::json({"api", "db", "web", "worker"}));
    EXPECT_EQ(m["buildable"], nlohmann::json({"api", "web"}));
    // A stack install without an engine user is seeded so
    // (admin/install/policy_engine_guard.hpp).
    EXPECT_EQ(verb_mode(m, "rebuild"), "ask");
    EXPECT_EQ(verb_mode(m, "up"), "ask");
    EXPECT_EQ(verb_mode(m, "restart"), "auto");
    EXPECT_EQ(m["limits"]["mutating"]["count"], 60);
    EXPECT_EQ(m["ttl_seconds"], 600);
}

TEST_F(AgentInstall, AReinstallAfterAPolicyEditRewritesOnlyTheManifestAndAgentMd) {
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    write_file(home.config_dir("demo-app") + "/policy.conf", "MODE_ping=auto\nMODE_up=deny\n");
    Ran again = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_TRUE(contains(again.out, "hostbridge-agent.json: updated")) << again.out;
    EXPECT_TRUE(contains(again.out, "bin/hostbridge-agent: no change")) << again.out;
    EXPECT_TRUE(contains(again.out, "AGENT.md: updated")) << again.out;
    EXPECT_TRUE(contains(again.out, "2 item(s) changed")) << again.out;
    EXPECT_EQ(verb_mode(manifest(), "up"), "deny");
    // A verb missing from the policy is denied there, and so here.
    EXPECT_EQ(verb_mode(manifest(), "status"), "deny");
    EXPECT_EQ(verb_mode(manifest(), "ping"), "auto");
}

// Dry-run and per-service modes reach the agent's tool list, so it knows
// before it asks which calls will only be answered or refused.
TEST_F(AgentInstall, TheManifestCarriesDryRunAndPerServiceModes) {
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    write_file(home.config_dir("demo-app") + "/policy.conf",
               "MODE_ping=auto\nMODE_down=dry-run\nMODE_restart=auto\nMODE_restart.db=deny\n"
               "MODE_restart.api=auto\n");
    Ran again = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    const nlohmann::json m = manifest();
    EXPECT_EQ(verb_mode(m, "down"), "dry-run");
    EXPECT_EQ(verb_mode(m, "restart"), "auto");
    for (const auto& v : m["verbs"]) {
        if (v["verb"] != "restart") continue;
        // Only where the service's mode differs from the verb's.
        EXPECT_EQ(v["service_modes"], nlohmann::json({{"db", "deny"}})) << v.dump();
    }
    // AGENT.md says the same in words, so the agent stops retrying.
    const std::string doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_TRUE(contains(doc,
                         "Refused by the host's policy: `status`, `health`, `logs`, `up`, "
                         "`rebuild`, `init`, `restart db`."))
        << doc;
    EXPECT_TRUE(contains(doc, "Dry run only: `down`.")) << doc;
}

// Mode ask (a person approves each call on the host) reaches the manifest
// per verb and per service, and AGENT.md lists it apart from refusals: the
// verb is offered, and the agent learns to tell its person, not retry.
TEST_F(AgentInstall, TheManifestAndAgentDocCarryAskModes) {
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    write_file(home.config_dir("demo-app") + "/policy.conf",
               "MODE_ping=auto\nMODE_status=auto\nMODE_health=auto\nMODE_logs=auto\n"
               "MODE_up=ask\nMODE_init=auto\nMODE_down=ask\nMODE_restart=auto\n"
               "MODE_restart.api=ask\nMODE_rebuild=deny\nMODE_rebuild.api=ask\n");
    Ran again = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    const nlohmann::json m = manifest();
    EXPECT_EQ(verb_mode(m, "up"), "ask");
    EXPECT_EQ(verb_mode(m, "down"), "ask");
    EXPECT_EQ(verb_mode(m, "restart"), "auto");
    EXPECT_EQ(verb_mode(m, "rebuild"), "deny");
    for (const auto& v : m["verbs"]) {
        if (v["verb"] != "restart" && v["verb"] != "rebuild") continue;
        EXPECT_EQ(v["service_modes"], nlohmann::json({{"api", "ask"}})) << v.dump();
    }
    const std::string doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_TRUE(contains(doc,
                         "Needs a person's approval on the host: `up`, `down`, `restart api`, "
                         "`rebuild api`."))
        << doc;
    EXPECT_TRUE(contains(doc, "`hostbridge allow NAME`")) << doc;
    EXPECT_TRUE(contains(doc, "Refused by the host's policy: `rebuild`.")) << doc;
    EXPECT_TRUE(contains(doc, "| `pending` |")) << doc;
}

// The agent owns the checkout: a bin/ it swapped for a link is refused and
// nothing is written through it; binaries it swapped for links are
// replaced, never followed.
TEST_F(AgentInstall, ALinkPlantedForBinOrTheBinaryIsNeverWrittenThrough) {
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    const std::string outside = root.path() + "/outside";
    write_file(outside + "/target", "outside\n");
    for (const char* name : {"hostbridge-agent", "hostbridge-agent.json"}) {
        const std::string path = bin() + "/" + name;
        ASSERT_EQ(::unlink(path.c_str()), 0);
        ASSERT_EQ(::symlink((outside + "/target").c_str(), path.c_str()), 0);
    }
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_EQ(read_file(outside + "/target"), "outside\n");
    struct stat st {};
    ASSERT_EQ(::lstat((bin() + "/hostbridge-agent").c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));

    ASSERT_EQ(::system(("rm -rf -- '" + bin() + "'").c_str()), 0);
    ASSERT_EQ(::symlink(outside.c_str(), bin().c_str()), 0);
    Ran refused = home.hostbridge(install_args(project, {"--no-systemd"}));
    EXPECT_NE(refused.code, 0) << refused.out;
    EXPECT_TRUE(contains(refused.out + refused.err, "symlink")) << refused.out << refused.err;
    EXPECT_FALSE(exists(outside + "/hostbridge-agent"));
    EXPECT_FALSE(exists(outside + "/hostbridge-agent.json"));
}

TEST_F(AgentInstall, UninstallRemovesBin) {
    ASSERT_EQ(home.hostbridge(install_args(project, {"--no-systemd"})).code, 0);
    ASSERT_TRUE(exists(bin() + "/hostbridge-agent"));
    Ran run = home.hostbridge({"uninstall", "--slug", "demo-app"});
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_FALSE(exists(bin()));
}

}  // namespace
}  // namespace hb::test
