// Full and read-only filesystems under the spool and the state dir, each a
// small tmpfs in a private mount namespace (tests/support/mounts.hpp):
// - spool full (bytes, or inodes): every request is still decided, audited
//   and moved out of requests/; the agent gets no answer, and service.log
//   says why;
// - state dir full (at the start of a drain, or filling up mid-drain) and
//   read-only: no request lost, nothing runs without a durable `started`
//   record, every drain refuses while the audit log cannot be written, with
//   one clear line in service.log (or stderr); once space returns,
//   everything left is served exactly once and the chain verifies.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstring>
#include <random>

#include "fault_fixture.hpp"
#include "tests/support/mounts.hpp"

namespace hb::test {
namespace {

// Unmounts at the end of a test, before the fixture removes its tree (so
// the tree under the mount point is removed too, and nothing leaks).
struct Unmount {
    std::string dir;
    ~Unmount() {
        if (!dir.empty()) ::umount2(dir.c_str(), MNT_DETACH);
    }
};

const std::vector<Kind> kEveryKind = {Kind::Ping,  Kind::Status,    Kind::Restart,
                                      Kind::Logs,  Kind::DenyArg,   Kind::DenyExec,
                                      Kind::Empty, Kind::Malformed, Kind::OffSchema};

class DiskFull : public ::testing::Test {
  protected:
    void SetUp() override {
        if (const std::string why = enter_private_mount_namespace(); !why.empty()) {
            GTEST_SKIP() << why;
        }
    }
    // The spool on its own tmpfs, with every subdirectory.
    static std::string spool_on_tmpfs(FaultFixture& f, Unmount& guard, const std::string& options) {
        if (std::string why = mount_tmpfs(f.spool, options); !why.empty()) return why;
        guard.dir = f.spool;
        for (const auto& sub : kSpoolSubdirs) fs::create_directories(f.spool + "/" + sub);
        return {};
    }
    // The state dir on its own tmpfs; one drain that ran a command leaves
    // an audit log, the lock and the limiter's state there, and service.log
    // holds an earlier line, as after any real use.
    static std::string state_on_tmpfs(FaultFixture& f, Unmount& guard) {
        if (std::string why = mount_tmpfs(f.state, "size=256k,mode=0700"); !why.empty()) {
            return why;
        }
        guard.dir = f.state;
        f.pin({"stack"});  // the approved copy, on the new filesystem
        write_file(f.state + "/service.log", "hostbridge-executor: an earlier drain's line\n");
        f.publish("status");
        if (const int code = f.drain_logged(f.state + "/service.log"); code != 0) {
            return "the warm-up drain exited " + std::to_string(code);
        }
        return {};
    }
};

std::string last_line(const std::string& text) {
    std::string t = text;
    while (!t.empty() && t.back() == '\n') t.pop_back();
    const auto nl = t.rfind('\n');
    return nl == std::string::npos ? t : t.substr(nl + 1);
}

void expect_chain_intact(const FaultFixture& f) {
    auto report = hb::admin::verify_audit_log(f.state);
    ASSERT_TRUE(report) << report.error().message;
    EXPECT_FALSE(report->first_bad) << *report->first_bad;
}

// The one terminal audit event each kind earns when nothing goes wrong.
std::string terminal_event(Kind k) {
    switch (k) {
        case Kind::Ping:
        case Kind::Status:
        case Kind::Restart:
        case Kind::Logs:
            return "succeeded";
        case Kind::DenyArg:
        case Kind::DenyExec:
        case Kind::Empty:
            return "denied";
        case Kind::Malformed:
        case Kind::OffSchema:
            return "quarantined";
    }
    return "?";
}

// Spool full to the last byte (the agent can do that: the spool is on the
// checkout's filesystem). Nothing can be written into it, so the agent gets
// no response; but every request is still decided, run at most once,
// audited and moved out of requests/, and nothing is left in tmp/.
TEST_F(DiskFull, SpoolFullEveryRequestIsStillDecidedAuditedAndMovedOut) {
    FaultFixture f;
    Unmount guard;
    if (const std::string why = spool_on_tmpfs(f, guard, "size=512k,mode=0755"); !why.empty()) {
        GTEST_SKIP() << why;
    }
    std::vector<Planned> batch;
    for (Kind k : kEveryKind) batch.push_back(f.publish_kind(k));
    ASSERT_TRUE(fill_filesystem(f.spool));

    const std::string service_log = f.state + "/service.log";
    EXPECT_EQ(f.drain_logged(service_log), 0);
    const std::string log = read_file(service_log);
    EXPECT_NE(log.find("cannot publish the response of " + batch[0].name), std::string::npos)
        << log;
    EXPECT_NE(log.find("No space left on device"), std::string::npos) << log;
    EXPECT_EQ(f.count("responses"), 0u) << "nothing could be written into the spool";
    EXPECT_EQ(f.count("tmp"), 0u) << "a failed publish leaves no temp file";

    const auto runs = f.runs();
    const auto events = f.events();
    for (const Planned& p : batch) {
        SCOPED_TRACE(p.name);
        EXPECT_FALSE(f.exists_in("requests", p.name));
        EXPECT_FALSE(f.exists_in("processing", p.name));
        EXPECT_NE(f.exists_in("archive", p.name), f.exists_in("quarantine", p.name));
        std::vector<std::string> terminal;
        for (const auto& e : events.at(p.name)) {
            if (kTerminalEvents.contains(e)) terminal.push_back(e);
        }
        EXPECT_EQ(terminal, std::vector<std::string>{terminal_event(p.kind)});
        EXPECT_EQ(runs.contains(p.name) ? runs.at(p.name) : 0, runs_command(p.kind) ? 1 : 0);
    }
    expect_chain_intact(f);

    // Space again: the next request is answered as usual.
    fs::remove(f.spool + "/filler");
    const std::string ping = f.publish("ping");
    EXPECT_EQ(f.drain_logged(service_log), 0);
    EXPECT_EQ(f.state_of(ping), "done");
}

// Spool out of inodes: not even the command's log can be created, so no
// command runs (nothing runs without its log); the rest is handled as usual.
TEST_F(DiskFull, SpoolOutOfInodesRunsNoCommandAndLosesNoRequest) {
    FaultFixture f;
    Unmount guard;
    if (const std::string why = spool_on_tmpfs(f, guard, "size=4m,nr_inodes=64,mode=0755");
        !why.empty()) {
        GTEST_SKIP() << why;
    }
    std::vector<Planned> batch;
    for (Kind k : kEveryKind) batch.push_back(f.publish_kind(k));
    ASSERT_TRUE(exhaust_inodes(f.spool, "fill").has_value());

    const std::string service_log = f.state + "/service.log";
    EXPECT_EQ(f.drain_logged(service_log), 0);
    const std::string log = read_file(service_log);
    EXPECT_NE(log.find("cannot acknowledge " + batch[0].name), std::string::npos) << log;
    EXPECT_EQ(f.total_runs(), 0u) << "a command ran without its log";

    for (const json& line : f.audit_lines()) {
        if (line["event"] != "failed") continue;
        EXPECT_NE(line["reason"].get<std::string>().find("No space left on device"),
                  std::string::npos)
            << line.dump();
    }
    const auto events = f.events();
    for (const Planned& p : batch) {
        SCOPED_TRACE(p.name);
        EXPECT_FALSE(f.exists_in("requests", p.name));
        EXPECT_FALSE(f.exists_in("processing", p.name));
        EXPECT_NE(f.exists_in("archive", p.name), f.exists_in("quarantine", p.name));
        std::vector<std::string> terminal;
        for (const auto& e : events.at(p.name)) {
            if (kTerminalEvents.contains(e)) terminal.push_back(e);
        }
        const std::string want = runs_command(p.kind) ? "failed" : terminal_event(p.kind);
        EXPECT_EQ(terminal, std::vector<std::string>{want});
    }
    expect_chain_intact(f);

    fs::remove_all(f.spool + "/fill");
    const Planned status = f.publish_kind(Kind::Status);
    EXPECT_EQ(f.drain_logged(service_log), 0);
    EXPECT_EQ(f.state_of(status.name), "done");
    EXPECT_EQ(f.total_runs(), 1u);
}

// The state dir full before the drain starts: it stops while acknowledging,
// before claiming anything, says so in service.log, and so does every drain
// after it (a mutating request included) until there is space again.
TEST_F(DiskFull, StateDirFullNothingIsClaimedUntilThereIsSpace) {
    FaultFixture f;
    Unmount guard;
    if (const std::string why = state_on_tmpfs(f, guard); !why.empty()) GTEST_SKIP() << why;
    const std::string service_log = f.state + "/service.log";
    const std::size_t runs_before = f.total_runs();
    ASSERT_TRUE(fill_filesystem(f.state));

    std::mt19937 rng(11);
    auto batch = f.publish_mixed(rng, 40);
    EXPECT_EQ(f.drain_logged(service_log), 1);
    EXPECT_NE(last_line(read_file(service_log))
                  .find("hostbridge-executor: the audit log cannot be written"),
              std::string::npos)
        << read_file(service_log);
    for (const Planned& p : batch) EXPECT_TRUE(f.exists_in("requests", p.name)) << p.name;
    EXPECT_EQ(f.total_runs(), runs_before);

    const Planned restart = f.publish_kind(Kind::Restart);
    const std::size_t lines_before = lines_of(read_file(service_log));
    EXPECT_EQ(f.drain_logged(service_log), 1);
    EXPECT_EQ(lines_of(read_file(service_log)), lines_before + 1);
    EXPECT_NE(last_line(read_file(service_log)).find("the audit log cannot be written"),
              std::string::npos);
    EXPECT_EQ(f.total_runs(), runs_before);
    EXPECT_TRUE(f.exists_in("requests", restart.name));

    // Space again: everything is served, exactly once.
    fs::remove(f.state + "/filler");
    EXPECT_EQ(f.drain_logged(service_log), 0);
    batch.push_back(restart);
    expect_intact(f, batch, "after space returned");
    expect_every_run_was_recorded_first(f);
    expect_chain_intact(f);
}

// The state dir fills up mid-drain (the stack fills it while it runs): the
// drain finishes the request in hand, stops with one line in service.log,
// runs nothing without a durable `started` record, and leaves the rest in
// requests/ until there is space; then every request is served once.
TEST_F(DiskFull, StateDirFillingMidDrainStopsTheDrainAndNothingRunsUnrecorded) {
    FaultFixture f;
    Unmount guard;
    if (const std::string why = state_on_tmpfs(f, guard); !why.empty()) GTEST_SKIP() << why;
    const std::string service_log = f.state + "/service.log";
    const std::size_t runs_before = f.total_runs();

    f.stack_fills(f.state);
    std::vector<Planned> batch = {f.publish_kind(Kind::Restart)};
    std::mt19937 rng(12);
    for (const Planned& p : f.publish_mixed(rng, 30)) batch.push_back(p);
    EXPECT_EQ(f.drain_logged(service_log), 1);
    EXPECT_NE(last_line(read_file(service_log)).find("the audit log cannot be written"),
              std::string::npos)
        << read_file(service_log);
    EXPECT_EQ(f.count("processing"), 0u);
    EXPECT_GE(f.total_runs(), runs_before + 1) << "the filling restart ran";
    std::size_t waiting = 0;
    for (const Planned& p : batch) waiting += f.exists_in("requests", p.name);
    EXPECT_GT(waiting, 0u) << "the drain should have stopped before the end of the batch";
    expect_every_run_was_recorded_first(f);

    // While it cannot write the log, no drain runs anything.
    const Planned restart = f.publish_kind(Kind::Restart);
    const std::size_t runs_stopped = f.total_runs();
    EXPECT_EQ(f.drain_logged(service_log), 1);
    EXPECT_EQ(f.total_runs(), runs_stopped);
    EXPECT_TRUE(f.exists_in("requests", restart.name));

    fs::remove(f.state + "/filled-by-stack");
    EXPECT_EQ(f.drain_logged(service_log), 0);
    batch.push_back(restart);
    // The request in hand when the log filled was answered and moved, but
    // its terminal event could not be written: at most that one lacks it.
    const auto events = f.events();
    std::vector<Planned> rest;
    int unrecorded = 0;
    for (const Planned& p : batch) {
        bool terminal = false;
        if (events.contains(p.name)) {
            for (const auto& e : events.at(p.name)) terminal |= kTerminalEvents.contains(e);
        }
        if (terminal) {
            rest.push_back(p);
            continue;
        }
        ++unrecorded;
        SCOPED_TRACE(p.name);
        EXPECT_FALSE(f.exists_in("requests", p.name));
        EXPECT_FALSE(f.exists_in("processing", p.name));
        if (on_schema(p.kind)) {
            const std::string state = f.state_of(p.name);
            EXPECT_TRUE(state == "done" || state == "denied" || state == "failed") << state;
        }
    }
    EXPECT_LE(unrecorded, 1);
    expect_intact(f, rest, "after space returned");
    expect_every_run_was_recorded_first(f);
    expect_chain_intact(f);
}

// A read-only state dir: the drain refuses before it touches the spool (not
// even an acknowledgement) with one line on stderr. (service.log lives in
// the state dir, so under the unit systemd cannot open it either.)
TEST_F(DiskFull, StateDirReadOnlyTheDrainTouchesNothing) {
    FaultFixture f;
    Unmount guard;
    if (const std::string why = state_on_tmpfs(f, guard); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(remount(f.state, MS_RDONLY, "")) << std::strerror(errno);
    std::mt19937 rng(13);
    const auto batch = f.publish_mixed(rng, 10);
    const std::size_t responses = f.count("responses"), archived = f.count("archive");
    const std::size_t runs_before = f.total_runs();

    const std::string err_path = f.root + "/stderr-read-only";
    EXPECT_EQ(f.drain_logged(err_path), 1);
    const std::string err = read_file(err_path);
    EXPECT_EQ(lines_of(err), 1u) << err;
    EXPECT_NE(err.find("the audit log in " + f.state + " cannot be written"), std::string::npos)
        << err;
    EXPECT_NE(err.find("Read-only file system"), std::string::npos) << err;
    for (const Planned& p : batch) EXPECT_TRUE(f.exists_in("requests", p.name)) << p.name;
    EXPECT_EQ(f.count("responses"), responses);
    EXPECT_EQ(f.count("archive"), archived);
    EXPECT_EQ(f.total_runs(), runs_before);

    ASSERT_TRUE(remount(f.state, 0, "")) << std::strerror(errno);
    EXPECT_EQ(f.drain_logged(f.state + "/service.log"), 0);
    expect_intact(f, batch, "after the remount");
    expect_chain_intact(f);
}

}  // namespace
}  // namespace hb::test
