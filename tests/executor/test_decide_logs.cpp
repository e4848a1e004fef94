// A windowed `logs` (docs/PROTOCOL.md, "Following logs") through the real
// drain and parser: refused where the install cannot follow a log; on a
// podman-compose install with `settle`, the service's container found
// through the look's rows (a stand-in engine whose inspect JSON the real
// parser reads), its log read with --timestamps and --since, the answer's
// cursor and `more`; held for a person with its window, merged only with
// the same window. The real podman's behaviour: tests/e2e/settle.sh.
// Also what a settled answer's `output` carries of the engine's text.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>

#include "common/held.hpp"
#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::json;
using hb::test::StackFixture;

const std::string kId = std::string(64, 'a');

// The engine's output for `logs --timestamps`: two lines written at once
// (one stamp), then one more.
const std::string kLog =
    "2026-12-02T20:57:25.602731173Z a\n"
    "2026-12-02T20:57:25.602731173Z b\n"
    "2026-12-02T20:57:26.000000001Z c\n";
constexpr const char* kCursorB = "1796245045602731173:2";
constexpr const char* kCursorC = "1796245046000000001:1";

class LogsFixture : public StackFixture {
  public:
    // A compose install whose `settle` engine is a stand-in: `ps` lists one
    // container, `inspect` describes it as web's, `logs` prints kLog; every
    // verb auto but what `policy` says.
    void podman_compose_with_engine(const std::string& policy = "") {
        policy_all_auto_but(policy);
        use_compose();
        config["backend"]["flavour"] = "podman-compose";
        with_engine(root + "/engine", "2026-12-02T20:57:25Z");
    }
    // The stack backend installed with --stack-project pp: the same
    // stand-in, named podman (bridge.json takes no other for a stack); its
    // container started after any request of the test.
    void stack_with_engine() {
        policy_all_auto_but("");
        hb::test::fs::create_directories(root + "/bin");
        with_engine(root + "/bin/podman", "2099-01-01T00:00:00Z");
    }
    void with_engine(const std::string& engine, const std::string& started_at) {
        hb::test::write_file(engine,
                             "#!/bin/sh\n"
                             "printf '%s\\n' \"$*\" >> '" +
                                 root +
                                 "/engine-calls'\n"
                                 "case \"$1 $2\" in\n"
                                 "  'ps -a') echo " +
                                 kId +
                                 " ;;\n"
                                 "  'container inspect') cat '" +
                                 root +
                                 "/inspect' ;;\n"
                                 "  'logs --timestamps') cat '" +
                                 root +
                                 "/engine-log' ;;\n"
                                 // restart: what restart-noise holds on stderr,
                                 // the status restart-rc holds (0 without one).
                                 "  'restart --filter') cat '" +
                                 root + "/restart-noise' >&2; exit $(cat '" + root +
                                 "/restart-rc' 2>/dev/null || echo 0) ;;\n"
                                 "esac\n");
        ::chmod(engine.c_str(), 0755);
        hb::test::write_file(
            root + "/inspect",
            R"([{"Id": ")" + kId + R"(", "Image": ")" + std::string(64, 'b') +
                R"(", "RestartCount": 0, "State": {"Status": "running", "ExitCode": 0, "Pid": 0,)"
                R"( "StartedAt": ")" +
                started_at +
                R"("}, "Config": {"Labels": )"
                R"({"com.docker.compose.project": "pp", "io.hostbridge.project": "pp",)"
                R"( "com.docker.compose.service": "web"}}}])");
        hb::test::write_file(root + "/engine-log", kLog);
        config["settle"] = {{"engine", engine}, {"project", "pp"}, {"seconds", 10}};
        write_config();
    }
    std::string engine_calls() const { return hb::test::read_file(root + "/engine-calls"); }

    std::string publish_logs(const std::string& window, const std::string& service = "web") {
        return publish_as(name("logs"), R"({"verb":"logs","arg":")" + service + "\"," + window +
                                            R"(,"requested_at":")" + now_rfc3339() + "\"}");
    }
    // Publishes a logs request with `window`, drains once: its response.
    json answer(const std::string& window) {
        last = publish_logs(window);
        drain();
        return *response(last);
    }
    std::string last;  // the request answer() published
};

TEST(DecideLogs, AWindowIsRefusedWhereTheInstallCannotFollowALog) {
    LogsFixture f;  // the stack backend: no look, no container to follow
    f.policy_all_auto_but("");
    const std::string req = f.publish_logs(R"("lines":"5")");
    f.drain();
    EXPECT_EQ(f.state_of(req), "denied");
    EXPECT_EQ(f.reason_of(req),
              "this install's logs takes no lines or since (docs/COMPOSE.md, \"Following logs\")");
    EXPECT_TRUE(f.recorded().empty());
    // The audit says what was asked.
    const auto denied = f.audit_for(req, "denied");
    ASSERT_EQ(denied.size(), 1u);
    EXPECT_EQ(denied[0]["detail"]["lines"], 5);
    // Without a window the same install answers as it always did.
    const std::string plain = f.publish("logs", "web");
    f.drain();
    EXPECT_EQ(f.state_of(plain), "done");
    EXPECT_TRUE((*f.response(plain))["cursor"].is_null());
    EXPECT_TRUE((*f.response(plain))["more"].is_null());
}

// A stack installed with --stack-project (docs/COMPOSE.md, "A stack's
// services"): its script's row still runs, then the engine is asked; a
// windowed logs never runs the script.
TEST(DecideLogs, AStackWithItsProjectSettlesLooksAndFollowsThroughTheEngine) {
    LogsFixture f;
    f.stack_with_engine();
    const std::string restart = f.publish("restart", "web");
    f.drain();
    const auto r = f.response(restart);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ((*r)["state"], "done") << r->dump();
    ASSERT_EQ((*r)["services"].size(), 1u) << r->dump();
    EXPECT_EQ((*r)["services"][0]["service"], "web");
    EXPECT_EQ((*r)["services"][0]["settled"], "ok");
    EXPECT_NE((*r)["output"].get<std::string>().find("hostbridge: web: running, no healthcheck"),
              std::string::npos)
        << r->dump();
    EXPECT_EQ(f.recorded(),
              (std::vector<std::vector<std::string>>{{f.in_tree("stack"), "restart", "web"}}));
    EXPECT_NE(f.engine_calls().find("ps -a -q --no-trunc --filter "
                                    "label=com.docker.compose.project=pp\n"),
              std::string::npos)
        << f.engine_calls();

    // The engine says web is gone: the script's exit 0 is not the answer.
    hb::test::write_file(f.root + "/inspect", "[]");
    const std::string again = f.publish("restart", "web");
    f.drain();
    EXPECT_EQ(f.state_of(again), "failed");
    EXPECT_NE(f.reason_of(again).find("web: no container"), std::string::npos)
        << f.reason_of(again);

    f.stack_with_engine();  // web is back
    const std::string status = f.publish("status");
    f.drain();
    EXPECT_EQ(f.state_of(status), "done");
    ASSERT_EQ((*f.response(status))["services"].size(), 3u);  // api, db (none), web

    const json logs = f.answer(R"("lines":"2")");
    EXPECT_EQ(logs["state"], "done") << logs.dump();
    EXPECT_EQ(logs["cursor"], kCursorC);
    EXPECT_EQ(f.recorded().size(), 3u);  // restart, restart, status: never logs
}

// What podman-compose 1.0.3 prints around a podman command it recovers
// from, exiting 0 (issue 48); here the stand-in engine's restart prints it
// on stderr (`restart S` is the engine's own row there).
const std::string kNoise =
    "podman run --name=pp_web_1 -d pp_web\n"
    "Error: creating container storage: the container name \"pp_web_1\" is already in use by "
    "3f4e5a6b7c8d. You have to remove that container to be able to reuse that name: that name "
    "is already in use\n"
    "exit code: 125\n";

// A change that went live answers what the host found, none of the engine's
// text (docs/PROTOCOL.md, `output`); a failure keeps it as its evidence, and
// a read's text is its answer.
TEST(DecideOutput, TheEnginesNoiseIsInTheAnswerOnlyWhenTheChangeFailed) {
    LogsFixture f;
    f.podman_compose_with_engine();
    f.with_engine(f.root + "/engine", "2099-01-01T00:00:00Z");  // web restarted after the request
    hb::test::write_file(f.root + "/restart-noise", kNoise);
    const std::string live = f.publish("restart", "web");
    f.drain();
    const json r = *f.response(live);
    ASSERT_EQ(r["state"], "done") << r.dump();
    // The engine restarted web's labelled containers itself: no compose CLI.
    EXPECT_TRUE(f.recorded().empty());
    EXPECT_NE(f.engine_calls().find("restart --filter label=com.docker.compose.project=pp "
                                    "--filter label=io.hostbridge.project=pp "
                                    "--filter label=com.docker.compose.service=web\n"),
              std::string::npos)
        << f.engine_calls();
    EXPECT_EQ(r["services"][0]["settled"], "ok");
    EXPECT_EQ(r["output"],
              "hostbridge: waiting up to 10 s for the services to settle\n"
              "hostbridge: web: running, no healthcheck, image bbbbbbbbbbbb\n");
    // The log keeps everything.
    const std::string log = hb::test::read_file(f.path("archive", live + ".log"));
    EXPECT_EQ(log.rfind(kNoise, 0), 0u) << log;
    // A change that settles nothing answers nothing of it either.
    const std::string down = f.publish("down");
    f.drain();
    EXPECT_EQ(f.state_of(down), "done");
    EXPECT_EQ((*f.response(down))["output"], "");

    // The command failed: its text is the evidence.
    hb::test::write_file(f.root + "/restart-rc", "1");
    const std::string failed = f.publish("restart", "web");
    f.drain();
    EXPECT_EQ(f.reason_of(failed), "exited with status 1");
    EXPECT_EQ((*f.response(failed))["output"], kNoise);

    // The command exited 0 but the engine says web is gone: the same.
    hb::test::write_file(f.root + "/restart-rc", "0");
    hb::test::write_file(f.root + "/inspect", "[]");
    const std::string unsettled = f.publish("restart", "web");
    f.drain();
    EXPECT_EQ(f.state_of(unsettled), "failed");
    const std::string evidence = (*f.response(unsettled))["output"];
    EXPECT_EQ(evidence.rfind(kNoise, 0), 0u) << evidence;
    EXPECT_NE(evidence.find("\nhostbridge: web: no container\n"), std::string::npos) << evidence;

    // status reads: the look's lines are its answer (no row runs before
    // it where the engine is read).
    const std::string status = f.publish("status");
    f.drain();
    EXPECT_EQ(f.state_of(status), "done");
    EXPECT_EQ((*f.response(status))["output"],
              "hostbridge: api: no container\nhostbridge: db: no container\n"
              "hostbridge: web: no container\n");
}

TEST(DecideLogs, ATailAnswersTheNewestLinesAndACursor) {
    LogsFixture f;
    f.podman_compose_with_engine();
    const json r = f.answer(R"("lines":"2")");
    EXPECT_EQ(r["state"], "done") << r.dump();
    EXPECT_EQ(r["output"], "2026-12-02T20:57:25.602731173Z b\n2026-12-02T20:57:26.000000001Z c\n");
    EXPECT_EQ(r["cursor"], kCursorC);
    EXPECT_EQ(r["more"], false);
    EXPECT_NE(f.engine_calls().find("logs --timestamps --tail 2 " + kId + "\n"), std::string::npos)
        << f.engine_calls();
    EXPECT_TRUE(f.recorded().empty());  // the compose CLI's fixed row did not run
}

TEST(DecideLogs, SinceAsksTheEngineForWhatFollowsAndSkipsWhatWasSent) {
    LogsFixture f;
    f.podman_compose_with_engine();
    const json r = f.answer(std::string(R"("since":")") + kCursorB + "\"");
    EXPECT_EQ(r["state"], "done") << r.dump();
    EXPECT_EQ(r["output"], "2026-12-02T20:57:26.000000001Z c\n");
    EXPECT_EQ(r["cursor"], kCursorC);
    EXPECT_EQ(r["more"], false);
    // One nanosecond before the cursor: podman returns what is strictly after.
    EXPECT_NE(f.engine_calls().find("logs --timestamps --since 2026-12-02T20:57:25.602731172Z " +
                                    kId + "\n"),
              std::string::npos)
        << f.engine_calls();
    const auto succeeded = f.audit_for(f.last, "succeeded");
    ASSERT_EQ(succeeded.size(), 1u);
    EXPECT_EQ(succeeded[0]["detail"]["since"], kCursorB);
    EXPECT_EQ(succeeded[0]["detail"]["cursor"], kCursorC);
}

// The flood: a container that logged far more than the executor reads for
// one answer. The engine's writes stop at the sealed 8 MiB buffer
// (engines/podman/follow_log.hpp): the answer is the lines read before it, says
// `more`, and is never the log's true tail (which only a buffer that grew
// to 20 MiB could have seen).
TEST(DecideLogs, ALogLargerThanTheBufferStopsTheEngineAtItsEndAndSaysMore) {
    LogsFixture f;
    f.podman_compose_with_engine();
    {
        std::ofstream log(f.root + "/engine-log", std::ios::binary);
        const std::string text(48, 'x');
        for (int i = 0; i < 20 * 1024 * 1024 / 80; ++i) {
            log << "2026-12-02T20:57:25." << 100000000 + i << "Z " << text << " " << i << "\n";
        }
        log << "2026-12-02T20:57:26.000000001Z the true last line\n";
    }
    const json r = f.answer(R"("lines":"5")");
    EXPECT_EQ(r["state"], "done") << r.dump();
    EXPECT_EQ(r["more"], true);
    const std::string output = r["output"];
    EXPECT_EQ(output.find("the true last line"), std::string::npos);
    EXPECT_EQ(std::count(output.begin(), output.end(), '\n'), 5);
    EXPECT_LE(output.size(), 16384u);
}

TEST(DecideLogs, AServiceWithoutAContainerFailsSayingSo) {
    LogsFixture f;
    f.podman_compose_with_engine();
    const std::string req = f.publish_logs(R"("lines":"3")", "db");
    f.drain();
    EXPECT_EQ(f.state_of(req), "failed");
    EXPECT_EQ(f.reason_of(req), "db has no container");
}

TEST(DecideLogs, HeldWithItsWindowAndMergedOnlyWithTheSameOne) {
    LogsFixture f;
    f.podman_compose_with_engine("MODE_logs=ask\n");
    const std::string first = f.publish_logs(R"("lines":"2")");
    f.drain();
    const std::string same = f.publish_logs(R"("lines":"2")");
    const std::string other = f.publish_logs(R"("lines":"3")");
    f.drain();
    EXPECT_EQ(f.state_of(first), "pending");
    EXPECT_EQ(f.state_of(same), "pending");
    EXPECT_EQ(f.state_of(other), "pending");
    auto fd = hb::common::open_held_dir(f.state);
    ASSERT_TRUE(fd);
    auto text = hb::common::read_held_file(fd->get(), first);
    ASSERT_TRUE(text && *text);
    auto held = hb::common::parse_held(**text);
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->window.lines, 2);
    EXPECT_EQ(held->merged, std::vector<std::string>{same});
    EXPECT_NE(held->command.find("$ENGINE logs --timestamps --tail 2 $CONTAINER"),
              std::string::npos)
        << held->command;
    auto other_text = hb::common::read_held_file(fd->get(), other);
    ASSERT_TRUE(other_text && *other_text);  // held on its own
    auto other_held = hb::common::parse_held(**other_text);
    ASSERT_TRUE(other_held);
    EXPECT_EQ(other_held->window.lines, 3);
    // The digest a person approves covers the window.
    hb::common::HeldRequest changed = *held;
    changed.window.lines = 3;
    EXPECT_NE(hb::common::held_digest(changed), hb::common::held_digest(*held));
    EXPECT_EQ(hb::common::parse_held(hb::common::render_held(*held)).value(), *held);
}

}  // namespace
