// `hostbridge policy edit` (admin/commands/policy_edit.cpp): policy.conf
// changed in the person's editor, put in place only when the executor's
// parser understands every line and nobody changed it meanwhile, with
// AGENT.md and the tool manifest written anew, so that doctor finds
// nothing to report for the edit the docs describe (a hand edit left both
// behind: two PROBLEMs). A refused edit is kept and continued.
#include <gtest/gtest.h>

#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

class PolicyEdit : public ::testing::Test {
  protected:
    void SetUp() override {
        Ran run = home.hostbridge(install_args(project, {"--no-systemd"}));
        ASSERT_EQ(run.code, 0) << run.out << run.err;
    }
    // An "editor": a script run as `EDITOR FILE`.
    std::string editor(const std::string& name, const std::string& script) const {
        const std::string path = root.path(name);
        write_file(path, "#!/bin/sh\n" + script, 0755);
        return path;
    }
    Ran edit(const std::string& with) const {
        return home.hostbridge({"policy", "edit", "--slug", "demo-app"}, "",
                               {"VISUAL=", "EDITOR=" + with});
    }
    std::string policy() const { return home.config_dir("demo-app") + "/policy.conf"; }

    TempDir root{"cli"};
    Home home{root.path()};
    Project project{root.path(), "demo-app"};
};

TEST_F(PolicyEdit, AnEditIsPutInPlaceAndWhatTheAgentReadsFollows) {
    const std::string deny =
        editor("deny", "sed -i 's/^MODE_restart=auto$/MODE_restart=deny/' \"$1\"\n");
    Ran run = edit(deny);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(has_line(read_file(policy()), "MODE_restart=deny")) << read_file(policy());
    EXPECT_TRUE(contains(run.out, "+MODE_restart=deny")) << run.out;
    EXPECT_TRUE(contains(run.out, project.spool() + "/AGENT.md: updated")) << run.out;
    EXPECT_FALSE(exists(policy() + ".edit"));
    // AGENT.md now tells the agent, and doctor is content.
    EXPECT_TRUE(contains(read_file(project.spool() + "/AGENT.md"), "restart")) << run.out;
    Ran doctor = home.hostbridge({"doctor", "--slug", "demo-app"});
    EXPECT_EQ(doctor.code, 0) << doctor.out;
    EXPECT_FALSE(contains(doctor.out, "PROBLEM")) << doctor.out;
    EXPECT_TRUE(contains(doctor.out, "the agent's tool manifest matches the policy")) << doctor.out;
}

TEST_F(PolicyEdit, ALineTheExecutorWouldNotUnderstandIsRefusedAndTheEditKeptAndContinued) {
    const std::string before = read_file(policy());
    const std::string bad = editor("bad", "echo 'MODE_restart=confirm' >>\"$1\"\n");
    Ran run = edit(bad);
    EXPECT_EQ(run.code, 1);
    EXPECT_TRUE(contains(run.err, "the edit is not put in place")) << run.err;
    EXPECT_TRUE(contains(run.err, "confirm")) << run.err;
    EXPECT_EQ(read_file(policy()), before);
    EXPECT_TRUE(contains(read_file(policy() + ".edit"), "MODE_restart=confirm"));
    // The next edit starts from the kept copy: fixing its last line is enough.
    const std::string fix =
        editor("fix", "sed -i 's/^MODE_restart=confirm$/MODE_restart.db=deny/' \"$1\"\n");
    Ran again = edit(fix);
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_TRUE(contains(again.out, "continuing from the edit kept in")) << again.out;
    EXPECT_TRUE(has_line(read_file(policy()), "MODE_restart.db=deny"));
    EXPECT_FALSE(exists(policy() + ".edit"));
}

TEST_F(PolicyEdit, AFailedEditorOrAFileChangedMeanwhileChangesNothing) {
    const std::string before = read_file(policy());
    Ran failed = edit(editor("fails", "echo MODE_ping=deny >>\"$1\"; exit 3\n"));
    EXPECT_EQ(failed.code, 1);
    EXPECT_EQ(read_file(policy()), before);
    ASSERT_EQ(::unlink((policy() + ".edit").c_str()), 0);
    // Someone else writes policy.conf while the editor is open.
    Ran raced = edit(
        editor("races", "echo '# by hand' >>'" + policy() + "'; echo MODE_ping=deny >>\"$1\"\n"));
    EXPECT_EQ(raced.code, 1);
    EXPECT_TRUE(contains(raced.err, "changed while it was being edited")) << raced.err;
    EXPECT_TRUE(contains(read_file(policy()), "# by hand"));
    EXPECT_FALSE(contains(read_file(policy()), "MODE_ping=deny"));
}

TEST_F(PolicyEdit, UpAndRebuildSetAutoAreSaidToStayAskWithoutAnEngineUser) {
    Ran run = edit(editor("auto", "sed -i 's/^MODE_up=ask$/MODE_up=auto/' \"$1\"\n"));
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_TRUE(contains(run.out, "note: MODE_up=auto stays ask on this install")) << run.out;
}

// The form for scripts and tests: --from FILE is the edit, no editor runs,
// and the rest is the same (the check, the refusal, what the agent reads).
TEST_F(PolicyEdit, FromAFileTheEditIsMadeWithoutAnEditorAndDoctorIsContent) {
    const std::string ran = root.path("editor-ran");
    const std::string editor_path = editor("marks", "touch '" + ran + "'\n");
    const std::string before = read_file(policy());
    const std::string bad = root.path("bad.conf");
    write_file(bad, before + "MODE_restart=confirm\n");
    const auto edit_from = [&](const std::string& file) {
        return home.hostbridge({"policy", "edit", "--slug", "demo-app", "--from", file}, "",
                               {"VISUAL=", "EDITOR=" + editor_path});
    };
    Ran refused = edit_from(bad);
    EXPECT_EQ(refused.code, 1) << refused.out << refused.err;
    EXPECT_TRUE(contains(refused.err, "the edit is not put in place")) << refused.err;
    EXPECT_TRUE(contains(refused.err, "confirm")) << refused.err;
    EXPECT_EQ(read_file(policy()), before);

    std::string text = before;
    const auto at = text.find("MODE_restart=auto");
    ASSERT_NE(at, std::string::npos) << text;
    const std::string good = root.path("good.conf");
    write_file(good, text.replace(at, 17, "MODE_restart=deny"));
    Ran run = edit_from(good);
    ASSERT_EQ(run.code, 0) << run.out << run.err;
    EXPECT_FALSE(exists(ran)) << "an editor ran";
    EXPECT_TRUE(has_line(read_file(policy()), "MODE_restart=deny")) << read_file(policy());
    EXPECT_FALSE(exists(policy() + ".edit"));
    Ran doctor = home.hostbridge({"doctor", "--slug", "demo-app"});
    EXPECT_EQ(doctor.code, 0) << doctor.out;
    EXPECT_FALSE(contains(doctor.out, "PROBLEM")) << doctor.out;

    Ran missing = edit_from(root.path("absent.conf"));
    EXPECT_EQ(missing.code, 1);
    EXPECT_TRUE(contains(missing.err, "policy.conf is unchanged")) << missing.err;
    Ran suggest = home.hostbridge({"policy", "suggest", "--slug", "demo-app", "--from", good});
    EXPECT_EQ(suggest.code, 2);
    EXPECT_TRUE(contains(suggest.err, "--from goes with `policy edit`")) << suggest.err;
}

TEST_F(PolicyEdit, WriteAndYesBelongToSuggest) {
    Ran run = home.hostbridge({"policy", "edit", "--slug", "demo-app", "--write"});
    EXPECT_EQ(run.code, 2);
    EXPECT_TRUE(contains(run.err, "go with `policy suggest`")) << run.err;
}

}  // namespace
}  // namespace hb::test
