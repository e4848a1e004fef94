// Where the agent clients look for the spool (docs/PROTOCOL.md, "Agent
// clients"; the order is in docs/agent-clients.md): the installed copy's
// own directory, --project-dir (C++), HOSTBRIDGE_SPOOL, REPO_ROOT, the git
// top level. Each case publishes with --no-wait and looks where it landed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/client/client_harness.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

class ClientDiscoveryTest : public ::testing::TestWithParam<ClientKind> {
  protected:
    void SetUp() override {
        if (auto why = client_unavailable(GetParam()); !why.empty()) GTEST_SKIP() << why;
        // Canonical: git reports physical paths.
        root_ = fs::canonical(dir_.path()).string();
        fs::create_directories(root_ + "/elsewhere");
    }

    // A project with a spool, optionally a git work tree.
    std::string make_project(const std::string& rel, bool git) {
        std::string project = root_ + "/" + rel;
        make_spool(project + "/untracked/hostbridge");
        fs::create_directories(project + "/src/deep");
        if (git) init_git(project);
        return project;
    }

    static void init_git(const std::string& dir) {
        // A real repository where git exists (the sh client asks git), a
        // bare .git directory where it does not (every client walks up).
        if (::access("/usr/bin/git", X_OK) == 0) {
            ASSERT_EQ(run_program({"/usr/bin/git", "init", "-q", dir}), 0);
        } else {
            fs::create_directories(dir + "/.git");
        }
    }

    ClientResult publish(const std::vector<std::string>& env, const std::string& cwd,
                         std::vector<std::string> args = {}) {
        ClientOptions options;
        options.env = env;
        options.cwd = cwd;
        args.insert(args.end(), {"--no-wait", "ping"});
        return run_client(GetParam(), args, options);
    }

    static size_t requests_in(const std::string& project) {
        return files_under(project + "/untracked/hostbridge/requests").size();
    }

    TempDir dir_;
    std::string root_;
};

INSTANTIATE_TEST_SUITE_P(AllClients, ClientDiscoveryTest, ::testing::ValuesIn(kAllClients),
                         param_name);

TEST_P(ClientDiscoveryTest, NoSpoolAnywhereIsAUsageError) {
    ClientResult r = publish({}, root_ + "/elsewhere");
    EXPECT_EQ(r.exit_code, 64) << r.err;
    EXPECT_NE(r.err.find("HOSTBRIDGE_SPOOL"), std::string::npos) << r.err;
}

TEST_P(ClientDiscoveryTest, AHostbridgeSpoolThatIsNoSpoolIsNotSecondGuessed) {
    std::string project = make_project("p", /*git=*/true);
    ClientResult r = publish({"HOSTBRIDGE_SPOOL=" + root_ + "/elsewhere"}, project + "/src");
    EXPECT_EQ(r.exit_code, 64) << r.err;
    EXPECT_EQ(requests_in(project), 0u);
}

TEST_P(ClientDiscoveryTest, GitTopLevelFromASubdirectory) {
    std::string project = make_project("p", /*git=*/true);
    ClientResult r = publish({}, project + "/src/deep");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(requests_in(project), 1u);
}

TEST_P(ClientDiscoveryTest, RepoRootComesBeforeGit) {
    std::string here = make_project("here", /*git=*/true);
    std::string there = make_project("there", /*git=*/false);
    ClientResult r = publish({"REPO_ROOT=" + there}, here + "/src");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(requests_in(there), 1u);
    EXPECT_EQ(requests_in(here), 0u);
}

TEST_P(ClientDiscoveryTest, ARepoRootWithoutASpoolFallsBackToGit) {
    std::string here = make_project("here", /*git=*/true);
    ClientResult r = publish({"REPO_ROOT=" + root_ + "/elsewhere"}, here + "/src");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(requests_in(here), 1u);
}

TEST_P(ClientDiscoveryTest, HostbridgeSpoolComesBeforeRepoRoot) {
    std::string a = make_project("a", /*git=*/false);
    std::string b = make_project("b", /*git=*/false);
    ClientResult r = publish({"HOSTBRIDGE_SPOOL=" + a + "/untracked/hostbridge", "REPO_ROOT=" + b},
                             root_ + "/elsewhere");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(requests_in(a), 1u);
    EXPECT_EQ(requests_in(b), 0u);
}

// --project-dir is the C++ client's alone.
class CppDiscoveryTest : public ClientDiscoveryTest {};
INSTANTIATE_TEST_SUITE_P(Cpp, CppDiscoveryTest,
                         ::testing::Values(ClientKind::Cpp, ClientKind::Agent), param_name);

TEST_P(CppDiscoveryTest, ProjectDirComesFirst) {
    std::string a = make_project("a", /*git=*/false);
    std::string b = make_project("b", /*git=*/false);
    ClientResult r =
        publish({"HOSTBRIDGE_SPOOL=" + b + "/untracked/hostbridge"}, root_, {"--project-dir", a});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(requests_in(a), 1u);
    EXPECT_EQ(requests_in(b), 0u);

    ClientResult missing = publish({}, root_, {"--project-dir", root_ + "/elsewhere"});
    EXPECT_EQ(missing.exit_code, 64) << missing.err;
    EXPECT_NE(missing.err.find("HOSTBRIDGE_SPOOL"), std::string::npos) << missing.err;
}

// Only the sh client is installed into the spool.
class ShellDiscoveryTest : public ClientDiscoveryTest {};
INSTANTIATE_TEST_SUITE_P(Shells, ShellDiscoveryTest,
                         ::testing::Values(ClientKind::Dash, ClientKind::BusyboxSh,
                                           ClientKind::BashPosix),
                         param_name);

TEST_P(ShellDiscoveryTest, TheCopyInstalledInTheSpoolUsesItsOwnDirectory) {
    std::string mine = make_project("mine", /*git=*/false);
    std::string other = make_project("other", /*git=*/false);
    const std::string copy = mine + "/untracked/hostbridge/request";
    fs::copy_file(HB_CLIENT_SCRIPT, copy);

    // Called by absolute path, with every other hint pointing elsewhere.
    ClientOptions options;
    options.script = copy;
    options.env = {"HOSTBRIDGE_SPOOL=" + other + "/untracked/hostbridge", "REPO_ROOT=" + other};
    options.cwd = other;
    ClientResult r = run_client(GetParam(), {"--no-wait", "ping"}, options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(requests_in(mine), 1u);
    EXPECT_EQ(requests_in(other), 0u);

    // And by a bare name from inside the spool.
    options.script = "request";
    options.cwd = mine + "/untracked/hostbridge";
    r = run_client(GetParam(), {"--no-wait", "ping"}, options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(requests_in(mine), 2u);
}

}  // namespace
}  // namespace hb::test
