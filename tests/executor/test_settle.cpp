// The settle step (engines/podman/settle.cpp): how a container is judged, and the
// loop against a stand-in engine (a script answering the four settle rows
// from files, so each state is reproducible) whose inspect output is read
// by the real sandboxed hostbridge-parser --inspect. The real podman and
// podman-compose are tests/e2e/settle.sh's.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engines/argv_table.hpp"
#include "engines/podman/inspect_client.hpp"
#include "engines/podman/settle.hpp"
#include "tests/support/files.hpp"

namespace hb::exec {
namespace {

using namespace std::chrono_literals;

ContainerFacts running(std::uint16_t service) {
    ContainerFacts c;
    c.id.fill(0x11);
    c.image.fill(0x22);
    c.state = ContainerState::Running;
    c.health = ContainerHealth::None;
    c.service = service;
    c.labelled = true;
    c.started_ns = 2000;
    return c;
}

TEST(Settle, JudgesAContainer) {
    SettleGoal goal;
    EXPECT_EQ(judge_container(running(0), goal).standing, Standing::Good);
    ContainerFacts c = running(0);
    c.health = ContainerHealth::Healthy;
    EXPECT_EQ(judge_container(c, goal).standing, Standing::Good);
    c.health = ContainerHealth::Starting;
    EXPECT_EQ(judge_container(c, goal).standing, Standing::Waiting);
    c.health = ContainerHealth::Unhealthy;
    EXPECT_EQ(judge_container(c, goal).problem, "unhealthy");
    c = running(0);
    c.state = ContainerState::Exited;
    c.exit_code = 3;
    EXPECT_EQ(judge_container(c, goal).problem, "exited with status 3");
    c.state = ContainerState::Restarting;
    EXPECT_EQ(judge_container(c, goal).standing, Standing::Bad);
    c.state = ContainerState::Created;
    EXPECT_EQ(judge_container(c, goal).standing, Standing::Waiting);
    // restart and rebuild: started before the request means it never restarted.
    goal.since_ns = 3000;
    EXPECT_EQ(judge_container(running(0), goal).standing, Standing::Bad);
    goal.since_ns = 2000;
    EXPECT_EQ(judge_container(running(0), goal).standing, Standing::Good);
    // rebuild: not on the image just built.
    std::array<std::uint8_t, 32> built{};
    built.fill(0x33);
    goal.image = built;
    EXPECT_EQ(judge_container(running(0), goal).problem,
              "runs image 222222222222, not the one just built (333333333333)");
}

TEST(Settle, AServiceIsItsWorstContainerAndNoneIsBad) {
    Config config;
    config.services = {"app", "db", "web"};
    SettleGoal goal;
    goal.services = {0, 1, 2};
    ContainerFacts exited = running(0);
    exited.state = ContainerState::Exited;
    ContainerFacts foreign = running(2);
    foreign.labelled = false;  // another project's container is not web's
    const auto reports = judge_services({running(0), exited, running(1), foreign}, goal, config);
    ASSERT_EQ(reports.size(), 3u);
    EXPECT_EQ(reports[0].standing, Standing::Bad);
    EXPECT_EQ(reports[0].containers.size(), 2u);
    EXPECT_EQ(reports[1].standing, Standing::Good);
    EXPECT_EQ(reports[2].standing, Standing::Bad);
    EXPECT_EQ(reports[2].problem, "no container");
}

TEST(Settle, GoalsPerVerb) {
    Config config;
    config.services = {"app", "db"};
    EXPECT_EQ(settle_goal(Verb::Up, std::nullopt, config, 5).services,
              (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(settle_goal(Verb::Up, std::nullopt, config, 5).since_ns, 0);
    EXPECT_EQ(settle_goal(Verb::Restart, 1, config, 5).services, (std::vector<std::size_t>{1}));
    EXPECT_EQ(settle_goal(Verb::Restart, 1, config, 5).since_ns, 5);
}

// --- against a stand-in engine ---------------------------------------------

const std::string kSettleId = std::string(64, 'a');

std::string container_json(const std::string& status, const std::string& health,
                           const std::string& started = "2099-01-01T00:00:00Z", int pid = 0) {
    return R"({"Id": ")" + kSettleId + R"(", "Image": ")" + std::string(64, 'b') +
           R"(", "RestartCount": 0, "State": {"Status": ")" + status +
           R"(", "ExitCode": 2, "Pid": )" + std::to_string(pid) + R"(, "StartedAt": ")" + started +
           R"(", "Health": {"Status": ")" + health +
           R"("}}, "Config": {"Labels": {"com.docker.compose.project": "pp", )"
           R"("io.hostbridge.project": "pp", )"
           R"("com.docker.compose.service": "app", "x": "\u001b]0;evil\u0007"}}})";
}

struct SettleEngine {
    hb::test::TempDir tmp{"settle"};
    std::string dir = tmp.path();
    Config config;

    explicit SettleEngine(int timeout_seconds) {
        write("engine",
              "#!/bin/sh\n"
              "d=" +
                  dir +
                  "\n"
                  "echo \"$*\" >>$d/calls\n"
                  "case \"$1 $2 $3\" in\n"
                  "  'container inspect --format') cat $d/mounts; exit ;;\n"
                  "esac\n"
                  "case \"$1 $2\" in\n"
                  "  'ps -a') cat $d/ps ;;\n"
                  "  'container inspect') cat $d/inspect ;;\n"
                  "  'unshare '*) shift; exec \"$@\" ;;\n"
                  "  'stop --time') [ -e $d/inspect.after-stop ] && cp $d/inspect.after-stop "
                  "$d/inspect ;;\n"
                  "  'healthcheck run') [ -e $d/inspect.after-check ] && cp $d/inspect.after-check "
                  "$d/inspect ;;\n"
                  "  'logs --tail') printf 'starting\\nfatal: \\033[31mno config\\n' ;;\n"
                  "esac\n");
        ::chmod((dir + "/engine").c_str(), 0755);
        write("ps", kSettleId + "\n");
        config.services = {"app", "db"};
        config.parser = HB_PARSER_BIN;
        config.backend.kind = BackendKind::Compose;
        config.backend.flavour = ComposeFlavour::PodmanCompose;
        config.settle = SettleSettings{dir + "/engine", "pp", timeout_seconds};
    }
    void write(const std::string& name, const std::string& text) const { tmp.write(name, text); }
    std::string read(const std::string& name) const { return tmp.read(name); }
    SettleOutcome look_as(Verb verb) const {
        const int log = ::open((dir + "/log").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        SettleOutcome out =
            look(config, posture(config), verb, log, std::chrono::steady_clock::now() + 60s);
        ::close(log);
        return out;
    }
    SettleOutcome settle_goal(const SettleGoal& goal) const {
        const int log = ::open((dir + "/log").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        SettleOutcome out =
            settle(config, posture(config), goal, log, std::chrono::steady_clock::now() + 60s);
        ::close(log);
        return out;
    }
    SettleOutcome settle_app(std::int64_t since_ns = 0) const {
        SettleGoal goal;
        goal.services = {0};
        goal.since_ns = since_ns;
        return settle_goal(goal);
    }
};

TEST(Settle, AHealthyServiceSettlesAtOnce) {
    SettleEngine e(30);
    e.write("inspect", "[" + container_json("running", "healthy") + "]");
    const SettleOutcome out = e.settle_app();
    EXPECT_TRUE(out.ok) << out.reason;
    ASSERT_EQ(out.services.size(), 1u);
    EXPECT_EQ(out.services[0].containers.at(0).health, ContainerHealth::Healthy);
    // The text says how it settled, with the image it runs.
    EXPECT_NE(e.read("log").find("hostbridge: app: running, healthy, image "), std::string::npos)
        << e.read("log");
    const auto json = settle_json(out, true);
    EXPECT_EQ(json[0]["settled"], "ok");
    EXPECT_EQ(json[0]["containers"][0]["container"], "aaaaaaaaaaaa");
    EXPECT_EQ(json[0]["containers"][0]["started_at"], "2099-01-01T00:00:00Z");
    // The label's escape sequence never left the sandbox.
    EXPECT_EQ(json.dump().find("evil"), std::string::npos);
}

// `up` recreates the services one of whose own containers the sandbox found
// made from another definition (or with none), and says per service what
// it did (docs/COMPOSE.md, "Applying an approved edit").
TEST(Settle, UpRecreatesTheServicesWhoseDefinitionChangedAndSaysSo) {
    Config config;
    config.services = {"app", "db", "web"};
    std::vector<ContainerFacts> facts = {running(0), running(1), running(2), running(2)};
    facts[0].definition = DefinitionMatch::Same;
    facts[1].definition = DefinitionMatch::NotAsked;
    facts[2].definition = DefinitionMatch::Same;
    facts[3].definition = DefinitionMatch::Changed;  // one of web's two
    EXPECT_EQ(changed_definitions(facts, config), (std::vector<std::size_t>{2}));
    facts[0].definition = DefinitionMatch::Changed;
    facts[0].labelled = false;  // not the install's: never recreated
    facts[1].service = kNoService;
    facts[1].definition = DefinitionMatch::Changed;
    EXPECT_EQ(changed_definitions(facts, config), (std::vector<std::size_t>{2}));

    SettleGoal goal = settle_goal(Verb::Up, std::nullopt, config, 0);
    EXPECT_EQ(judge_services(facts, goal, config)[2].applied, "");  // nothing compared
    goal.recreated = std::vector<std::size_t>{2};
    SettleOutcome out;
    out.ok = true;
    out.services = judge_services({running(0), running(1), running(2)}, goal, config);
    EXPECT_EQ(out.services[0].applied, "unchanged");
    EXPECT_EQ(out.services[2].applied, "recreated (definition changed)");
    const auto json = settle_json(out, false);
    EXPECT_EQ(json[1]["definition"], "unchanged");
    EXPECT_EQ(json[2]["definition"], "recreated (definition changed)");
}

TEST(Settle, AStartingHealthcheckIsRunAndTheServiceTurnsHealthy) {
    SettleEngine e(30);
    e.write("inspect", "[" + container_json("running", "starting") + "]");
    e.write("inspect.after-check", "[" + container_json("running", "healthy") + "]");
    const SettleOutcome out = e.settle_app();
    EXPECT_TRUE(out.ok) << out.reason;
    EXPECT_NE(e.read("calls").find("healthcheck run " + kSettleId), std::string::npos)
        << e.read("calls");
}

TEST(Settle, AnExitedServiceFailsWithItsLastLogLines) {
    SettleEngine e(30);
    e.write("inspect", "[" + container_json("exited", "") + "]");
    const SettleOutcome out = e.settle_app();
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason, "did not settle: app: exited with status 2");
    ASSERT_EQ(out.services.size(), 1u);
    EXPECT_NE(out.services[0].log.find("fatal: "), std::string::npos);
    const auto json = settle_json(out, true);
    EXPECT_EQ(json[0]["settled"], "failed");
    EXPECT_TRUE(json[0]["log"].is_string());
    EXPECT_FALSE(settle_json(out, false)[0].contains("log"));  // never into the audit log
    // The text an agent or a person reads says it too, the escape made
    // visible (the container wrote it).
    const std::string log = e.read("log");
    EXPECT_NE(log.find("hostbridge: app: exited with status 2\nhostbridge: app | starting\n"
                       "hostbridge: app | fatal: \\x1b[31mno config\n"),
              std::string::npos)
        << log;
    EXPECT_EQ(log.find('\x1b'), std::string::npos);
}

TEST(Settle, AServiceThatStaysStartingTimesOut) {
    SettleEngine e(2);
    e.write("inspect", "[" + container_json("running", "starting") + "]");
    const auto start = std::chrono::steady_clock::now();
    const SettleOutcome out = e.settle_app();
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason, "did not settle within 2 s: app: running, health starting");
    EXPECT_LT(std::chrono::steady_clock::now() - start, 50s);  // a hang guard, not a timing target
}

// A rebuild that found its build live (docs/BUILDS.md, "An unchanged
// rebuild"): the container, running since long before, settles on the
// recorded image, and the answer says nothing was recreated; on another
// image it fails.
TEST(Settle, AnUnchangedRebuildSettlesOnTheRecordedImageAndSaysSo) {
    SettleEngine e(30);
    e.write("inspect", "[" + container_json("running", "", "2001-01-01T00:00:00Z") + "]");
    SettleGoal goal;
    goal.services = {0};
    goal.build_live = true;
    goal.image.emplace().fill(0xbb);
    const SettleOutcome out = e.settle_goal(goal);
    EXPECT_TRUE(out.ok) << out.reason;
    EXPECT_NE(e.read("log").find("hostbridge: app: running, no healthcheck, image bbbbbbbbbbbb; "
                                 "unchanged: its snapshot and image are the ones it runs, "
                                 "nothing recreated\n"),
              std::string::npos)
        << e.read("log");
    EXPECT_EQ(settle_json(out, false)[0]["build"], "unchanged");
    EXPECT_FALSE(settle_json(out, false)[0].contains("definition"));
    goal.image->fill(0xcc);
    const SettleOutcome other = e.settle_goal(goal);
    EXPECT_FALSE(other.ok);
    // Nothing was built: the answer never says "just built".
    EXPECT_NE(other.reason.find("runs image bbbbbbbbbbbb, not the one its last build put live "
                                "(cccccccccccc)"),
              std::string::npos)
        << other.reason;
    goal.build_live = false;  // any other settle says nothing of a build
    goal.image->fill(0xbb);
    EXPECT_FALSE(settle_json(e.settle_goal(goal), false)[0].contains("build"));
}

TEST(Settle, ARestartThatDidNotHappenFails) {
    SettleEngine e(30);
    e.write("inspect", "[" + container_json("running", "", "2001-01-01T00:00:00Z") + "]");
    const SettleOutcome out = e.settle_app(/*since_ns=*/1796245045000000000);
    EXPECT_FALSE(out.ok);
    EXPECT_NE(out.reason.find("not restarted: running since 2001-01-01T00:00:00Z"),
              std::string::npos)
        << out.reason;
}

TEST(Settle, AnEngineThatAnswersGarbageIsNotSettled) {
    SettleEngine e(2);
    e.write("ps", "not-an-id\n");
    SettleOutcome out = e.settle_app();
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason,
              "cannot tell whether the services settled: the engine's container list is not ids");
    e.write("ps", kSettleId + "\n");
    e.write("inspect", "[{\"Id\": 1}]");
    out = e.settle_app();
    EXPECT_FALSE(out.ok);
    EXPECT_NE(out.reason.find("does not have the shape"), std::string::npos) << out.reason;
}

TEST(Settle, NoContainerAtAllFails) {
    SettleEngine e(30);
    e.write("ps", "");
    const SettleOutcome out = e.settle_app();
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason, "did not settle: app: no container");
}

// status: one look at every service, whatever it finds; db has no container.
TEST(Look, StatusReportsEveryServiceAndRunsNoCheck) {
    SettleEngine e(30);
    e.write("inspect", "[" + container_json("exited", "") + "]");
    const SettleOutcome out = e.look_as(Verb::Status);
    EXPECT_TRUE(out.ok) << out.reason;  // the engine answered: that is status's answer
    ASSERT_EQ(out.services.size(), 2u);
    EXPECT_EQ(out.services[0].problem, "exited with status 2");
    EXPECT_EQ(out.services[1].problem, "no container");
    EXPECT_TRUE(out.services[0].log.empty());  // logs is its own verb
    EXPECT_EQ(e.read("calls").find("healthcheck"), std::string::npos) << e.read("calls");
    EXPECT_NE(e.read("log").find("hostbridge: app: exited with status 2\n"), std::string::npos);
    EXPECT_NE(e.read("log").find("hostbridge: db: no container\n"), std::string::npos);
}

TEST(Look, StatusFailsWhenTheEngineCannotBeRead) {
    SettleEngine e(30);
    e.write("ps", "not-an-id\n");
    const SettleOutcome out = e.look_as(Verb::Status);
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason,
              "cannot tell how the services are: the engine's container list is not ids");
}

// health runs the check of a container that reports healthy (it may be
// stale: no timer runs it here) and answers from what the check left.
TEST(Look, HealthRunsEachCheckAndAnswersFromItsResult) {
    SettleEngine e(30);
    e.config.services = {"app"};
    e.write("inspect", "[" + container_json("running", "healthy") + "]");
    e.write("inspect.after-check", "[" + container_json("running", "unhealthy") + "]");
    const SettleOutcome out = e.look_as(Verb::Health);
    EXPECT_NE(e.read("calls").find("healthcheck run " + kSettleId), std::string::npos)
        << e.read("calls");
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason, "not healthy: app: unhealthy");
    ASSERT_EQ(out.services.size(), 1u);
    EXPECT_NE(out.services[0].log.find("fatal: "), std::string::npos);  // what it printed last
}

TEST(Look, HealthIsDoneWhenEveryServiceRunsAndSaysWhichHaveNoCheck) {
    SettleEngine e(30);
    e.config.services = {"app"};
    e.write("inspect", "[" + container_json("running", "") + "]");
    SettleOutcome out = e.look_as(Verb::Health);
    EXPECT_TRUE(out.ok) << out.reason;
    EXPECT_EQ(e.read("calls").find("healthcheck"), std::string::npos);  // none to run
    EXPECT_NE(e.read("log").find("hostbridge: app: running, no healthcheck, image "),
              std::string::npos)
        << e.read("log");
    e.write("inspect", "[" + container_json("running", "starting") + "]");
    out = e.look_as(Verb::Health);
    EXPECT_FALSE(out.ok);
    EXPECT_EQ(out.reason, "not healthy yet: app: running, health starting");
}

// health runs its checks all at once: each check of this stand-in waits
// for the other to have started, so one run after the other leaves a mark
// after its wait of 10 s; checks run together leave none, whatever the load.
TEST(Look, HealthRunsTheChecksOfEveryServiceAtOnce) {
    SettleEngine e(30);
    const std::string db_id(64, 'c');
    e.write("engine",
            "#!/bin/sh\n"
            "d=" +
                e.dir +
                "\n"
                "echo \"$*\" >>$d/calls\n"
                "case \"$1 $2\" in\n"
                "  'ps -a') printf '%s\\n%s\\n' " +
                kSettleId + " " + db_id +
                " ;;\n"
                "  'container inspect') cat $d/inspect ;;\n"
                "  'healthcheck run') : >$d/started.$3; i=0\n"
                "    until [ -e $d/started." +
                kSettleId + " ] && [ -e $d/started." + db_id +
                " ]; do\n"
                "      i=$((i + 1)); [ $i -gt 100 ] && { echo $3 >>$d/alone; break; }\n"
                "      sleep 0.1\n"
                "    done ;;\n"
                "esac\n");
    std::string db = container_json("running", "healthy");
    db.replace(db.find(kSettleId), kSettleId.size(), db_id);
    db.replace(db.find("\"app\""), 5, "\"db\"");
    e.write("inspect", "[" + container_json("running", "healthy") + ", " + db + "]");
    const SettleOutcome out = e.look_as(Verb::Health);
    EXPECT_TRUE(out.ok) << out.reason;
    EXPECT_NE(e.read("calls").find("healthcheck run " + kSettleId), std::string::npos);
    EXPECT_NE(e.read("calls").find("healthcheck run " + db_id), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(e.dir + "/alone"))
        << "a check waited alone for the other: " << e.read("alone");
}

// Pinned installs (engines/podman/pin_check.hpp): the stand-in's `unshare` runs
// the real `hostbridge-pin check-pins` on this test's own process, in
// whose mount namespace the "container's" targets are real paths: the pin
// itself, or another directory, as where the agent's swap had won.
struct PinnedEngine : SettleEngine {
    explicit PinnedEngine(int timeout_seconds = 30) : SettleEngine(timeout_seconds) {
        config.project_dir = dir + "/proj";
        config.run_dir = dir + "/run";
        config.pins = BindPins{dir + "/engine", HB_PIN_BIN, {"src"}};
        std::filesystem::create_directories(bind_pin_path(config.run_dir, "src"));
        std::filesystem::create_directories(dir + "/home");
        write("inspect", "[" + container_json("running", "") + "]");
        write("inspect.after-stop", "[" + container_json("exited", "") + "]");
    }
    // started_ns: 2000 is after a request at 1000.
    void binds(const std::string& source, const std::string& target,
               std::int64_t started_ns = 2000) const {
        write("mounts", kSettleId + " " + std::to_string(::getpid()) + " " +
                            std::to_string(started_ns) + " \"" + source + "\" \"" + target +
                            "\"\n");
    }
    SettleOutcome settle_since(std::int64_t request_ns) const {
        SettleGoal goal;
        goal.services = {0};
        goal.request_ns = request_ns;
        return settle_goal(goal);
    }
};

#define ROOT_OR_SKIP()                                                                        \
    do {                                                                                      \
        if (::geteuid() != 0)                                                                 \
            GTEST_SKIP() << "check-pins enters a mount namespace: root here (podman unshare " \
                            "gives it to the real check)";                                    \
    } while (0)

TEST(SettlePins, AContainerWhosePinnedTargetHoldsThePinSettles) {
    ROOT_OR_SKIP();
    PinnedEngine e;
    e.binds(bind_pin_path(e.config.run_dir, "src"), bind_pin_path(e.config.run_dir, "src"));
    const SettleOutcome out = e.settle_since(1000);
    EXPECT_TRUE(out.ok) << out.reason << e.read("log");
    EXPECT_NE(e.read("calls").find("check-pins " + e.config.run_dir), std::string::npos)
        << e.read("calls");
    EXPECT_EQ(e.read("calls").find("stop"), std::string::npos) << e.read("calls");
}

TEST(SettlePins, AnotherDirectoryAtAPinnedTargetIsStoppedAndSaid) {
    ROOT_OR_SKIP();
    PinnedEngine e;
    e.binds(bind_pin_path(e.config.run_dir, "src"), e.dir + "/home");
    const SettleOutcome out = e.settle_since(1000);
    EXPECT_FALSE(out.ok);
    EXPECT_NE(e.read("calls").find("stop --time 0 " + kSettleId), std::string::npos)
        << e.read("calls");
    EXPECT_EQ(out.reason, "did not settle: app: its bind at " + e.dir +
                              "/home is not the pinned src (the engine mounted another file or "
                              "directory there); the bridge stopped it")
        << e.read("log");
    ASSERT_EQ(out.services.size(), 1u);
    EXPECT_EQ(settle_json(out, false)[0]["settled"], "failed");
}

TEST(SettlePins, ACheckoutPathIsStoppedWithoutComparing) {
    PinnedEngine e;
    e.binds(e.config.project_dir + "/src", "/srv/src");
    const SettleOutcome out = e.settle_since(1000);
    EXPECT_FALSE(out.ok);
    EXPECT_NE(out.reason.find("by its path, which every start resolves again"), std::string::npos)
        << out.reason;
    EXPECT_NE(e.read("calls").find("stop --time 0 " + kSettleId), std::string::npos);
    EXPECT_EQ(e.read("calls").find("check-pins"), std::string::npos);
}

TEST(SettlePins, AContainerStartedBeforeTheRequestIsLeftAsItIs) {
    PinnedEngine e;
    // Running since before the request (`up` left it alone): what it has
    // was checked when it started; a file replaced since would differ.
    e.binds(bind_pin_path(e.config.run_dir, "src"), e.dir + "/home", 500);
    const SettleOutcome out = e.settle_since(1000);
    EXPECT_TRUE(out.ok) << out.reason;
    EXPECT_EQ(e.read("calls").find("check-pins"), std::string::npos) << e.read("calls");
}

TEST(SettlePins, ABindListTheBridgeCannotReadStopsTheContainer) {
    PinnedEngine e;
    e.write("mounts", kSettleId + " 1 2000 \"/a\\nb\" \"/c\"\n");
    const SettleOutcome out = e.settle_since(1000);
    EXPECT_FALSE(out.ok);
    EXPECT_NE(out.reason.find("its bind mounts cannot be read"), std::string::npos) << out.reason;
    EXPECT_NE(e.read("calls").find("stop --time 0 " + kSettleId), std::string::npos);
}

// The check does not rest on the sandboxed inspect: an agent's image whose
// labels make that JSON unreadable (over 4 MiB) still gets checked.
TEST(SettlePins, AnInspectTheSandboxRefusesStillChecksAndStops) {
    PinnedEngine e(2);
    e.write("inspect", "not json");
    e.write("inspect.after-stop", "not json");
    e.binds(e.config.project_dir + "/src", "/srv/src");
    const SettleOutcome out = e.settle_since(1000);
    EXPECT_FALSE(out.ok);
    EXPECT_NE(e.read("calls").find("stop --time 0 " + kSettleId), std::string::npos)
        << e.read("calls");
    EXPECT_NE(out.reason.find("cannot tell whether the services settled"), std::string::npos);
    EXPECT_NE(out.reason.find("; container aaaaaaaaaaaa: it bind-mounts"), std::string::npos)
        << out.reason;
}

TEST(Settle, TheRowsTakeOnlyContainerIds) {
    SettleEngine e(30);
    EXPECT_FALSE(settle_inspect(e.config, {"../x"}));
    EXPECT_FALSE(settle_inspect(e.config, {}));
    EXPECT_FALSE(settle_log(e.config, std::string(64, 'A')));
    EXPECT_TRUE(settle_healthcheck(e.config, posture(e.config), kSettleId));
    e.config.backend.flavour = ComposeFlavour::Docker;
    EXPECT_FALSE(
        settle_healthcheck(e.config, posture(e.config), kSettleId));  // docker's daemon runs them
}

}  // namespace
}  // namespace hb::exec
