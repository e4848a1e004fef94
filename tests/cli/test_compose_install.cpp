// install, approve and doctor with the one strict compose reader (issue
// 19): every file a compose tool reads by default is pinned for the stack
// backend; the rendered compose files for the run tree are written, pinned
// and re-rendered by approve from exactly the bytes it shows; what the
// strict reader refuses cannot be approved; doctor checks the rendered
// copies and warns about bind mounts of the checkout.
#include <sys/stat.h>

#include <cctype>

#include <gtest/gtest.h>

#include "admin/compose/compose_render.hpp"
#include "common/sha256.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class ComposeInstall : public ::testing::Test {
  protected:
    Ran install(const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args = {"--no-systemd"};
        args.insert(args.end(), extra.begin(), extra.end());
        return home.hostbridge(install_args(project, args));
    }
    // The compose backend with Debian's podman-compose (the fixture's own
    // install is the stack backend).
    Ran install_with_podman_compose(const std::vector<std::string>& extra = {}) {
        std::vector<std::string> args = {
            "install",       "--project-dir", project.dir,
            "--backend",     "compose",       "--compose-file",
            project.compose, "--compose-cmd", "/usr/bin/podman-compose",
            "--no-systemd"};
        if (::geteuid() == 0) args.push_back("--allow-root");
        args.insert(args.end(), extra.begin(), extra.end());
        return home.hostbridge(args);
    }
    Ran approve() const { return home.hostbridge({"approve", "--slug", "demo-app", "--yes"}); }
    Ran doctor() const { return home.hostbridge({"doctor", "--slug", "demo-app"}); }
    std::string rendered(const std::string& rel) const {
        return home.state_dir("demo-app") + "/rendered/" + rel;
    }
    nlohmann::json pin_of(const std::string& rel) const {
        const nlohmann::json config = home.bridge_json("demo-app");
        for (const auto& pin : config["tcb"]) {
            if (pin["path"] == rel) return pin;
        }
        return nullptr;
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

class DefaultFile : public ComposeInstall, public ::testing::WithParamInterface<std::string> {};

// podman-compose 1.0.3 merges every default file it finds: a planted
// podman-compose.yaml with `privileged: true` ran privileged. Each name is
// pinned, and a planted one is a changed pin the gate and doctor name.
TEST_P(DefaultFile, IsPinnedForTheStackBackendAndAPlantedOneIsNamed) {
    const std::string name = GetParam();
    Ran run = install();
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    nlohmann::json pin = pin_of(name);
    ASSERT_FALSE(pin.is_null()) << name << " is not pinned";
    if (name == "compose.yaml") {
        EXPECT_TRUE(pin["sha256"].is_string());
        write_file(project.dir + "/" + name, read_file(project.compose) +
                                                 "  evil:\n    image: x\n"
                                                 "    privileged: true\n");
    } else {
        EXPECT_TRUE(pin["sha256"].is_null()) << name;
        write_file(project.dir + "/" + name,
                   "services:\n  api:\n    privileged: true\n    volumes: ['/:/host']\n");
    }
    Ran doc = doctor();
    EXPECT_EQ(doc.code, 1) << doc.out;
    EXPECT_TRUE(contains(doc.out, "PROBLEM: trusted file " + name)) << doc.out;
}

std::vector<std::string> default_names() {
    std::vector<std::string> names;
    for (auto name : admin::kComposeDefaultFiles) names.emplace_back(name);
    return names;
}

INSTANTIATE_TEST_SUITE_P(PodmanCompose103AndDockerComposeV2, DefaultFile,
                         ::testing::ValuesIn(default_names()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                             std::string name;
                             for (char c : param.param) {
                                 name +=
                                     (std::isalnum(static_cast<unsigned char>(c)) != 0) ? c : '_';
                             }
                             return name;
                         });

TEST_F(ComposeInstall, WritesRenderedCopiesPinnedInBridgeJson) {
    Ran run = install();
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    const nlohmann::json config = home.bridge_json("demo-app");
    ASSERT_EQ(config["rendered"].size(), 1u) << config.dump();
    EXPECT_EQ(config["rendered"][0]["path"], "compose.yaml");
    const std::string text = read_file(rendered("compose.yaml"));
    EXPECT_EQ(config["rendered"][0]["sha256"], common::sha256_hex(text));
    EXPECT_EQ(mode_of(rendered("compose.yaml")), 0600u);
    EXPECT_EQ(mode_of(home.state_dir("demo-app") + "/rendered"), 0700u);
    EXPECT_EQ(config["checkout_paths"], nlohmann::json({".", "web"}));
    EXPECT_TRUE(contains(text, "build: \"" + project.dir + "\"")) << text;
    EXPECT_TRUE(contains(text, "context: \"" + project.dir + "/web\"")) << text;
    // Again: nothing changes.
    Ran again = install();
    EXPECT_TRUE(contains(again.out, "nothing changed")) << again.out;
}

TEST_F(ComposeInstall, ApproveReRendersFromTheBytesItShowsAndShowsTheRendering) {
    ASSERT_EQ(install().code, 0);
    write_file(project.compose, read_file(project.compose) +
                                    "  cache:\n    image: redis\n"
                                    "    volumes: ['./data:/data']\n"
                                    "    env_file: cache.env\n");
    write_file(project.dir + "/cache.env", "K=V\n");
    Ran run = approve();
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(contains(run.out, "=== rendered/compose.yaml: as rendered for the run tree"))
        << run.out;
    EXPECT_TRUE(has_line(run.out, "+      - \"" + project.dir + "/data:/data\"")) << run.out;
    EXPECT_TRUE(contains(run.out, "=== cache.env: newly pulled in")) << run.out;
    const nlohmann::json config = home.bridge_json("demo-app");
    EXPECT_EQ(config["checkout_paths"], nlohmann::json({".", "data", "web"}));
    EXPECT_EQ(config["rendered"][0]["sha256"],
              common::sha256_hex(read_file(rendered("compose.yaml"))));
    EXPECT_FALSE(pin_of("cache.env").is_null());
    EXPECT_TRUE(contains(read_file(rendered("compose.yaml")), "env_file: \"cache.env\""));
    // Doctor: healthy pins, a warning about the bind mount of the checkout.
    Ran doc = doctor();
    EXPECT_TRUE(contains(doc.out, "rendered compose files match their pins")) << doc.out;
    EXPECT_TRUE(contains(doc.out, "WARNING: service cache bind-mounts data of the checkout"))
        << doc.out;
    EXPECT_TRUE(contains(doc.out, "a named volume")) << doc.out;
}

// With pins (an install by a user other than root, rootless podman: made
// here by hand, as the tests run as root), approve renders a newly bound
// checkout path as its pin and lists it in pins.sources, so a bind added
// later is pinned like those install found.
TEST_F(ComposeInstall, ApproveRendersANewBindSourceAsItsPinWhenTheInstallPins) {
    if (::access("/usr/bin/podman-compose", X_OK) != 0)
        GTEST_SKIP() << "no /usr/bin/podman-compose";
    Ran installed = install_with_podman_compose();
    ASSERT_EQ(installed.code, 0) << installed.out << installed.err;
    nlohmann::json config = home.bridge_json("demo-app");
    ASSERT_EQ(config["backend"]["flavour"], "podman-compose");
    config["pins"] = {{"engine", "/usr/bin/podman"},
                      {"binary", "/usr/lib/hostbridge/hostbridge-pin"},
                      {"sources", nlohmann::json::array()}};
    write_file(home.config_dir("demo-app") + "/bridge.json", config.dump(2) + "\n", 0644);
    write_file(project.compose, read_file(project.compose) +
                                    "  cache:\n    image: redis\n"
                                    "    volumes: ['./data:/data']\n");
    Ran run = approve();
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    const std::string pin = config["run_dir"].get<std::string>() + "/.hostbridge-binds/data";
    EXPECT_TRUE(has_line(run.out, "+      - \"" + pin + ":/data\"")) << run.out;
    const nlohmann::json after = home.bridge_json("demo-app");
    EXPECT_EQ(after["pins"]["sources"], nlohmann::json({"data"}));
    EXPECT_FALSE(contains(read_file(rendered("compose.yaml")), project.dir + "/data"))
        << read_file(rendered("compose.yaml"));
}

// Where install writes `settle` (podman-compose, podman found), the agent
// is told of the verified outcomes and the structured status and health in
// both AGENT.md and the tool manifest; where it does not, of neither.
TEST_F(ComposeInstall, TheAgentIsToldOfVerifiedOutcomesExactlyWhereBridgeJsonHasSettle) {
    if (::access("/usr/bin/podman-compose", X_OK) != 0 || ::access("/usr/bin/podman", X_OK) != 0)
        GTEST_SKIP() << "no /usr/bin/podman-compose or /usr/bin/podman";
    Ran installed = install_with_podman_compose();
    ASSERT_EQ(installed.code, 0) << installed.out << installed.err;
    ASSERT_TRUE(home.bridge_json("demo-app").contains("settle"));
    const auto manifest =
        nlohmann::json::parse(read_file(project.spool() + "/bin/hostbridge-agent.json"));
    EXPECT_EQ(manifest["verified_outcomes"], true);
    // podman-compose with settle: its logs takes lines and since.
    EXPECT_EQ(manifest["log_window"], true);
    const std::string doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_TRUE(contains(doc, "runs each healthcheck once")) << doc;
    EXPECT_TRUE(contains(doc, "until the\nservices they touched settled")) << doc;
    // tests/e2e/build_attacks.sh: a copy caught mid-write is refused.
    EXPECT_TRUE(contains(doc, "Finish your edits\nbefore you ask for a `rebuild`")) << doc;

    Ran plain = install();  // the fixture's stand-in compose command: no settle
    ASSERT_EQ(plain.code, 0) << plain.out << plain.err;
    ASSERT_FALSE(home.bridge_json("demo-app").contains("settle"));
    const auto plain_manifest =
        nlohmann::json::parse(read_file(project.spool() + "/bin/hostbridge-agent.json"));
    EXPECT_EQ(plain_manifest["verified_outcomes"], false);
    EXPECT_EQ(plain_manifest["log_window"], false);
    EXPECT_FALSE(contains(read_file(project.spool() + "/AGENT.md"), "settled"));
}

// Issue 44 item 3: the compose project name is the checkout's own (the
// basename and a hash of its path, admin/compose/build_plan.hpp), never what a
// hand-run podman-compose derives. An install that recorded another keeps it,
// printing the steps, until --rename-project (docs/COMPOSE.md, "The project's
// name").
TEST_F(ComposeInstall, TheProjectNameIsTheCheckoutsOwnAndAnOlderOneIsKeptUntilRenamed) {
    if (::access("/usr/bin/podman-compose", X_OK) != 0 || ::access("/usr/bin/podman", X_OK) != 0)
        GTEST_SKIP() << "no /usr/bin/podman-compose or /usr/bin/podman";
    Ran installed = install_with_podman_compose();
    ASSERT_EQ(installed.code, 0) << installed.out << installed.err;
    nlohmann::json config = home.bridge_json("demo-app");
    const std::string own =
        "demo-app_hb" + common::sha256_hex(config["project_dir"].get<std::string>()).substr(0, 8);
    EXPECT_EQ(config["settle"]["project"], own) << config;
    if (config.contains("build")) {
        EXPECT_EQ(config["build"]["project"], own);
        for (const auto& s : config["build"]["services"]) {
            EXPECT_EQ(s["container"], own + "_" + s["service"].get<std::string>() + "_1");
        }
    }
    EXPECT_TRUE(contains(installed.out, "-p " + own)) << installed.out;

    // An install from before: bridge.json names the project as podman-compose
    // does by hand. Upgrade (install again) keeps it and says how to move.
    config["settle"]["project"] = "demo-app";
    if (config.contains("build")) config["build"]["project"] = "demo-app";
    write_file(home.config_dir("demo-app") + "/bridge.json", config.dump(2) + "\n", 0644);
    Ran again = install_with_podman_compose();
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_EQ(home.bridge_json("demo-app")["settle"]["project"], "demo-app");
    EXPECT_TRUE(contains(again.err, "keeps the compose project name demo-app")) << again.err;
    EXPECT_TRUE(contains(again.out, "-p demo-app -f")) << again.out;
    EXPECT_TRUE(contains(again.out, "--rename-project")) << again.out;
    Ran checked = doctor();
    EXPECT_TRUE(contains(
        checked.out, "the compose project name demo-app is not this checkout's own (" + own + ")"))
        << checked.out;

    Ran renamed = install_with_podman_compose({"--rename-project"});
    ASSERT_EQ(renamed.code, 0) << renamed.out << renamed.err;
    EXPECT_EQ(home.bridge_json("demo-app")["settle"]["project"], own);
    EXPECT_FALSE(contains(doctor().out, "is not this checkout's own"));
    // Not recorded: once moved, the recorded name is the install's own.
    EXPECT_FALSE(
        contains(read_file(home.config_dir("demo-app") + "/install.json"), "rename-project"));
}

// docker's daemon (and podman as root) resolve a bind source by path at
// every container start, where the agent can swap it for a link: a bind
// below the checkout root is refused until the person accepts it by name;
// the root itself holds. Kept across upgrade; approve refuses a new one.
TEST_F(ComposeInstall, AnUnpinnedBindBelowTheRootIsRefusedUntilAcceptedByName) {
    write_file(project.compose, read_file(project.compose) +
                                    "  cache:\n    image: redis\n"
                                    "    volumes: ['./data:/data', '.:/app']\n");
    // /bin/true is no compose CLI install knows: the docker flavour.
    std::vector<std::string> args = {"install",       "--project-dir", project.dir,
                                     "--compose-cmd", "/bin/true",     "--no-systemd"};
    if (::geteuid() == 0) args.push_back("--allow-root");
    Ran refused = home.hostbridge(args);
    EXPECT_EQ(refused.code, 1) << refused.out;
    EXPECT_TRUE(contains(refused.err, "compose.yaml line ")) << refused.err;
    EXPECT_TRUE(contains(refused.err,
                         "service cache bind-mounts data of the checkout, and "
                         "docker's daemon resolves that path itself"))
        << refused.err;
    EXPECT_TRUE(contains(refused.err, "--unpinned-bind data")) << refused.err;
    EXPECT_FALSE(exists(home.config_dir("demo-app") + "/bridge.json"));

    args.insert(args.end(), {"--unpinned-bind", "data"});
    Ran accepted = home.hostbridge(args);
    ASSERT_EQ(accepted.code, 0) << accepted.out << accepted.err;
    EXPECT_TRUE(contains(accepted.out, "bind source data is accepted unpinned")) << accepted.out;
    EXPECT_EQ(home.bridge_json("demo-app")["unpinned_binds"], nlohmann::json({"data"}));
    // restart starts the container again from that path, as the person:
    // seeded ask like up and rebuild (common/engine_hold.cpp).
    EXPECT_TRUE(
        has_line(read_file(home.config_dir("demo-app") + "/policy.conf"), "MODE_restart=ask"))
        << read_file(home.config_dir("demo-app") + "/policy.conf");
    EXPECT_TRUE(contains(accepted.out, "while restart starts a container again")) << accepted.out;
    Ran upgraded = home.hostbridge({"upgrade"});
    ASSERT_EQ(upgraded.code, 0) << upgraded.out << upgraded.err;
    EXPECT_EQ(home.bridge_json("demo-app")["unpinned_binds"], nlohmann::json({"data"}));

    write_file(project.compose,
               read_file(project.compose) + "  more:\n    image: x\n    volumes: ['./src:/src']\n");
    const std::string before = home.bridge_json("demo-app").dump();
    Ran approved = approve();
    EXPECT_EQ(approved.code, 1) << approved.out;
    EXPECT_TRUE(contains(approved.err, "service more bind-mounts src of the checkout"))
        << approved.err;
    EXPECT_EQ(home.bridge_json("demo-app").dump(), before);
}

TEST_F(ComposeInstall, WhatTheStrictReaderRefusesCannotBeApproved) {
    ASSERT_EQ(install().code, 0);
    const std::string before = home.bridge_json("demo-app").dump();
    const std::string original = read_file(project.compose);
    const std::vector<std::pair<std::string, std::string>> attacks = {
        {"  evil:\n    extends: {file: base.yaml, service: b}\n"
         "    extends: {file: evil.yaml, service: b}\n",
         "appears twice"},
        {"  evil:\n    extends:\n      file: base${UNSET}.yaml\n      service: b\n",
         "interpolation"},
        {"  evil:\n    extends:\n      file: /proc/self/root" + project.dir +
             "/base.yaml\n      service: b\n",
         "same device and inode"},
    };
    write_file(project.dir + "/base.yaml", "services:\n  b:\n    image: x\n");
    for (const auto& [text, why] : attacks) {
        write_file(project.compose, original + text);
        Ran run = approve();
        EXPECT_EQ(run.code, 1) << text << run.out;
        EXPECT_TRUE(contains(run.err, why)) << run.err;
        EXPECT_TRUE(contains(run.err, "compose.yaml line ")) << run.err;
        EXPECT_EQ(home.bridge_json("demo-app").dump(), before);
    }
}

TEST_F(ComposeInstall, AMergeKeyBombEndsApproveWithAnError) {
    ASSERT_EQ(install().code, 0);
    std::string text = "l0: &l0 {a: 1}\n";
    for (int level = 1; level <= 8; ++level) {
        text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + "\n";
        for (int i = 0; i < 12; ++i) {
            text += "  k" + std::to_string(i) + ":\n    <<: *l" + std::to_string(level - 1) + "\n";
        }
    }
    write_file(project.compose, text + "services:\n  api:\n    <<: *l8\n    image: x\n");
    Ran run = approve();
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "expand to more than")) << run.err;
}

TEST_F(ComposeInstall, InstallRefusesTheCheckoutUnderAnotherName) {
    write_file(project.dir + "/base.yaml", "services:\n  b:\n    image: x\n");
    write_file(project.compose, "services:\n  a:\n    extends:\n      file: /proc/self/root" +
                                    project.dir + "/base.yaml\n      service: b\n");
    Ran run = install();
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "same device and inode")) << run.err;
    EXPECT_FALSE(contains(run.out, "lies outside the project")) << run.out;
}

// No service builds: install records no build settings, and doctor has
// no rebuild to warn about (it once called such an install "older than
// snapshot builds" and sent the person to `upgrade`, which changes nothing).
TEST_F(ComposeInstall, DoctorSaysNothingOfBuildsWhenNoServiceBuilds) {
    write_file(project.compose, "services:\n  api:\n    image: busybox\n");
    ASSERT_EQ(install().code, 0);
    EXPECT_FALSE(home.bridge_json("demo-app").contains("build"));
    Ran doc = doctor();
    EXPECT_FALSE(contains(doc.out, "snapshot builds")) << doc.out;
    EXPECT_FALSE(contains(doc.out, "builder:")) << doc.out;
}

TEST_F(ComposeInstall, DoctorNamesATamperedRenderedCopy) {
    ASSERT_EQ(install().code, 0);
    write_file(rendered("compose.yaml"), "services:\n  api:\n    privileged: true\n", 0600);
    Ran doc = doctor();
    EXPECT_EQ(doc.code, 1);
    EXPECT_TRUE(contains(doc.out, "PROBLEM: the rendered copy of compose.yaml")) << doc.out;
    // Install writes it again.
    ASSERT_EQ(install().code, 0);
    EXPECT_EQ(doctor().code, 0) << doctor().out;
}

}  // namespace
}  // namespace hb::test
