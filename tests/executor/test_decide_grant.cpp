// Grants for a working session through the real drain and parser: a grant
// written exactly as `hostbridge allow --for` writes it (common/grant.hpp)
// lets the executor run a verb policy.conf holds (`ask`) without a person,
// for that verb and service alone, until its deadline and for its runs;
// never a verb held for containment, and never from a file the admin tool
// did not write as it does.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>

#include "common/grant.hpp"
#include "tests/executor/decide_fixture.hpp"

namespace {

using hb::test::StackFixture;
namespace common = hb::common;
using Calls = std::vector<std::vector<std::string>>;

common::Grant grant_for(hb::Verb verb, const std::string& service, std::uint32_t runs = 5) {
    common::Grant g;
    g.id = "0123456789abcdef";
    g.verb = verb;
    if (!service.empty()) g.service = service;
    g.granted_at = std::time(nullptr) - 10;
    g.until = std::time(nullptr) + 1800;
    g.runs = runs;
    return g;
}

std::string grant_dir(const StackFixture& f) {
    return f.state + "/" + std::string(common::kGrantDir);
}

// As `hostbridge allow --for` writes it (admin/commands/grants.cpp).
void write(const StackFixture& f, const common::Grant& g) {
    auto dir = common::open_grant_dir(f.state, true);
    if (!dir || !*dir) throw std::runtime_error("no grants/");
    auto written = common::write_grant((*dir)->get(), g);
    if (!written) throw std::runtime_error(written.error().message);
}

// MODE_restart=ask, and every other verb as the fixture's policy has it.
StackFixture& held_restart(StackFixture& f) {
    f.policy_all_auto_but("MODE_restart=ask\n");
    return f;
}

TEST(DecideGrant, RunsUntilItsBudgetIsUsed) {
    StackFixture f;
    held_restart(f);
    write(f, grant_for(hb::Verb::Restart, "api", 2));
    const std::string first = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(first), "done");
    // The audit names the grant on the run's records.
    const auto started = f.audit_for(first, "started");
    ASSERT_EQ(started.size(), 1u);
    EXPECT_EQ(started[0]["detail"]["grant"]["id"], "0123456789abcdef");
    EXPECT_EQ(started[0]["detail"]["grant"]["runs_left"], 1);
    EXPECT_EQ(f.audit_for(first, "succeeded")[0]["detail"]["grant"]["id"], "0123456789abcdef");

    const std::string second = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(second), "done");
    // Its last run removed it: the third waits for a person.
    EXPECT_FALSE(hb::test::fs::exists(grant_dir(f) + "/0123456789abcdef"));
    const std::string third = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(third), "pending");
    EXPECT_EQ(f.recorded().size(), 2u);
}

TEST(DecideGrant, OneServiceOnly) {
    StackFixture f;
    held_restart(f);
    write(f, grant_for(hb::Verb::Restart, "api"));
    const std::string web = f.publish("restart", "web");
    f.drain();
    EXPECT_EQ(f.state_of(web), "pending");
    // Nor another verb on the same service.
    f.policy_all_auto_but("MODE_restart=ask\nMODE_logs=ask\n");
    const std::string logs = f.publish("logs", "api");
    f.drain();
    EXPECT_EQ(f.state_of(logs), "pending");
    EXPECT_TRUE(f.recorded().empty());
}

TEST(DecideGrant, ExpiredDoesNothing) {
    StackFixture f;
    held_restart(f);
    common::Grant g = grant_for(hb::Verb::Restart, "api");
    g.granted_at = std::time(nullptr) - 100;
    g.until = std::time(nullptr) - 1;
    write(f, g);
    const std::string name = f.publish("restart", "api");
    f.drain();
    EXPECT_EQ(f.state_of(name), "pending");
    EXPECT_TRUE(f.recorded().empty());
    EXPECT_FALSE(hb::test::fs::exists(grant_dir(f) + "/" + g.id));
}

// Round 4's hold (common/engine_hold.hpp) is not the person's to lift for a
// while: without an engine user, up and rebuild stay held whatever a grant
// says, and whatever policy.conf says.
TEST(DecideGrant, NeverForContainment) {
    StackFixture f;
    f.config["accept_uncontained_engine"] = false;
    f.write_config();
    f.policy_all_auto_but("MODE_rebuild=ask\nMODE_up=auto\n");
    write(f, grant_for(hb::Verb::Rebuild, "api"));
    common::Grant up = grant_for(hb::Verb::Up, "");
    up.id = "fedcba9876543210";
    write(f, up);
    const std::string rebuild = f.publish("rebuild", "api");
    const std::string up_request = f.publish("up");
    f.drain();
    EXPECT_EQ(f.state_of(rebuild), "pending");
    EXPECT_EQ(f.state_of(up_request), "pending");
    EXPECT_TRUE(f.recorded().empty());
}

// A grant file the admin tool did not write as it does grants nothing: the
// request waits for a person (fail closed).
TEST(DecideGrant, PlantedFileGrantsNothing) {
    const common::Grant g = grant_for(hb::Verb::Restart, "api");
    const std::string text = common::render_grant(g);
    const auto planted = [&](const std::function<void(const std::string& dir)>& plant) {
        StackFixture f;
        held_restart(f);
        const std::string dir = grant_dir(f);
        hb::test::fs::create_directories(dir);
        ::chmod(dir.c_str(), 0700);
        plant(dir);
        const std::string name = f.publish("restart", "api");
        f.drain();
        return f.state_of(name) + (f.recorded().empty() ? "" : " and it ran");
    };
    const auto file = [&](const std::string& path, const std::string& bytes, mode_t mode) {
        hb::test::write_file(path, bytes);
        ::chmod(path.c_str(), mode);
    };
    // The control: what the admin tool writes is used.
    EXPECT_EQ(planted([&](const std::string& d) { file(d + "/" + g.id, text, 0600); }),
              "done and it ran");
    EXPECT_EQ(planted([&](const std::string& d) { file(d + "/" + g.id, text, 0644); }), "pending")
        << "readable by others";
    EXPECT_EQ(planted([&](const std::string& d) { file(d + "/" + g.id, text, 0620); }), "pending")
        << "writable by the group";
    EXPECT_EQ(planted([&](const std::string& d) {
                  file(d + "/elsewhere", text, 0600);
                  ::symlink((d + "/elsewhere").c_str(), (d + "/" + g.id).c_str());
              }),
              "pending")
        << "a symlink";
    EXPECT_EQ(planted([&](const std::string& d) {
                  file(d + "/../held-copy", text, 0600);
                  ::link((d + "/../held-copy").c_str(), (d + "/" + g.id).c_str());
              }),
              "pending")
        << "a second link";
    EXPECT_EQ(planted([&](const std::string& d) { file(d + "/" + g.id, "{garbage", 0600); }),
              "pending")
        << "garbage";
    EXPECT_EQ(planted([&](const std::string& d) { file(d + "/1111222233334444", text, 0600); }),
              "pending")
        << "renamed: it names another grant";
    common::Grant long_one = g;
    long_one.until = g.granted_at + common::kMaxGrantSeconds + 1;
    EXPECT_EQ(planted([&](const std::string& d) {
                  file(d + "/" + g.id, common::render_grant(long_one), 0600);
              }),
              "pending")
        << "longer than a grant may last";
    common::Grant more = g;
    more.used = 3;
    more.runs = 2;
    EXPECT_EQ(planted([&](const std::string& d) {
                  file(d + "/" + g.id, common::render_grant(more), 0600);
              }),
              "pending")
        << "more used than it allows";
    EXPECT_EQ(planted([&](const std::string& d) {
                  file(d + "/" + g.id, text, 0600);
                  ::chmod(d.c_str(), 0777);
              }),
              "pending")
        << "grants/ writable by others";
    if (::geteuid() == 0) {
        EXPECT_EQ(planted([&](const std::string& d) {
                      file(d + "/" + g.id, text, 0600);
                      ::chown((d + "/" + g.id).c_str(), 65534, 65534);
                  }),
                  "pending")
            << "another user's";
    }
}

}  // namespace
