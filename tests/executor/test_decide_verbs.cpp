// Every verb end to end: the real hostbridge-executor drain and the real
// parser against a recording stack script (and a recording script standing
// in for the compose command and the container engine). The expected argv
// are written out here by hand from docs/PROTOCOL.md, not taken from argv_for().
#include <gtest/gtest.h>
#include <unistd.h>

#include <pwd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <set>

#include "admin/audit/argv_table_render.hpp"
#include "engines/argv_table.hpp"
#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::json;
using hb::test::StackFixture;
using Argv = std::vector<std::string>;

struct Case {
    std::string verb;
    std::string arg;
    Argv argv;  // empty: nothing runs (ping)
};

// Publishes every case, drains once, and checks each answer, its audit trail
// and that the script recorded exactly the expected argv, in order.
void run_cases(StackFixture& f, const std::vector<Case>& cases) {
    std::vector<std::string> names;
    for (const Case& c : cases) names.push_back(f.publish(c.verb, c.arg));
    f.drain();

    std::vector<Argv> expected;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        SCOPED_TRACE(c.verb + " " + c.arg);
        const auto r = f.response(names[i]);
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ((*r)["state"], "done") << r->dump();
        EXPECT_EQ((*r)["verb"], c.verb);
        if (c.arg.empty()) {
            EXPECT_TRUE((*r)["arg"].is_null());
        } else {
            EXPECT_EQ((*r)["arg"], c.arg);
        }
        EXPECT_TRUE((*r)["reason"].is_null());
        EXPECT_EQ(f.audit_for(names[i], "succeeded").size(), 1U);
        if (c.argv.empty()) {
            EXPECT_EQ((*r)["output"], "pong");
            EXPECT_TRUE((*r)["exit_code"].is_null());
            EXPECT_TRUE((*r)["log"].is_null());
            EXPECT_TRUE(f.audit_for(names[i], "started").empty());
            continue;
        }
        expected.push_back(c.argv);
        EXPECT_EQ((*r)["exit_code"], 0);
        EXPECT_EQ((*r)["log"], "archive/" + names[i] + ".log");
        EXPECT_TRUE(hb::test::fs::is_regular_file(f.path("archive", names[i] + ".log")));
        const auto started = f.audit_for(names[i], "started");
        ASSERT_EQ(started.size(), 1U);
        EXPECT_EQ(started[0]["verb"], c.verb);
        const auto done = f.audit_for(names[i], "succeeded");
        ASSERT_EQ(done.size(), 1U);
        EXPECT_EQ(done[0]["exit_code"], 0);
        EXPECT_TRUE(done[0]["duration_ms"].is_number_integer());
        // The started event comes before the outcome in the chain.
        EXPECT_LT(started[0]["seq"].get<int>(), done[0]["seq"].get<int>());
    }
    EXPECT_EQ(f.recorded(), expected);
    EXPECT_TRUE(f.list("requests").empty());
    EXPECT_TRUE(f.list("processing").empty());
}

// The argv of every row of the enumerated table that runs something.
std::multiset<Argv> table_argvs(const hb::Config& config) {
    std::multiset<Argv> out;
    for (const auto& row : hb::admin::enumerate_argv_table(config)) {
        if (const auto* plan = std::get_if<hb::exec::Plan>(&row.outcome)) {
            for (const auto& step : *plan) out.insert(step.argv);
        }
    }
    return out;
}

TEST(DecideVerbs, EveryVerbRunsItsExactArgvOnTheStackBackend) {
    StackFixture f;
    const std::string engine = f.root + "/engine";  // outside the project
    f.install_script(engine);
    f.config["join_network"] = {
        {"engine", engine}, {"network", "demo-net"}, {"agent_container", "agent-1"}};
    f.write_config();
    const std::string s = f.in_tree("stack");
    run_cases(f, {
                     {"ping", "", {}},
                     {"status", "", {s, "status"}},
                     {"health", "", {s, "health"}},
                     {"logs", "api", {s, "logs", "api"}},
                     {"logs", "db", {s, "logs", "db"}},
                     {"logs", "web", {s, "logs", "web"}},
                     {"up", "", {s, "start"}},
                     {"down", "", {s, "stop"}},
                     {"restart", "api", {s, "restart", "api"}},
                     {"restart", "db", {s, "restart", "db"}},
                     {"restart", "web", {s, "restart", "web"}},
                     {"rebuild", "api", {s, "build", "api"}},
                     {"rebuild", "web", {s, "build", "web"}},
                     {"init", "", {s, "init"}},
                     {"join-network", "", {engine, "network", "connect", "demo-net", "agent-1"}},
                 });
    // Together they are exactly the commands the enumerated table allows.
    const auto recorded = f.recorded();
    EXPECT_EQ(std::multiset<Argv>(recorded.begin(), recorded.end()),
              table_argvs(f.parsed_config()));
}

TEST(DecideVerbs, EveryVerbRunsItsExactArgvOnTheComposeBackend) {
    StackFixture f;
    // The recording script stands in for the compose command prefix.
    f.use_compose();
    const std::string s = f.in_tree("stack");
    const std::string c = f.in_tree("compose.yaml");
    run_cases(f, {
                     {"ping", "", {}},
                     {"status", "", {s, "-f", c, "ps"}},
                     {"health", "", {s, "-f", c, "ps"}},
                     // podman-compose's logs takes no --no-color (it never colours).
                     {"logs", "api", {s, "-f", c, "logs", "--tail", "200", "api"}},
                     {"logs", "web", {s, "-f", c, "logs", "--tail", "200", "web"}},
                     {"up", "", {s, "-f", c, "up", "-d", "--no-build"}},
                     {"down", "", {s, "-f", c, "stop"}},
                     {"restart", "db", {s, "-f", c, "restart", "db"}},
                 });
}

// A refusal that happens after the parser accepted: verb and arg known, the
// reason in the response and the audit, nothing recorded, request archived.
void expect_denied(StackFixture& f, const std::string& name, const std::string& verb,
                   const std::string& reason) {
    SCOPED_TRACE(name);
    const auto r = f.response(name);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ((*r)["state"], "denied");
    EXPECT_EQ((*r)["verb"], verb);
    EXPECT_EQ((*r)["reason"], reason);
    EXPECT_TRUE((*r)["exit_code"].is_null());
    EXPECT_TRUE((*r)["log"].is_null());
    EXPECT_EQ(f.audit_reason(name, "denied"), reason);
    EXPECT_TRUE(f.audit_for(name, "started").empty());
    EXPECT_TRUE(hb::test::fs::exists(f.path("archive", name)));
    EXPECT_FALSE(hb::test::fs::exists(f.path("archive", name + ".log")));
}

// docker compose v2 is not in Debian 12: no test runs its rows, so an
// install of it runs nothing, whatever the policy says (docs/COMPOSE.md,
// "docker compose").
// Without a docker engine user (docs/DOCKER.md).
TEST(DecideVerbs, EveryVerbOfADockerComposeInstallIsDeniedButPing) {
    StackFixture f;
    f.use_compose();
    f.config["backend"]["flavour"] = "docker";
    f.write_config();
    std::vector<std::pair<std::string, std::string>> names;
    for (const auto& [verb, arg] : std::vector<std::pair<std::string, std::string>>{
             {"status", ""}, {"logs", "api"}, {"up", ""}, {"down", ""}, {"restart", "db"}}) {
        names.emplace_back(f.publish(verb, arg), verb);
    }
    const std::string ping = f.publish("ping");
    f.drain();
    for (const auto& [name, verb] : names) {
        expect_denied(f, name, verb,
                      "not supported yet on docker compose: only through a docker engine user, "
                      "and never down or join-network, which no test runs there "
                      "(docs/DOCKER.md)");
    }
    EXPECT_EQ((*f.response(ping))["state"], "done");
    EXPECT_TRUE(f.recorded().empty());
}

// Through a docker engine user too, `down` runs nothing: its one try on
// docker hung (docs/DOCKER.md, "What the bridge runs on docker").
TEST(DecideVerbs, DownIsDeniedOnDockerComposeEvenThroughAnEngineUser) {
    StackFixture f;
    f.use_compose();
    f.config["backend"]["flavour"] = "docker";
    f.config["engine"] = {{"user", "hb-demo-app"},
                          {"socket", "/home/hb-demo-app/engine/docker.sock"},
                          {"relay", "/usr/lib/hostbridge/hostbridge-engine-relay"}};
    f.config["settle"] = {{"engine", "/usr/bin/docker"}, {"project", "demo-app"}, {"seconds", 45}};
    f.write_config();
    const std::string down = f.publish("down");
    f.drain();
    expect_denied(f, down, "down",
                  "not supported yet on docker compose: only through a docker engine user, "
                  "and never down or join-network, which no test runs there "
                  "(docs/DOCKER.md)");
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideVerbs, InitIsDeniedOnTheComposeBackend) {
    StackFixture f;
    f.use_compose();
    const std::string init = f.publish("init");
    f.drain();
    expect_denied(f, init, "init", "not supported by the compose backend");
    EXPECT_TRUE(f.recorded().empty());
}

// Without bridge.json's "build" (an install older than snapshot builds),
// rebuild runs nothing: the compose CLI would build from the checkout.
TEST(DecideVerbs, RebuildIsDeniedOnTheComposeBackendWithoutARecordedBuild) {
    StackFixture f;
    f.use_compose();
    const std::string rebuild = f.publish("rebuild", "web");
    f.drain();
    expect_denied(f, rebuild, "rebuild",
                  "this install records no snapshot build for the service: run `hostbridge "
                  "upgrade` or install again");
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideVerbs, JoinNetworkIsDeniedWhereItIsNotConfigured) {
    for (const char* backend : {"stack", "compose"}) {
        SCOPED_TRACE(backend);
        StackFixture f;
        if (std::string(backend) == "compose") {
            f.use_compose();
        }
        f.config["join_network"] = nullptr;
        f.write_config();
        const std::string join = f.publish("join-network");
        const std::string status = f.publish("status");  // the install still works
        f.drain();
        expect_denied(f, join, "join-network", "join-network is not configured");
        EXPECT_EQ(f.state_of(status), "done");
        EXPECT_EQ(f.recorded().size(), 1U);
    }
}

TEST(DecideVerbs, JoinNetworkRunsTheConfiguredEngineOnTheComposeBackendToo) {
    StackFixture f;
    f.use_compose();
    const std::string engine = f.root + "/engine";
    f.install_script(engine);
    f.config["join_network"] = {
        {"engine", engine}, {"network", "app_default"}, {"agent_container", "claude"}};
    f.write_config();
    run_cases(f, {{"join-network", "", {engine, "network", "connect", "app_default", "claude"}}});
}

// A stand-in for systemd-run: records its argv like the stack, then runs
// what follows "--" (so the stack records the inner command too).
void install_fake_systemd_run(const StackFixture& f, const std::string& path) {
    hb::test::write_file(path,
                         "#!/bin/sh\n"
                         "line=$0\n"
                         "for a in \"$@\"; do line=\"$line\t$a\"; done\n"
                         "printf '%s\\n' \"$line\" >> '" +
                             f.record_path +
                             "'\n"
                             "while [ $# -gt 0 ] && [ \"$1\" != -- ]; do shift; done\n"
                             "shift\n"
                             "exec \"$@\"\n");
    hb::test::fs::permissions(path, hb::test::fs::perms(0755));
}

// A user manager "reachable" the way the runner checks it: a socket at
// $XDG_RUNTIME_DIR/systemd/private.
std::string fake_runtime_dir(const StackFixture& f) {
    const std::string dir = f.root + "/xdg";
    hb::test::fs::create_directories(dir + "/systemd");
    const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    const std::string path = dir + "/systemd/private";
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        throw std::runtime_error("cannot bind " + path);
    }
    ::close(s);  // the socket file stays
    return dir;
}

std::string nonce_of(const std::string& name) {
    return name.substr(name.size() - 5 - 16, 16);
}

TEST(DecideVerbs, LongLivedVerbsRunInASystemdScopeWhenAManagerIsReachable) {
    StackFixture f;
    const std::string systemd_run = f.root + "/systemd-run";
    install_fake_systemd_run(f, systemd_run);
    f.config["systemd"] = {{"enabled", true}, {"systemd_run", systemd_run}};
    f.write_config();
    const std::string runtime = fake_runtime_dir(f);
    const std::string up = f.publish("up");
    const std::string restart = f.publish("restart", "web");
    const std::string init = f.publish("init");
    const std::string status = f.publish("status");
    const std::string rebuild = f.publish("rebuild", "api");
    f.drain_with_env({"XDG_RUNTIME_DIR=" + runtime});

    const auto scope = [&](const std::string& name, const std::string& verb) {
        return Argv{systemd_run, "--user",
                    "--scope",   "--quiet",
                    "--collect", "--unit=hostbridge-drain-test-" + verb + "-" + nonce_of(name),
                    "--"};
    };
    const auto join = [](Argv a, const Argv& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    const std::string s = f.in_tree("stack");
    const std::vector<Argv> expected = {
        join(scope(up, "up"), {s, "start"}),
        {s, "start"},
        join(scope(restart, "restart"), {s, "restart", "web"}),
        {s, "restart", "web"},
        join(scope(init, "init"), {s, "init"}),
        {s, "init"},
        {s, "status"},
        join(scope(rebuild, "rebuild"), {s, "build", "api"}),
        {s, "build", "api"},
    };
    EXPECT_EQ(f.recorded(), expected);
    for (const auto& name : {up, restart, init, status, rebuild}) {
        EXPECT_EQ(f.state_of(name), "done") << name;
    }
}

TEST(DecideVerbs, WithoutAReachableManagerLongLivedVerbsRunDirectly) {
    StackFixture f;
    const std::string systemd_run = f.root + "/systemd-run";
    install_fake_systemd_run(f, systemd_run);
    f.config["systemd"] = {{"enabled", true}, {"systemd_run", systemd_run}};
    f.write_config();
    // XDG_RUNTIME_DIR set, but no manager socket in it.
    hb::test::fs::create_directories(f.root + "/xdg-empty");
    const std::string restart = f.publish("restart", "api");
    f.drain_with_env({"XDG_RUNTIME_DIR=" + f.root + "/xdg-empty"});
    EXPECT_EQ(f.recorded(), (std::vector<Argv>{{f.in_tree("stack"), "restart", "api"}}));

    // And with a manager but systemd disabled in the config.
    f.config["systemd"]["enabled"] = false;
    f.write_config();
    const std::string runtime = fake_runtime_dir(f);
    const std::string up = f.publish("up");
    f.drain_with_env({"XDG_RUNTIME_DIR=" + runtime});
    EXPECT_EQ(f.recorded(), (std::vector<Argv>{{f.in_tree("stack"), "restart", "api"},
                                               {f.in_tree("stack"), "start"}}));
}

TEST(DecideVerbs, TheCommandGetsTheDrainsXdgRuntimeDirAndNothingElseOfItsEnvironment) {
    StackFixture f;
    f.behave("env");
    const std::string status = f.publish("status");
    // Nothing of this may reach the command (the preload does not exist:
    // the loader of the executor itself ignores it with a warning).
    f.drain_with_env({"XDG_RUNTIME_DIR=/run/user/4242", "HOME=" + f.root + "/agent-home",
                      "PATH=" + f.root + "/evil:/usr/bin", "LD_PRELOAD=" + f.root + "/evil.so",
                      "SECRET=1"});
    const auto r = f.response(status);
    ASSERT_TRUE(r.has_value());
    std::istringstream in((*r)["output"].get<std::string>());
    std::vector<std::string> seen;
    for (std::string line; std::getline(in, line);) seen.push_back(line);
    std::sort(seen.begin(), seen.end());
    const passwd* pw = ::getpwuid(::getuid());
    ASSERT_NE(pw, nullptr);
    const std::string tree = f.root + "/run/project";
    std::vector<std::string> expected = {
        "HOME=" + std::string(pw->pw_dir),
        "LANG=C.UTF-8",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "XDG_RUNTIME_DIR=/run/user/4242",
        "HOSTBRIDGE_PROJECT_DIR=" + f.project,
        "HOSTBRIDGE_RUN_DIR=" + tree,
        "cwd=" + tree};
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(seen, expected);
}

using hb::test::record_stack_build;

TEST(DecideVerbs, AStackRebuildWithARecordedContextIsHandedTheScreenedSnapshot) {
    StackFixture f;
    record_stack_build(f, "FROM scratch\nCOPY index.html /www/\n");
    f.behave("env");
    const std::string name = f.publish("rebuild", "web");
    f.drain();
    const auto r = f.response(name);
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ((*r)["state"], "done") << r->dump();
    // The script's environment, in its log: a rebuild that went live answers none of it.
    const std::string out = hb::test::read_file(f.path("archive", name + ".log"));
    const std::string snapshot = f.root + "/run/.hostbridge-build/web";
    EXPECT_NE(out.find("\nHOSTBRIDGE_SERVICE=web\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\nHOSTBRIDGE_BUILD_CONTEXT=" + snapshot + "\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\nHOSTBRIDGE_CONTAINERFILE=" + snapshot + "/Containerfile\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("\nHOSTBRIDGE_IIDFILE=" + f.root + "/run/.hostbridge-build/web.iid\n"),
              std::string::npos)
        << out;
    EXPECT_EQ(hb::test::read_file(snapshot + "/index.html"), "<h1>web</h1>\n");
    EXPECT_EQ(f.recorded(), (std::vector<Argv>{{f.in_tree("stack"), "build", "web"}}));
    const auto done = f.audit_for(name, "succeeded");
    ASSERT_EQ(done.size(), 1U);
    EXPECT_EQ(done[0]["detail"]["snapshot_sha256"].get<std::string>().size(), 64U) << done[0];
    // A service with no recorded context is built as before, on its own.
    const std::string api = f.publish("rebuild", "api");
    f.drain();
    const auto plain = f.response(api);
    ASSERT_TRUE(plain.has_value());
    EXPECT_EQ((*plain)["state"], "done") << plain->dump();
    EXPECT_EQ(hb::test::read_file(f.path("archive", api + ".log")).find("HOSTBRIDGE_BUILD_CONTEXT"),
              std::string::npos);
}

TEST(DecideVerbs, AStackRebuildWhoseContainerfileTheScreenRefusesNeverRunsTheStack) {
    StackFixture f;
    record_stack_build(f, "FROM scratch\nRUN --mount=type=bind,source=h,target=/h true\n");
    const std::string name = f.publish("rebuild", "web");
    f.drain();
    const auto r = f.response(name);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ((*r)["state"], "denied") << r->dump();
    EXPECT_NE((*r)["reason"].get<std::string>().find("Containerfile line 2"), std::string::npos)
        << r->dump();
    EXPECT_TRUE(f.recorded().empty());
    EXPECT_TRUE(f.audit_for(name, "started").empty());
}

}  // namespace
