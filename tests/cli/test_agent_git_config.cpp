// Issue 18 and issue 19 item 4: the agent owns the checkout, `.git/`
// included. Whatever it writes there (a `.git/config` naming programs, an
// include, a filter with its .gitattributes, a `.git` file pointing
// elsewhere, a symlinked `.git/info`), no admin command runs a program it
// planted, and install writes nothing outside the checkout through `.git`.
//
// Every planted program is a script inside the checkout that appends a line
// to a marker file outside it. Each attack first shows, with plain git, that
// the same configuration does run the program (so the test can fail), then
// runs every admin command in the checkout and asserts the marker never
// appears.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class AgentGitConfig : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(admin::make_dirs(root.path() + "/markers", 0755).ok());
        // A committed project, so git has an index to refresh (fsmonitor)
        // and a tree to compare (filters, diff.external).
        git({"add", "-A"});
        git({"commit", "-q", "-m", "initial"});
    }

    // Plain git as a person would run it in the checkout: no global or
    // system configuration, no pager override from the test's environment.
    admin::RunResult git(const std::vector<std::string>& args) const {
        std::vector<std::string> argv = {"/usr/bin/git", "-c", "user.name=t", "-c",
                                         "user.email=t@example.invalid"};
        argv.insert(argv.end(), args.begin(), args.end());
        admin::RunOptions options;
        options.cwd = project.dir;
        options.env_set = {"HOME=" + home.home, "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"};
        options.env_unset = {"GIT_PAGER",
                             "PAGER",
                             "GIT_DIR",
                             "GIT_WORK_TREE",
                             "GIT_INDEX_FILE",
                             "GIT_CONFIG_GLOBAL",
                             "GIT_CONFIG_PARAMETERS",
                             "GIT_CONFIG_COUNT"};
        auto ran = admin::run_process(argv, options);
        EXPECT_TRUE(ran.ok());
        return ran ? *ran : admin::RunResult{};
    }

    // `git ARGS` on a terminal (the pager only starts when stdout is one).
    void git_on_terminal(const std::vector<std::string>& args) const {
        Command command;
        command.argv = {"/usr/bin/git"};
        command.argv.insert(command.argv.end(), args.begin(), args.end());
        command.cwd = project.dir;
        command.env = environment_with({"HOME=" + home.home, "GIT_CONFIG_NOSYSTEM=1", "TERM=xterm"},
                                       {"GIT_PAGER", "PAGER", "GIT_DIR", "GIT_WORK_TREE"});
        Interactive terminal(command);
        terminal.finish();
    }

    // A program of the agent's, inside the checkout, that leaves a trace
    // outside it. It reads nothing, so it never blocks whoever started it.
    std::string plant_program(const std::string& rel) const {
        const std::string path = project.dir + "/" + rel;
        write_file(path,
                   "#!/bin/sh\n"
                   "printf '%s\\n' \"" +
                       rel + " $* (cwd $(pwd))\" >> '" + marker() + "'\n" + "exit 0\n",
                   0755);
        return path;
    }

    void append_git_config(const std::string& git_dir, const std::string& text) const {
        write_file(git_dir + "/config", read_file(git_dir + "/config") + text);
    }

    [[nodiscard]] std::string marker() const { return root.path() + "/markers/ran"; }
    [[nodiscard]] std::string ran() const { return exists(marker()) ? read_file(marker()) : ""; }

    // The control: `what` shows plain git runs the planted program.
    void expect_git_runs_it(const std::string& what) {
        EXPECT_TRUE(exists(marker())) << "the control (" << what
                                      << ") did not run the planted program, so this test "
                                         "proves nothing";
        ::unlink(marker().c_str());
    }

    // Every admin command, in the checkout, as the person would run them.
    // `installs` is false where install is expected to refuse.
    void run_every_admin_command(bool installs = true) {
        const std::string slug = "demo-app";
        auto step = [&](const std::string& name, const std::vector<std::string>& args) {
            Ran run = home.hostbridge(args, project.dir);
            EXPECT_FALSE(exists(marker())) << "hostbridge " << name << " ran a planted program:\n"
                                           << ran() << "\nout: " << run.out << "\nerr: " << run.err;
            ::unlink(marker().c_str());
            return run;
        };
        Ran install = step("install", install_args(project, {"--no-systemd"}));
        if (!installs) {
            EXPECT_EQ(install.code, 1) << install.out << install.err;
            return;
        }
        ASSERT_EQ(install.code, 0) << install.out << install.err;
        Ran doctor = step("doctor", {"doctor", "--slug", slug});
        EXPECT_TRUE(contains(doctor.out, "ok:      spool ignored by git"))
            << doctor.out << doctor.err;
        // A change for approve to show (and run diff on).
        write_file(project.stack, read_file(project.stack) + "echo changed\n", 0755);
        Ran approve = step("approve", {"approve", "--slug", slug, "--yes"});
        EXPECT_EQ(approve.code, 0) << approve.out << approve.err;
        EXPECT_TRUE(has_line(approve.out, "+echo changed")) << approve.out;
        Ran list = step("list", {"list"});
        EXPECT_TRUE(contains(list.out, slug)) << list.out << list.err;
        Ran audit = step("audit", {"audit", "--slug", slug});
        EXPECT_EQ(audit.code, 0) << audit.err;
        // request finds the spool through `.git` itself, and by --project-dir.
        Ran request = step("request", {"request", "--no-wait", "ping"});
        EXPECT_EQ(request.code, 0) << request.out << request.err;
        Ran request_dir = step("request --project-dir",
                               {"request", "--project-dir", project.dir, "--no-wait", "ping"});
        EXPECT_EQ(request_dir.code, 0) << request_dir.out << request_dir.err;
        Ran again = step("install (again)", install_args(project, {"--no-systemd"}));
        EXPECT_EQ(again.code, 0) << again.out << again.err;
        Ran uninstall = step("uninstall", {"uninstall", "--slug", slug});
        EXPECT_EQ(uninstall.code, 0) << uninstall.out << uninstall.err;
    }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(AgentGitConfig, CoreFsmonitorNeverRuns) {
    const std::string prog = plant_program("tools/fsmonitor");
    append_git_config(project.dir + "/.git", "[core]\n\tfsmonitor = " + prog + "\n");
    git({"status", "--porcelain"});
    expect_git_runs_it("git status");
    run_every_admin_command();
}

TEST_F(AgentGitConfig, CoreHooksPathNeverRuns) {
    for (const char* hook : {"pre-commit", "post-checkout", "post-index-change",
                             "reference-transaction", "fsmonitor-watchman", "pre-auto-gc"}) {
        plant_program(std::string("tools/hooks/") + hook);
    }
    append_git_config(project.dir + "/.git",
                      "[core]\n\thooksPath = " + project.dir + "/tools/hooks\n");
    git({"commit", "-q", "--allow-empty", "-m", "control"});
    expect_git_runs_it("git commit");
    run_every_admin_command();
}

TEST_F(AgentGitConfig, CorePagerNeverRuns) {
    const std::string prog = plant_program("tools/pager");
    append_git_config(project.dir + "/.git", "[core]\n\tpager = " + prog + "\n");
    git_on_terminal({"log"});
    expect_git_runs_it("git log on a terminal");
    run_every_admin_command();
}

TEST_F(AgentGitConfig, AnIncludedFileNeverTakesEffect) {
    const std::string prog = plant_program("tools/included");
    write_file(project.dir + "/tools/evil.gitconfig",
               "[core]\n\tfsmonitor = " + prog + "\n\tpager = " + prog +
                   "\n\thooksPath = " + project.dir + "/tools\n");
    // Relative to the including file: .git/../tools/evil.gitconfig.
    append_git_config(project.dir + "/.git", "[include]\n\tpath = ../tools/evil.gitconfig\n");
    git({"status", "--porcelain"});
    expect_git_runs_it("git status, through the include");
    run_every_admin_command();
}

TEST_F(AgentGitConfig, AFilterWithItsAttributesNeverRuns) {
    const std::string prog = plant_program("tools/filter");
    append_git_config(project.dir + "/.git",
                      "[filter \"evil\"]\n\tclean = " + prog + "\n\tsmudge = " + prog + "\n");
    write_file(project.dir + "/.gitattributes", "* filter=evil\n");
    // A tracked file whose content changed: git status cleans it to compare.
    write_file(project.dir + "/data.txt", "one\n");
    git({"add", "data.txt"});
    expect_git_runs_it("git add");
    write_file(project.dir + "/data.txt", "two\n");
    run_every_admin_command();
}

TEST_F(AgentGitConfig, DiffExternalAndTextconvNeverRun) {
    const std::string prog = plant_program("tools/differ");
    append_git_config(project.dir + "/.git",
                      "[diff]\n\texternal = " + prog + "\n[diff \"evil\"]\n\ttextconv = " + prog +
                          "\n[core]\n\teditor = " + prog + "\n\tsshCommand = " + prog + "\n");
    write_file(project.dir + "/.gitattributes", "* diff=evil\n");
    write_file(project.compose, read_file(project.compose) + "# changed\n");
    git({"diff"});
    expect_git_runs_it("git diff");
    run_every_admin_command();
}

// The proof that no configuration of the checkout's is read at all, not
// only the settings listed above: a `.git/config` git cannot parse stops
// every plain git command, and no admin command notices it.
TEST_F(AgentGitConfig, AGitConfigGitCannotParseChangesNothing) {
    write_file(project.dir + "/.git/config", "[core\n\tfsmonitor = \"\n");
    EXPECT_EQ(git({"status", "--porcelain"}).exit_code, 128);
    run_every_admin_command();
    EXPECT_TRUE(has_line(read_file(project.dir + "/.git/info/exclude"), "/untracked/hostbridge/"));
}

// The answers are still right: files of the spool in the index (read from a
// copy) get the warning, with fsmonitor planted beside them.
TEST_F(AgentGitConfig, TrackedSpoolFilesAreStillFound) {
    write_file(project.spool() + "/old.json", "{}\n");
    git({"add", "-f", "untracked/hostbridge/old.json"});
    const std::string prog = plant_program("tools/fsmonitor");
    append_git_config(project.dir + "/.git", "[core]\n\tfsmonitor = " + prog + "\n");
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, "git tracks files under untracked/hostbridge")) << run.err;
    EXPECT_FALSE(exists(marker())) << ran();
}

// `.git` is a file naming a repository outside the checkout (as a linked
// worktree or a submodule has); that repository's config plants programs.
TEST_F(AgentGitConfig, AGitdirFilePointingElsewhereIsNeverFollowed) {
    const std::string prog = plant_program("tools/elsewhere");
    const std::string outside = root.path() + "/elsewhere.git";
    ASSERT_EQ(::rename((project.dir + "/.git").c_str(), outside.c_str()), 0);
    write_file(project.dir + "/.git", "gitdir: " + outside + "\n");
    append_git_config(
        outside, "[core]\n\tfsmonitor = " + prog + "\n\thooksPath = " + project.dir + "/tools\n");
    // Only the checkout's own .gitignore can make the spool ignored here.
    write_file(project.dir + "/.gitignore", "/untracked/\n");
    const std::string exclude_before = read_file(outside + "/info/exclude");
    git({"status", "--porcelain"});
    expect_git_runs_it("git status, through the gitdir: file");
    run_every_admin_command();
    EXPECT_EQ(read_file(outside + "/info/exclude"), exclude_before);
}

// Without a .gitignore rule the spool would need an exclude entry in a
// repository outside the checkout: install refuses and writes nothing there.
TEST_F(AgentGitConfig, InstallRefusesAnExcludeOutsideTheCheckout) {
    const std::string outside = root.path() + "/elsewhere.git";
    ASSERT_EQ(::rename((project.dir + "/.git").c_str(), outside.c_str()), 0);
    write_file(project.dir + "/.git", "gitdir: " + outside + "\n");
    const std::string exclude_before = read_file(outside + "/info/exclude");
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, "outside the checkout")) << run.err;
    EXPECT_TRUE(contains(run.err, ".gitignore")) << run.err;
    EXPECT_EQ(read_file(outside + "/info/exclude"), exclude_before);
    // Nothing was written: no spool, no config.
    EXPECT_FALSE(exists(project.spool()));
    EXPECT_FALSE(exists(home.config_dir("demo-app")));
}

// Issue 19 item 4: `.git/info` swapped for a symlink to a directory outside.
TEST_F(AgentGitConfig, InstallDoesNotWriteThroughASymlinkedGitInfo) {
    const std::string outside = root.path() + "/outside-info";
    ASSERT_TRUE(admin::make_dirs(outside, 0755).ok());
    write_file(outside + "/exclude", "# the person's own file\n");
    ASSERT_EQ(::rename((project.dir + "/.git/info").c_str(), (root.path() + "/old-info").c_str()),
              0);
    ASSERT_EQ(::symlink(outside.c_str(), (project.dir + "/.git/info").c_str()), 0);
    // Control: git itself follows the link.
    write_file(outside + "/exclude", "# the person's own file\n/untracked/hostbridge/\n");
    EXPECT_EQ(git({"check-ignore", "-q", "untracked/hostbridge/"}).exit_code, 0);
    write_file(outside + "/exclude", "# the person's own file\n");

    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, ".git/info is a symlink")) << run.err;
    EXPECT_EQ(read_file(outside + "/exclude"), "# the person's own file\n");
    EXPECT_EQ(tree(outside), std::vector<std::string>{"exclude"});
    EXPECT_FALSE(exists(home.config_dir("demo-app")));

    // The same with a missing exclude: install must not create one there.
    ASSERT_EQ(::unlink((outside + "/exclude").c_str()), 0);
    run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(tree(outside).empty());
}

TEST_F(AgentGitConfig, InstallDoesNotFollowASymlinkedGitDirOrExclude) {
    // `.git` itself a symlink to a repository outside.
    const std::string outside = root.path() + "/elsewhere.git";
    ASSERT_EQ(::rename((project.dir + "/.git").c_str(), outside.c_str()), 0);
    ASSERT_EQ(::symlink(outside.c_str(), (project.dir + "/.git").c_str()), 0);
    const std::string before = read_file(outside + "/info/exclude");
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, ".git is a symlink")) << run.err;
    EXPECT_EQ(read_file(outside + "/info/exclude"), before);
    ASSERT_EQ(::unlink((project.dir + "/.git").c_str()), 0);
    ASSERT_EQ(::rename(outside.c_str(), (project.dir + "/.git").c_str()), 0);

    // `.git/info/exclude` a symlink to a file outside: neither read nor
    // replaced through.
    const std::string target = root.path() + "/victim";
    write_file(target, "# the person's own file\n");
    const std::string exclude = project.dir + "/.git/info/exclude";
    ASSERT_EQ(::unlink(exclude.c_str()), 0);
    ASSERT_EQ(::symlink(target.c_str(), exclude.c_str()), 0);
    run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, ".git/info/exclude is a symlink")) << run.err;
    EXPECT_EQ(read_file(target), "# the person's own file\n");

    // A FIFO there is refused at once, not waited on.
    ASSERT_EQ(::unlink(exclude.c_str()), 0);
    ASSERT_EQ(::mkfifo(exclude.c_str(), 0644), 0);
    run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    EXPECT_EQ(run.code, 1) << run.out << run.err;
    EXPECT_TRUE(contains(run.err, ".git/info/exclude is not a regular file")) << run.err;
}

// A `gitdir:` file naming a directory inside the checkout is followed, one
// component at a time, and the exclude entry lands there.
TEST_F(AgentGitConfig, AGitdirInsideTheCheckoutGetsTheExclude) {
    ASSERT_EQ(::rename((project.dir + "/.git").c_str(), (project.dir + "/.repo").c_str()), 0);
    write_file(project.dir + "/.git", "gitdir: .repo\n");
    Ran run = home.hostbridge(install_args(project, {"--no-systemd"}), project.dir);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(has_line(read_file(project.dir + "/.repo/info/exclude"), "/untracked/hostbridge/"));
    // git agrees.
    EXPECT_EQ(git({"check-ignore", "-q", "untracked/hostbridge/"}).exit_code, 0);
}

// The helper programs the admin tool starts (the compose CLI probe, the
// user's shell for an alias, diff) never run in the checkout: a program
// that reads its working directory (compose's .env, an rc file's hook, a
// git-aware prompt) sees `/`.
TEST_F(AgentGitConfig, HelperProgramsNeverRunInTheCheckout) {
    const std::string bin = root.path() + "/fakebin";
    ASSERT_TRUE(admin::make_dirs(bin, 0755).ok());
    const std::string cwds = root.path() + "/markers/cwds";
    // A `docker` whose `compose version` works, recording where it ran.
    write_file(bin + "/docker",
               "#!/bin/sh\nprintf 'docker %s\\n' \"$(pwd)\" >> '" + cwds + "'\nexit 0\n", 0755);
    // A shell that knows `mystack` as an alias, recording where it ran.
    write_file(bin + "/fakeshell",
               "#!/bin/sh\nprintf 'shell %s\\n' \"$(pwd)\" >> '" + cwds +
                   "'\nprintf '\\036HB-ALIAS\\nalias mystack=" + project.stack +
                   "\\n\\036HB-TYPE\\nmystack is aliased\\n\\036HB-END\\n'\n",
               0755);
    const std::vector<std::string> env = {"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin",
                                          "SHELL=" + bin + "/fakeshell"};
    std::vector<std::string> args = {"install",      "--project-dir",  project.dir,
                                     "--no-systemd", "--compose-file", project.compose};
    if (::geteuid() == 0) args.push_back("--allow-root");
    Ran compose = home.hostbridge(args, project.dir, env);
    // The probe ran (whatever install made of the fake docker afterwards).
    ASSERT_TRUE(contains(read_file(cwds), "docker ")) << compose.out << compose.err;
    args.insert(args.end(), {"--stack-bin", "mystack"});
    Ran alias = home.hostbridge(args, project.dir, env);
    ASSERT_TRUE(contains(read_file(cwds), "shell ")) << alias.out << alias.err;
    for (const auto& line : split_lines(read_file(cwds))) {
        EXPECT_TRUE(line.ends_with(" /")) << line;
    }
}

}  // namespace
}  // namespace hb::test
