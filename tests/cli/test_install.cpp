// `hostbridge install` in a temporary home: every point of docs/COMMANDS.md "install"
// and issue 5 item 1, against real git work trees and a recording stack.
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class Install : public ::testing::Test {
  protected:
    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(Install, FirstRunCreatesEverythingAndSecondRunChangesNothing) {
    Ran first = home.hostbridge(install_args(project));
    ASSERT_EQ(first.code, 0) << first.out << first.err;
    EXPECT_TRUE(contains(first.out, "bridge.json: created"));
    EXPECT_TRUE(contains(first.out, "policy.conf: seeded"));

    // An edited policy survives every later install.
    const std::string policy = home.config_dir("demo-app") + "/policy.conf";
    write_file(policy, "MODE_ping=auto\nMODE_up=deny\n");

    Ran second = home.hostbridge(install_args(project));
    ASSERT_EQ(second.code, 0) << second.out << second.err;
    // The agent's tool manifest and AGENT.md follow the policy (tests/agent);
    // nothing else changes.
    EXPECT_TRUE(contains(second.out, "2 item(s) changed")) << second.out;
    // Every other item line says "no change".
    int items = 0;
    for (const auto& line : split_lines(second.out)) {
        if (line.rfind("  ", 0) != 0 || line.rfind("    ", 0) == 0) continue;
        ++items;
        if (line.ends_with("/bin/hostbridge-agent.json: updated")) continue;
        if (line.ends_with("/AGENT.md: updated")) continue;
        EXPECT_TRUE(line.ends_with(": no change")) << line;
    }
    EXPECT_GE(items, 10);
    EXPECT_EQ(read_file(policy), "MODE_ping=auto\nMODE_up=deny\n");
}

// Issue 27, item 0: until builds run from host-owned snapshots, a build
// reads the agent's Containerfile as the host user (SECURITY.md, "What is
// not defended"), so up and rebuild are held for a person.
// A stack install without an engine user: its `start` runs as the person,
// its build is its own command, whose base images the bridge cannot check
// (admin/install/policy_engine_guard.hpp; the compose installs are
// PolicyEngineGuard.* and tests/e2e/bind_pin_attack.sh's).
TEST_F(Install, SeedsUpAndRebuildAsAskAndSaysWhy) {
    Ran run = home.hostbridge(install_args(project));
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(contains(
        run.out, "policy.conf: seeded (every verb auto but up, rebuild, down and init: ask)"))
        << run.out;
    EXPECT_TRUE(contains(run.out,
                         "rebuild is held for a person (ask): a stack builds with its "
                         "own command"))
        << run.out;
    EXPECT_TRUE(contains(run.out, "up is held for a person (ask): the engine runs as you"))
        << run.out;
    const std::string text = read_file(home.config_dir("demo-app") + "/policy.conf");
    EXPECT_TRUE(has_line(text, "MODE_up=ask")) << text;
    EXPECT_TRUE(has_line(text, "MODE_rebuild=ask")) << text;
    EXPECT_TRUE(has_line(text, "MODE_restart=auto")) << text;
    // What stops or destroys the application waits for a person too.
    EXPECT_TRUE(has_line(text, "MODE_down=ask")) << text;
    EXPECT_TRUE(has_line(text, "MODE_init=ask")) << text;
}

TEST_F(Install, AReinstallOrUpgradeTurnsAutoUpAndRebuildIntoAsk) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    const std::string policy = home.config_dir("demo-app") + "/policy.conf";
    const std::string mine =
        "# mine\nMODE_ping=auto\nMODE_up=auto\nMODE_rebuild.api=auto\n  MODE_rebuild=auto \n"
        "MODE_rebuild.web=deny\nMODE_restart=auto\n# MODE_up=auto stays a comment\nMODE_down=ask";
    write_file(policy, mine);
    Ran again = home.hostbridge(install_args(project));
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_TRUE(contains(
        again.out, "policy.conf: MODE_up, MODE_rebuild.api, MODE_rebuild changed from auto to ask"))
        << again.out;
    EXPECT_TRUE(contains(again.out, "a stack builds with its own command")) << again.out;
    EXPECT_EQ(read_file(policy),
              "# mine\nMODE_ping=auto\nMODE_up=ask\nMODE_rebuild.api=ask\nMODE_rebuild=ask\n"
              "MODE_rebuild.web=deny\nMODE_restart=auto\n# MODE_up=auto stays a comment\n"
              "MODE_down=ask");
    // Nothing left to change: a third run leaves the file alone.
    Ran third = home.hostbridge(install_args(project));
    ASSERT_EQ(third.code, 0) << third.err;
    EXPECT_TRUE(contains(third.out, "policy.conf: no change")) << third.out;
}

TEST_F(Install, WritesBridgeJsonWithAbsolutePathsAndComposeServices) {
    Ran run = home.hostbridge(install_args(project));
    ASSERT_EQ(run.code, 0) << run.err;
    auto config = home.bridge_json("demo-app");
    EXPECT_EQ(config["slug"], "demo-app");
    EXPECT_EQ(config["project_dir"], project.dir);
    EXPECT_EQ(config["spool_dir"], project.spool());
    EXPECT_EQ(config["state_dir"], home.state_dir("demo-app"));
    EXPECT_EQ(config["policy_file"], home.config_dir("demo-app") + "/policy.conf");
    EXPECT_EQ(config["parser"], home.lib_dir("demo-app") + "/hostbridge-parser");
    EXPECT_EQ(config["backend"]["kind"], "stack");
    EXPECT_EQ(config["backend"]["argv"], nlohmann::json::array({project.stack}));
    EXPECT_EQ(config["services"], nlohmann::json::array({"api", "db", "web", "worker"}));
    EXPECT_EQ(config["buildable"], nlohmann::json::array({"api", "web"}));
    EXPECT_EQ(config["systemd"]["systemd_run"], "/usr/bin/systemd-run");
    EXPECT_EQ(config["limits"]["mutating"]["count"], 60);
    EXPECT_EQ(config["timeouts"]["rebuild"], 1200);
}

TEST_F(Install, ServicesAndBuildableCanBeGivenExplicitly) {
    Ran run =
        home.hostbridge(install_args(project, {"--services", "web,api", "--buildable", "web"}));
    ASSERT_EQ(run.code, 0) << run.err;
    auto config = home.bridge_json("demo-app");
    EXPECT_EQ(config["services"], nlohmann::json::array({"api", "web"}));
    EXPECT_EQ(config["buildable"], nlohmann::json::array({"web"}));

    Ran bad = home.hostbridge(install_args(project, {"--services", "web", "--buildable", "api"}));
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(contains(bad.err, "--buildable names api")) << bad.err;
}

// The stack backend's snapshot builds (docs/BUILDS.md, "The stack backend").
TEST_F(Install, AStackRecordsTheBuildContextsItIsGivenAndRefusesBadOnes) {
    Ran run = home.hostbridge(install_args(
        project, {"--build-context", "web=./", "--containerfile", "web=services//web/Containerfile",
                  "--build-context", "api=services/api"}));
    ASSERT_EQ(run.code, 0) << run.err;
    const auto build = home.bridge_json("demo-app")["build"];
    EXPECT_EQ(build["services"], nlohmann::json::parse(R"([
                  {"service": "api", "context": "services/api", "containerfile": "Containerfile"},
                  {"service": "web", "context": ".", "containerfile": "services/web/Containerfile"}
              ])"))
        << build;
    EXPECT_FALSE(build.contains("engine")) << build;
    // doctor's re-install command carries them (install.json).
    const std::string record = read_file(home.config_dir("demo-app") + "/install.json");
    EXPECT_TRUE(contains(record, "web=services/web/Containerfile")) << record;

    Ran not_buildable = home.hostbridge(install_args(project, {"--build-context", "db=."}));
    EXPECT_EQ(not_buildable.code, 1);
    EXPECT_TRUE(contains(not_buildable.err, "db, which is not a buildable service"))
        << not_buildable.err;
    Ran climbs = home.hostbridge(install_args(project, {"--build-context", "web=../other"}));
    EXPECT_EQ(climbs.code, 2);
    EXPECT_TRUE(contains(climbs.err, "must be relative, stay inside")) << climbs.err;
    Ran alone = home.hostbridge(install_args(project, {"--containerfile", "web=Containerfile"}));
    EXPECT_EQ(alone.code, 2);
    EXPECT_TRUE(contains(alone.err, "no --build-context for web")) << alone.err;
    Ran preprocessed = home.hostbridge(install_args(
        project, {"--build-context", "web=.", "--containerfile", "web=Containerfile.in"}));
    EXPECT_EQ(preprocessed.code, 2);
    Ran compose = home.hostbridge({"install", "--project-dir", project.dir, "--backend", "compose",
                                   "--compose-file", "compose.yaml", "--build-context", "web=.",
                                   "--no-systemd"});
    EXPECT_EQ(compose.code, 2);
    EXPECT_TRUE(contains(compose.err, "--build-context is for the stack backend")) << compose.err;
}

// What a build may name (docs/BUILDS.md, "What a build may name"):
// --base-image is recorded canonical and shown; a Containerfile naming an
// image no build may is pointed out; an upgrade of an install older than
// the list takes none from its Containerfiles (the agent's) and names each
// with the option that lists it; doctor shows the list.
TEST_F(Install, RecordsBaseImagesAndAnUpgradeTakesNoneFromTheContainerfiles) {
    write_file(project.dir + "/services/web/Containerfile",
               "FROM docker.io/library/alpine:3.20 AS base\nFROM base\n"
               "COPY --from=localhost/tools:1 /t /t\nCOPY --from=0 /a /a\n");
    write_file(project.dir + "/services/api/Containerfile", "FROM scratch\nCOPY a /a\n");
    const std::vector<std::string> extra = {"--build-context", "web=services/web",
                                            "--build-context", "api=services/api",
                                            "--base-image",    "alpine:3.20"};
    Ran run = home.hostbridge(install_args(project, extra));
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    auto build = home.bridge_json("demo-app")["build"];
    EXPECT_EQ(build["base_images"], nlohmann::json::parse(R"(["alpine:3.20"])")) << build;
    EXPECT_TRUE(contains(run.out, "base images a build may name: alpine:3.20\n")) << run.out;
    EXPECT_TRUE(contains(run.err,
                         "a Containerfile names localhost/tools:1, which no build may "
                         "name"))
        << run.err;
    const std::string record = read_file(home.config_dir("demo-app") + "/install.json");
    EXPECT_TRUE(contains(record, "\"--base-image\"") && contains(record, "\"alpine:3.20\""))
        << record;

    // An install older than the list: bridge.json without build.base_images.
    const std::string config = home.config_dir("demo-app") + "/bridge.json";
    auto older = home.bridge_json("demo-app");
    older["build"].erase("base_images");
    write_file(config, older.dump(2) + "\n");
    Ran upgrade = home.hostbridge({"upgrade", "--slug", "demo-app"});
    ASSERT_EQ(upgrade.code, 0) << upgrade.out << upgrade.err;
    build = home.bridge_json("demo-app")["build"];
    // Nothing is taken from the Containerfiles, which the agent writes: an
    // agent that planted `FROM localhost/tools:1` before the upgrade would
    // otherwise choose an image of the person's its builds may read. The
    // upgrade says so and names the image with the option that lists it.
    EXPECT_EQ(build["base_images"], nlohmann::json::parse(R"(["alpine:3.20"])")) << build;
    EXPECT_TRUE(contains(upgrade.out, "none is taken from its Containerfiles")) << upgrade.out;
    EXPECT_TRUE(
        contains(upgrade.err, "a Containerfile names localhost/tools:1, which no build may name"))
        << upgrade.err;
    EXPECT_TRUE(contains(upgrade.err, "--base-image localhost/tools:1")) << upgrade.err;

    // Kept by the next install, and shown by doctor.
    Ran again = home.hostbridge(install_args(project, extra));
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_EQ(home.bridge_json("demo-app")["build"]["base_images"], build["base_images"]);
    EXPECT_FALSE(contains(again.out, "none is taken")) << again.out;
    Ran doctor = home.hostbridge({"doctor", "--slug", "demo-app"});
    EXPECT_TRUE(contains(doctor.out, "images): alpine:3.20\n")) << doctor.out;

    // Taken off by a drop, in another spelling; a drop and an add of one
    // image together are refused.
    std::vector<std::string> drop = {"--build-context",   "web=services/web",
                                     "--build-context",   "api=services/api",
                                     "--drop-base-image", "docker.io/library/alpine:3.20"};
    Ran dropped = home.hostbridge(install_args(project, drop));
    ASSERT_EQ(dropped.code, 0) << dropped.out << dropped.err;
    EXPECT_EQ(home.bridge_json("demo-app")["build"]["base_images"], nlohmann::json::array());
    EXPECT_TRUE(contains(dropped.out, "base image taken off the list: alpine:3.20\n"))
        << dropped.out;
    drop.insert(drop.end(), {"--base-image", "alpine:3.20"});
    Ran both = home.hostbridge(install_args(project, drop));
    EXPECT_EQ(both.code, 2);
    EXPECT_TRUE(contains(both.err, "choose one")) << both.err;

    Ran bad = home.hostbridge(install_args(project, {"--base-image", "cafe"}));
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(contains(bad.err, "--base-image cafe: not an image reference")) << bad.err;
}

// A stack labelling its containers as compose does (docs/COMPOSE.md, "A
// stack's services"): --stack-project writes `settle` with the podman on
// PATH, the agent is told of verified outcomes, and a re-install keeps it.
TEST_F(Install, AStackProjectWritesSettleWithPodmanAndTellsTheAgent) {
    const std::string bin = home.home + "/bin";
    write_file(bin + "/podman", "#!/bin/sh\nexit 0\n", 0755);
    const std::vector<std::string> env = {"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin"};
    Ran run = home.hostbridge(install_args(project, {"--stack-project", "demo-app"}), "", env);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    const auto config = home.bridge_json("demo-app");
    EXPECT_EQ(
        config["settle"],
        nlohmann::json({{"engine", bin + "/podman"}, {"project", "demo-app"}, {"seconds", 30}}))
        << config;
    const auto manifest =
        nlohmann::json::parse(read_file(project.spool() + "/bin/hostbridge-agent.json"));
    EXPECT_EQ(manifest["verified_outcomes"], true);
    EXPECT_EQ(manifest["log_window"], true);
    const std::string doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_TRUE(contains(doc, "the project's own status text, then each service's")) << doc;
    EXPECT_TRUE(contains(doc, "until the\nservices they touched settled")) << doc;
    const std::string record = read_file(home.config_dir("demo-app") + "/install.json");
    // install.json's reinstall argv, one word per line.
    EXPECT_TRUE(contains(record, "\"--stack-project\",\n    \"demo-app\",")) << record;

    // Without it, no settle: the script's exit code alone, as before.
    Ran plain = home.hostbridge(install_args(project), "", env);
    ASSERT_EQ(plain.code, 0) << plain.err;
    EXPECT_FALSE(home.bridge_json("demo-app").contains("settle"));
    EXPECT_FALSE(contains(read_file(project.spool() + "/AGENT.md"), "settled"));

    Ran bad = home.hostbridge(install_args(project, {"--stack-project", "Demo App"}), "", env);
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(contains(bad.err, "--stack-project Demo App must match")) << bad.err;
    Ran compose =
        home.hostbridge({"install", "--project-dir", project.dir, "--backend", "compose",
                         "--compose-file", "compose.yaml", "--stack-project", "x", "--no-systemd"});
    EXPECT_EQ(compose.code, 2);
    EXPECT_TRUE(contains(compose.err, "--stack-project is for the stack backend")) << compose.err;
}

// The engine as its own identity (docs/ENGINE-USER.md): --engine-user
// records the user and its socket, says the socket is not there yet, and is
// kept by a re-install; root and unknown users are refused. `nobody` is the
// one other account every Debian host has.
TEST_F(Install, AnEngineUserIsRecordedWithItsSocketAndRootIsRefused) {
    Ran run = home.hostbridge(install_args(project, {"--engine-user", "nobody"}));
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_EQ(home.bridge_json("demo-app")["engine"],
              nlohmann::json({{"user", "nobody"},
                              {"socket", "/nonexistent/engine/podman.sock"},
                              {"relay", home.lib_dir("demo-app") + "/hostbridge-engine-relay"}}));
    EXPECT_TRUE(contains(run.out,
                         "note: nobody's engine socket /nonexistent/engine/podman.sock "
                         "is not there for you yet"))
        << run.out;
    const std::string record = read_file(home.config_dir("demo-app") + "/install.json");
    EXPECT_TRUE(contains(record, "\"--engine-user\",\n    \"nobody\",")) << record;

    Ran as_root = home.hostbridge(install_args(project, {"--engine-user", "root"}));
    EXPECT_EQ(as_root.code, 1);
    EXPECT_TRUE(contains(as_root.err, "root is root: the engine user must own nothing of yours"))
        << as_root.err;
    Ran unknown = home.hostbridge(install_args(project, {"--engine-user", "hb-no-such-user"}));
    EXPECT_EQ(unknown.code, 1);
    EXPECT_TRUE(contains(unknown.err, "no user hb-no-such-user on this host")) << unknown.err;
    Ran bad = home.hostbridge(install_args(project, {"--engine-user", "Bad Name"}));
    EXPECT_EQ(bad.code, 2);
    EXPECT_TRUE(contains(bad.err, "--engine-user Bad Name must be a login name")) << bad.err;
    // The failed runs changed nothing; a run without it goes back to the
    // person's own engine.
    EXPECT_EQ(home.bridge_json("demo-app")["engine"]["user"], "nobody");
    Ran plain = home.hostbridge(install_args(project));
    ASSERT_EQ(plain.code, 0) << plain.err;
    EXPECT_FALSE(home.bridge_json("demo-app").contains("engine"));

    // Only root removes the user: uninstall says how.
    ASSERT_EQ(home.hostbridge(install_args(project, {"--engine-user", "nobody"})).code, 0);
    Ran gone = home.hostbridge({"uninstall", "--slug", "demo-app"});
    ASSERT_EQ(gone.code, 0) << gone.out << gone.err;
    EXPECT_TRUE(contains(gone.out,
                         "kept the engine user nobody with the project's images, "
                         "containers and volumes; remove it:\nsudo "))
        << gone.out;
    EXPECT_TRUE(contains(gone.out, "/hostbridge engine remove --slug demo-app --user "))
        << gone.out;
    EXPECT_TRUE(contains(gone.out, " --name nobody\n")) << gone.out;
}

TEST_F(Install, RefusesADirectoryThatIsNotTheTopOfAGitWorkTree) {
    write_file(project.dir + "/sub/keep", "");
    Ran sub = home.hostbridge({"install", "--project-dir", project.dir + "/sub", "--stack-bin",
                               project.stack, "--no-systemd"});
    EXPECT_EQ(sub.code, 1);
    EXPECT_TRUE(contains(sub.err, "is not the top of its git work tree")) << sub.err;
    EXPECT_FALSE(exists(home.config_dir("sub")));

    write_file(root.path() + "/nogit/stack", "#!/bin/sh\n", 0755);
    Ran nogit = home.hostbridge({"install", "--project-dir", root.path() + "/nogit", "--stack-bin",
                                 root.path() + "/nogit/stack", "--services", "api"});
    EXPECT_EQ(nogit.code, 1);
    EXPECT_TRUE(contains(nogit.err, "is not in a git work tree")) << nogit.err;
}

TEST_F(Install, CreatesTheSpoolAndMakesGitIgnoreIt) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    for (const char* sub :
         {"tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"}) {
        EXPECT_EQ(mode_of(project.spool() + "/" + sub), 0755u) << sub;
    }
    EXPECT_TRUE(has_line(read_file(project.dir + "/.git/info/exclude"), "/untracked/hostbridge/"));
    // git itself agrees.
    Ran status = home.hostbridge({"doctor", "--slug", "demo-app"});
    EXPECT_TRUE(contains(status.out, "ok:      spool ignored by git")) << status.out;
}

TEST_F(Install, LeavesGitExcludeAloneWhenTheSpoolIsAlreadyIgnored) {
    write_file(project.dir + "/.gitignore", "/untracked/\n");
    const std::string before = read_file(project.dir + "/.git/info/exclude");
    Ran run = home.hostbridge(install_args(project));
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(contains(run.out, "spool ignored by git: no change"));
    EXPECT_EQ(read_file(project.dir + "/.git/info/exclude"), before);
}

TEST_F(Install, AgentGidMakesTmpAndRequestsGroupWritable) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the dirs to an arbitrary group";
    Ran run = home.hostbridge(install_args(project, {"--agent-gid", "54321"}));
    ASSERT_EQ(run.code, 0) << run.err;
    for (const char* sub : {"tmp", "requests"}) {
        struct stat st {};
        ASSERT_EQ(::lstat((project.spool() + "/" + sub).c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 02770u) << sub;
        EXPECT_EQ(st.st_gid, 54321u) << sub;
    }
    EXPECT_EQ(mode_of(project.spool() + "/responses"), 0755u);
    EXPECT_EQ(home.bridge_json("demo-app")["agent_gid"], 54321);
}

TEST_F(Install, RefusesASymlinkInTheSpoolPath) {
    write_file(root.path() + "/elsewhere/keep", "");
    ASSERT_EQ(::symlink((root.path() + "/elsewhere").c_str(), (project.dir + "/untracked").c_str()),
              0);
    Ran run = home.hostbridge(install_args(project));
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, project.dir + "/untracked is a symlink")) << run.err;
    EXPECT_FALSE(exists(root.path() + "/elsewhere/hostbridge"));
}

TEST_F(Install, PinsTheTrustedFilesAndKeepsApprovedCopies) {
    write_file(project.dir + "/base.yaml", "services:\n  base:\n    build: .\n");
    write_file(project.dir + "/proxy/Caddyfile", "example.com\n");
    write_file(project.compose,
               read_file(project.compose) +
                   "  extra:\n    extends:\n      file: base.yaml\n      service: base\n"
                   "    env_file: [app.env]\n");
    write_file(project.dir + "/app.env", "A=1\n");
    Ran run = home.hostbridge(install_args(project, {"--tcb", "proxy/Caddyfile"}));
    ASSERT_EQ(run.code, 0) << run.err;
    auto config = home.bridge_json("demo-app");
    std::map<std::string, nlohmann::json> pins;
    for (const auto& pin : config["tcb"]) pins[pin["path"]] = pin["sha256"];
    for (const char* rel : {"stack", "compose.yaml", "base.yaml", "app.env", "proxy/Caddyfile"}) {
        ASSERT_TRUE(pins.count(rel)) << rel;
        EXPECT_TRUE(pins[rel].is_string()) << rel;
        EXPECT_EQ(read_file(home.state_dir("demo-app") + "/approved/" + rel),
                  read_file(project.dir + "/" + rel))
            << rel;
    }
    ASSERT_TRUE(pins.count(".env"));
    EXPECT_TRUE(pins[".env"].is_null()) << "an absent .env is pinned as absent";
    // extends a buildable service: buildable too.
    EXPECT_EQ(config["buildable"], nlohmann::json::array({"api", "extra", "web"}));
}

// Commands run from the run tree, which holds pinned files only
// (executor/run_tree.hpp): install names a file of the project that the
// stack script reads but nobody pinned (engines/stack/install.hpp), and is quiet
// once it is pinned.
TEST_F(Install, WarnsAboutAProjectFileTheStackNamesButNobodyPinned) {
    write_file(project.stack, read_file(project.stack) +
                                  "here=$(dirname \"$0\")\n"
                                  "export CONTAINERS_CONF=\"$here/containers.conf\"\n");
    ASSERT_EQ(::chmod(project.stack.c_str(), 0755), 0);
    write_file(project.dir + "/containers.conf", "[engine]\n");
    Ran run = home.hostbridge(install_args(project));
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(contains(run.err, "the stack script names containers.conf")) << run.err;
    EXPECT_TRUE(contains(run.err, "--tcb containers.conf")) << run.err;
    Ran pinned = home.hostbridge(install_args(project, {"--tcb", "containers.conf"}));
    ASSERT_EQ(pinned.code, 0) << pinned.err;
    EXPECT_FALSE(contains(pinned.err, "the stack script names")) << pinned.err;
}

TEST_F(Install, RefusesATcbFileOutsideTheProject) {
    write_file(root.path() + "/outside.conf", "x\n");
    Ran run = home.hostbridge(install_args(project, {"--tcb", root.path() + "/outside.conf"}));
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "is not inside the project directory")) << run.err;
    Ran relative = home.hostbridge(install_args(project, {"--tcb", "../outside.conf"}));
    EXPECT_EQ(relative.code, 1);
    EXPECT_FALSE(exists(home.config_dir("demo-app") + "/bridge.json"));
}

TEST_F(Install, RefusesASymlinkedTrustedFile) {
    write_file(project.dir + "/real.env", "A=1\n");
    ASSERT_EQ(::symlink("real.env", (project.dir + "/.env").c_str()), 0);
    Ran run = home.hostbridge(install_args(project));
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, project.dir + "/.env is a symlink")) << run.err;
}

// audit_budget and notify_command have no option: a re-install (and so
// `upgrade`) keeps what the person set by hand.
TEST_F(Install, ReInstallKeepsAnAuditBudgetAndANotifyCommandSetByHand) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    nlohmann::json config = home.bridge_json("demo-app");
    config["audit_budget"] = {{"bytes", 4096}, {"seconds", 60}};
    const nlohmann::json notify = {"/usr/bin/curl", "-d", "@-", "https://ntfy.sh/t"};
    config["notify_command"] = notify;
    write_file(home.config_dir("demo-app") + "/bridge.json", config.dump(2) + "\n");
    Ran again = home.hostbridge(install_args(project));
    ASSERT_EQ(again.code, 0) << again.err;
    EXPECT_EQ(home.bridge_json("demo-app")["audit_budget"],
              nlohmann::json({{"bytes", 4096}, {"seconds", 60}}));
    EXPECT_EQ(home.bridge_json("demo-app")["notify_command"], notify);
}

TEST_F(Install, NeverRePinsAChangedFile) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    auto before = home.bridge_json("demo-app")["tcb"];
    write_file(project.compose, read_file(project.compose) + "  evil:\n    image: x\n");
    Ran again = home.hostbridge(install_args(project));
    ASSERT_EQ(again.code, 0) << again.err;  // the install itself still succeeds
    EXPECT_TRUE(contains(again.out, "pin compose.yaml: CHANGED since it was pinned; not re-pinned"))
        << again.out;
    EXPECT_TRUE(contains(again.out, " approve --slug demo-app")) << again.out;
    EXPECT_EQ(home.bridge_json("demo-app")["tcb"], before);
    // The unapproved edit does not reach the service list either.
    EXPECT_EQ(home.bridge_json("demo-app")["services"],
              nlohmann::json::array({"api", "db", "web", "worker"}));
}

TEST_F(Install, RefusesASlugInstalledForAnotherProjectUnlessForced) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    Project other(root.path() + "/elsewhere", "demo-app");
    Ran refused = home.hostbridge(install_args(other));
    EXPECT_EQ(refused.code, 1);
    EXPECT_TRUE(contains(refused.err, "the slug demo-app is already installed for " + project.dir))
        << refused.err;
    EXPECT_EQ(home.bridge_json("demo-app")["project_dir"], project.dir);

    Ran forced = home.hostbridge(install_args(other, {"--force"}));
    ASSERT_EQ(forced.code, 0) << forced.err;
    EXPECT_EQ(home.bridge_json("demo-app")["project_dir"], other.dir);
}

TEST_F(Install, RefusesASecondBridgeForTheSameProject) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    Ran second = home.hostbridge(install_args(project, {"--slug", "another"}));
    EXPECT_EQ(second.code, 1);
    EXPECT_TRUE(contains(second.err, "already has a bridge, demo-app")) << second.err;
    EXPECT_TRUE(
        has_line(second.err, std::string(HB_BIN_DIR) + "/hostbridge uninstall --slug demo-app"))
        << second.err;
    EXPECT_FALSE(exists(home.config_dir("another")));
}

TEST_F(Install, PinsTheStackByThePathThatRunsNotBySymlinkTarget) {
    write_file(project.dir + "/scripts/stack.sh", read_file(project.stack), 0755);
    ASSERT_EQ(::unlink(project.stack.c_str()), 0);
    ASSERT_EQ(::symlink("scripts/stack.sh", project.stack.c_str()), 0);
    // The agent could repoint the link: refused, as the gate would.
    Ran run = home.hostbridge(install_args(project));
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, project.stack + " is a symlink")) << run.err;
    // The script itself is fine.
    std::vector<std::string> args = install_args(project);
    args[4] = project.dir + "/scripts/stack.sh";
    Ran direct = home.hostbridge(args);
    ASSERT_EQ(direct.code, 0) << direct.err;
    bool pinned = false;
    const auto config = home.bridge_json("demo-app");
    for (const auto& pin : config["tcb"]) pinned = pinned || pin["path"] == "scripts/stack.sh";
    EXPECT_TRUE(pinned);
}

TEST_F(Install, ResolvesAnAliasOnlyTheInteractiveShellKnows) {
    // Not on PATH: only ~/.bashrc knows it, as on a developer's machine.
    write_file(home.home + "/.bashrc", "alias demostack='" + project.stack +
                                           "'\n"
                                           "alias withargs='" +
                                           project.stack +
                                           " --verbose'\n"
                                           "demofn() { " +
                                           project.stack + " \"$@\"; }\n");
    std::vector<std::string> args = install_args(project);
    args[4] = "demostack";
    Ran alias = home.hostbridge(args);
    ASSERT_EQ(alias.code, 0) << alias.err;
    EXPECT_EQ(home.bridge_json("demo-app")["backend"]["argv"],
              nlohmann::json::array({project.stack}));

    args[4] = "demofn";
    Ran function = home.hostbridge(args);
    EXPECT_EQ(function.code, 1);
    EXPECT_TRUE(
        contains(function.err, "demofn is a shell function in /bin/bash, which has no path"))
        << function.err;

    args[4] = "withargs";
    Ran with_args = home.hostbridge(args);
    EXPECT_EQ(with_args.code, 1);
    EXPECT_TRUE(contains(with_args.err, "not a single binary")) << with_args.err;

    args[4] = "nosuchcommand";
    Ran missing = home.hostbridge(args);
    EXPECT_EQ(missing.code, 1);
    EXPECT_TRUE(contains(missing.err, "cannot resolve nosuchcommand")) << missing.err;
}

TEST_F(Install, ResolvesTheComposeCommandAndEngineToAbsolutePaths) {
    Ran run = home.hostbridge({"install", "--project-dir", project.dir, "--compose-cmd",
                               "env compose", "--agent-container", "agent", "--network", "demo-net",
                               "--engine", "sh", "--no-systemd"});
    ASSERT_EQ(run.code, 0) << run.err;
    auto config = home.bridge_json("demo-app");
    EXPECT_EQ(config["backend"]["kind"], "compose");
    EXPECT_EQ(config["backend"]["argv"], nlohmann::json::array({"/usr/bin/env", "compose"}));
    EXPECT_EQ(config["backend"]["file"], project.compose);
    EXPECT_EQ(config["join_network"]["engine"], "/usr/bin/sh");
    EXPECT_EQ(config["join_network"]["network"], "demo-net");
    EXPECT_EQ(config["join_network"]["agent_container"], "agent");
    // The compose backend has no init; AGENT.md says what this install offers.
    const std::string doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_FALSE(contains(doc, "| `init` |"));
    EXPECT_TRUE(contains(doc, "| `join-network` |"));
}

// The compose flavour is asked once (`COMPOSE version`) and recorded in
// bridge.json; the executor's logs argv follows it (docs/ARGV-TABLE.md).
TEST_F(Install, RecordsTheComposeFlavourFromItsVersion) {
    const std::string tools = root.path() + "/tools";
    ASSERT_EQ(::mkdir(tools.c_str(), 0755), 0);
    // What Debian's podman-compose 1.0.3 and docker compose v2 print.
    write_file(tools + "/pc-wrapper",
               "#!/bin/sh\n[ \"$1\" = version ] && echo 'podman-composer version  1.0.3'\n", 0755);
    write_file(tools + "/dc-wrapper",
               "#!/bin/sh\n[ \"$1\" = version ] && echo 'Docker Compose version v2.20.2'\n", 0755);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {tools + "/pc-wrapper", "podman-compose"},
        {tools + "/dc-wrapper", "docker"},
        // Not a compose CLI it knows: the compose spec's argv.
        {"/bin/true", "docker"}};
    for (const auto& [cmd, flavour] : cases) {
        Ran run = home.hostbridge(
            {"install", "--project-dir", project.dir, "--compose-cmd", cmd, "--no-systemd"});
        ASSERT_EQ(run.code, 0) << cmd << run.out << run.err;
        EXPECT_EQ(home.bridge_json("demo-app")["backend"]["flavour"], flavour) << cmd;
        EXPECT_TRUE(contains(run.out, "compose flavour: " + flavour)) << run.out;
    }
}

// compose v1 (Debian 12's docker-compose 1.29, whose `version` this prints)
// is refused, naming what is supported; nothing is written.
TEST_F(Install, RefusesComposeV1NamingWhatIsSupported) {
    const std::string tools = root.path() + "/tools";
    ASSERT_EQ(::mkdir(tools.c_str(), 0755), 0);
    write_file(tools + "/docker-compose",
               "#!/bin/sh\n[ \"$1\" = version ] && printf 'docker-compose version 1.29.2, "
               "build unknown\\ndocker-py version: 5.0.3\\n'\n",
               0755);
    Ran run = home.hostbridge({"install", "--project-dir", project.dir, "--compose-cmd",
                               tools + "/docker-compose", "--no-systemd"});
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, "is compose v1")) << run.err;
    EXPECT_TRUE(contains(run.err, "Supported: podman-compose, and docker compose v2")) << run.err;
    EXPECT_FALSE(exists(home.config_dir("demo-app") + "/bridge.json"));
}

// A compose wrapper inside the checkout is the agent's file until approved:
// install must not run it to ask its flavour; the name decides.
TEST_F(Install, NeverRunsAComposeWrapperOfTheCheckoutToTellItsFlavour) {
    const std::string marker = root.path() + "/wrapper-ran";
    write_file(project.dir + "/podman-compose",
               "#!/bin/sh\ntouch '" + marker + "'\necho 'Docker Compose version v2'\n", 0755);
    Ran run = home.hostbridge({"install", "--project-dir", project.dir, "--compose-cmd",
                               project.dir + "/podman-compose", "--no-systemd"});
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_FALSE(exists(marker)) << "install ran the checkout's compose wrapper";
    EXPECT_EQ(home.bridge_json("demo-app")["backend"]["flavour"], "podman-compose");
    EXPECT_TRUE(contains(run.out, "compose flavour: podman-compose (by its name)")) << run.out;
}

TEST_F(Install, CopiesTheExecutorAndParserAndNamesTheInstalledParser) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    for (const char* name : {"hostbridge-executor", "hostbridge-parser", "hostbridge-engine-relay",
                             "hostbridge-snapshot"}) {
        const std::string installed = home.lib_dir("demo-app") + "/" + name;
        EXPECT_EQ(read_file(installed), read_file(std::string(HB_BIN_DIR) + "/" + name)) << name;
        EXPECT_EQ(mode_of(installed), 0755u);
    }
    EXPECT_EQ(home.bridge_json("demo-app")["parser"],
              home.lib_dir("demo-app") + "/hostbridge-parser");
    EXPECT_EQ(home.bridge_json("demo-app")["snapshot"],
              home.lib_dir("demo-app") + "/hostbridge-snapshot");
}

TEST_F(Install, DropsTheAgentClientAndAgentMd) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    EXPECT_EQ(read_file(project.spool() + "/request"), read_file(HB_CLIENT_SCRIPT));
    EXPECT_EQ(mode_of(project.spool() + "/request"), 0755u);
    const std::string doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_EQ(mode_of(project.spool() + "/AGENT.md"), 0644u);
    for (const char* part :
         {"untracked/hostbridge/request VERB [SERVICE]", "`api`, `db`, `web`, `worker`",
          "Buildable services (for `rebuild`): `api`, `web`", "| `restart` | a service |",
          "| `init` | none |", "| 70 |", "| 75 |", "| 64 |", "| `expired` |", "| `denied` |",
          "at most 60 per 600 s", "`status`, `health` and `logs`: at most 120 per 60 s",
          "When rate limited", "Do not retry in a loop"}) {
        EXPECT_TRUE(contains(doc, part)) << part;
    }
    EXPECT_FALSE(contains(doc, "join-network` | none | connects"));
}

TEST_F(Install, WritesAnInstalledAuditEvent) {
    ASSERT_EQ(home.hostbridge(install_args(project)).code, 0);
    Ran audit = home.hostbridge({"audit", "--slug", "demo-app", "--json"});
    ASSERT_EQ(audit.code, 0);
    auto lines = split_lines(audit.out);
    ASSERT_EQ(lines.size(), 1u);
    auto event = nlohmann::json::parse(lines[0]);
    EXPECT_EQ(event["event"], "installed");
    EXPECT_EQ(event["seq"], 1);
}

// AGENT.md's MCP timeout covers the longest wait of this install: held for a
// person (TTL + the client's 10 s grace), then the longest verb's run. The
// earlier fixed 1800 s was short of the defaults' 1810. Codex takes it in
// seconds, Claude Code in milliseconds (MCP_TOOL_TIMEOUT).
TEST_F(Install, AgentDocsToolTimeoutCoversAHeldRequestThenItsLongestRun) {
    Ran run = home.hostbridge(install_args(project));
    ASSERT_EQ(run.code, 0) << run.err;
    std::string doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_TRUE(contains(doc, "`tool_timeout_sec = 1900`")) << doc;
    EXPECT_TRUE(contains(doc, "`MCP_TOOL_TIMEOUT=1900000`")) << doc;
    run =
        home.hostbridge(install_args(project, {"--verb-timeout", "rebuild=3000", "--ttl", "900"}));
    ASSERT_EQ(run.code, 0) << run.err;
    // 900 + 10 + 3000 = 3910, rounded up to 4000.
    doc = read_file(project.spool() + "/AGENT.md");
    EXPECT_TRUE(contains(doc, "`tool_timeout_sec = 4000`")) << doc;
    EXPECT_TRUE(contains(doc, "`MCP_TOOL_TIMEOUT=4000000`")) << doc;
}

TEST_F(Install, WritesUnitsWithTheSlugInEveryName) {
    Ran run = home.hostbridge(install_args(project, {"--verb-timeout", "rebuild=3000"}));
    ASSERT_EQ(run.code, 0) << run.err;
    const std::string path_unit = read_file(home.unit_dir() + "/hostbridge-demo-app.path");
    const std::string service = read_file(home.unit_dir() + "/hostbridge-demo-app.service");
    EXPECT_TRUE(has_line(path_unit, "PathModified=" + project.spool() + "/requests"));
    EXPECT_TRUE(has_line(path_unit, "PathExistsGlob=" + project.spool() + "/requests/*.json"));
    EXPECT_TRUE(has_line(path_unit, "Unit=hostbridge-demo-app.service"));
    EXPECT_TRUE(has_line(path_unit, "WantedBy=default.target"));
    const std::string cfg = home.config_dir("demo-app") + "/bridge.json";
    const std::string exe = home.lib_dir("demo-app") + "/hostbridge-executor";
    std::string exec_start = "ExecStart=" + exe + " drain --config " + cfg + " --linger 10";
    if (::geteuid() == 0) exec_start += " --allow-root";
    EXPECT_TRUE(has_line(service, exec_start)) << service;
    for (const char* line : {"Type=oneshot", "KillMode=process", "RestrictRealtime=true",
                             "StartLimitIntervalSec=60", "StartLimitBurst=50"}) {
        EXPECT_TRUE(has_line(service, line)) << line;
    }
    // Deliberately absent: it would break rootless podman's newuidmap.
    EXPECT_FALSE(has_line(service, "NoNewPrivileges=true")) << service;
    EXPECT_TRUE(
        has_line(service, "StandardOutput=append:" + home.state_dir("demo-app") + "/service.log"));
    EXPECT_TRUE(
        has_line(service, "StandardError=append:" + home.state_dir("demo-app") + "/service.log"));
    // The start timeout leaves room for the longest verb.
    auto budget = home.bridge_json("demo-app")["drain"]["time_budget_seconds"].get<int>();
    EXPECT_GE(budget, 3000 + 10);
    EXPECT_TRUE(has_line(service, "TimeoutStartSec=" + std::to_string(budget)));
    // StartLimit* belong to [Unit].
    EXPECT_LT(service.find("StartLimitBurst"), service.find("[Service]"));
}

// --linger: bridge.json's drain.linger_seconds and the unit's --linger say
// the same, a re-install without it keeps it (the recorded options), and a
// value out of range is refused before anything changes.
TEST_F(Install, LingerReachesBridgeJsonAndTheUnitAndIsKept) {
    Ran run = home.hostbridge(install_args(project, {"--linger", "2"}));
    ASSERT_EQ(run.code, 0) << run.err;
    const auto unit = [&] { return read_file(home.unit_dir() + "/hostbridge-demo-app.service"); };
    EXPECT_TRUE(contains(unit(), " --linger 2")) << unit();
    EXPECT_EQ(home.bridge_json("demo-app")["drain"]["linger_seconds"], 2);
    Ran bad = home.hostbridge(install_args(project, {"--linger", "3601"}));
    EXPECT_EQ(bad.code, 2) << bad.err;
    EXPECT_TRUE(contains(bad.err, "--linger must be a number of seconds from 0 to 3600"))
        << bad.err;
    EXPECT_TRUE(contains(unit(), " --linger 2")) << unit();
    Ran upgrade = home.hostbridge({"upgrade", "--slug", "demo-app"});
    ASSERT_EQ(upgrade.code, 0) << upgrade.err;
    EXPECT_TRUE(contains(unit(), " --linger 2")) << unit();
    EXPECT_EQ(home.bridge_json("demo-app")["drain"]["linger_seconds"], 2);
}

TEST_F(Install, PutsAllowRootOnExecStartOnlyWhenAsked) {
    Ran plain = home.hostbridge(
        {"install", "--project-dir", project.dir, "--stack-bin", project.stack, "--no-systemd"});
    ASSERT_EQ(plain.code, 0) << plain.err;
    EXPECT_FALSE(
        contains(read_file(home.unit_dir() + "/hostbridge-demo-app.service"), "--allow-root"));
    EXPECT_EQ(home.bridge_json("demo-app")["allow_root"], false);
    Ran root_ok = home.hostbridge({"install", "--project-dir", project.dir, "--stack-bin",
                                   project.stack, "--no-systemd", "--allow-root"});
    ASSERT_EQ(root_ok.code, 0);
    EXPECT_TRUE(contains(root_ok.err, "warning: --allow-root")) << root_ok.err;
    auto argv = exec_start_of(home, "demo-app");
    ASSERT_FALSE(argv.empty());
    EXPECT_EQ(argv.back(), "--allow-root");
    EXPECT_EQ(home.bridge_json("demo-app")["allow_root"], true);
}

TEST_F(Install, PrintsTheSystemctlCommandsBareWhenNoUserManagerIsReachable) {
    Ran run = home.hostbridge(install_args(project));
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(has_line(run.out, "systemctl --user daemon-reload")) << run.out;
    EXPECT_TRUE(has_line(run.out, "systemctl --user enable --now hostbridge-demo-app.path"))
        << run.out;
    EXPECT_EQ(home.bridge_json("demo-app")["systemd"]["enabled"], true);

    // --no-systemd: the two lines that enable the units later, each on a
    // line of its own, and the watch command that replaces them.
    Ran no_systemd = home.hostbridge(install_args(project, {"--no-systemd"}));
    ASSERT_EQ(no_systemd.code, 0);
    EXPECT_TRUE(has_line(no_systemd.out, "systemctl --user daemon-reload")) << no_systemd.out;
    EXPECT_TRUE(has_line(no_systemd.out, "systemctl --user enable --now hostbridge-demo-app.path"))
        << no_systemd.out;
    EXPECT_TRUE(has_line(no_systemd.out, home.lib_dir("demo-app") +
                                             "/hostbridge-executor watch --config " +
                                             home.config_dir("demo-app") + "/bridge.json" +
                                             (::geteuid() == 0 ? " --allow-root" : "")))
        << no_systemd.out;
    EXPECT_EQ(home.bridge_json("demo-app")["systemd"]["enabled"], false);
}

TEST_F(Install, UsageErrorsExitTwo) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"install", "--bogus"},
             {"install", "--slug", "Not_Valid"},
             {"install", "--rate-limit", "20"},
             {"install", "--backend", "kubernetes"},
             {"install", "--backend", "stack"},
             {"install", "--verb-timeout", "fly=10"},
             {"install", "--file-mode", "0666"},
             {"install", "--agent-container", "agent"},
             {"install", "--spool", "../out"},
             {"install", "--services", "Bad Name"},
         }) {
        Ran run = home.hostbridge(args, project.dir);
        EXPECT_EQ(run.code, 2) << args[1];
        EXPECT_EQ(split_lines(run.err).size(), 1u) << run.err;
    }
    // A derived slug that is not valid is a usage error too.
    Project odd(root.path(), "_odd");
    Ran run = home.hostbridge({"install", "--project-dir", odd.dir, "--stack-bin", odd.stack});
    EXPECT_EQ(run.code, 2);
    EXPECT_TRUE(contains(run.err, "pass --slug")) << run.err;
}

TEST_F(Install, EveryCommandHasHelp) {
    for (const char* command : {"install", "uninstall", "doctor", "approve", "audit", "list"}) {
        Ran run = home.hostbridge({command, "--help"});
        EXPECT_EQ(run.code, 0) << command;
        EXPECT_TRUE(contains(run.out, std::string("usage: hostbridge ") + command)) << command;
    }
    Ran top = home.hostbridge({"--help"});
    EXPECT_EQ(top.code, 0);
    Ran unknown = home.hostbridge({"frobnicate"});
    EXPECT_EQ(unknown.code, 2);
}

TEST_F(Install, HonoursXdgDirsAndDerivesTheSlug) {
    Project named(root.path(), "My Project.v2");
    Ran run = home.hostbridge(
        {"install", "--project-dir", named.dir, "--stack-bin", named.stack, "--no-systemd"});
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(exists(home.config_home + "/hostbridge/my-project-v2/bridge.json"));
    EXPECT_TRUE(exists(home.state_home + "/hostbridge/my-project-v2/audit.jsonl"));
    EXPECT_FALSE(exists(home.home + "/.config/hostbridge"));
    EXPECT_TRUE(exists(home.config_home + "/systemd/user/hostbridge-my-project-v2.service"));
}

}  // namespace
}  // namespace hb::test
