// admin/compose/build_plan.cpp and admin/install/builder_check.cpp: what install records of each
// buildable service's build (docs/BUILDS.md), read by the one strict compose
// reader from real files, and what doctor says of the builder.
#include <gtest/gtest.h>

#include <filesystem>

#include "admin/compose/build_plan.hpp"
#include "admin/compose/compose_reader.hpp"
#include "admin/install/builder_check.hpp"
#include "tests/support/files.hpp"

namespace hb::admin {
namespace {

class Project {
  public:
    Project() { std::filesystem::create_directories(root_); }
    void write(const std::string& rel, const std::string& text) const {
        tmp_.write("My.Demo-App/" + rel, text);
    }
    [[nodiscard]] const std::string& root() const { return root_; }
    // What install passes (admin/commands/install.cpp, choose_compose_project).
    [[nodiscard]] std::string project() const {
        return install_project_name(root_, root_ + "/compose.yaml");
    }

    std::optional<BuildSettings> plan(ComposeFlavour flavour, std::vector<std::string>& notes,
                                      std::vector<std::string> buildable) const {
        auto model = read_compose(root_ + "/compose.yaml", current_files(), root_);
        EXPECT_TRUE(model) << model.error().message;
        if (!model) return std::nullopt;
        builds_ = model->builds;
        buildable_ = std::move(buildable);
        const std::string engine =
            flavour == ComposeFlavour::PodmanCompose ? "/usr/bin/podman" : "/usr/bin/docker";
        const std::string buildah =
            flavour == ComposeFlavour::PodmanCompose ? "/usr/bin/buildah" : "";
        return plan_builds(
            {root_, root_ + "/compose.yaml", flavour == ComposeFlavour::PodmanCompose, engine,
             &builds_, &buildable_, nullptr, buildah, project()},
            notes);
    }

  private:
    hb::test::TempDir tmp_{"build-plan"};
    std::string root_ = tmp_.path("My.Demo-App");
    mutable std::vector<ComposeBuild> builds_;
    mutable std::vector<std::string> buildable_;
};

TEST(BuildPlan, RecordsContextContainerfileImageAndContainerAsPodmanComposeNamesThem) {
    Project p;
    p.write("compose.yaml",
            "services:\n"
            "  api:\n    build: ./api\n"
            "  web:\n    build:\n      context: web\n      dockerfile: ./docker/Web.Containerfile\n"
            "      target: prod\n      args:\n        MODE: prod\n        TOKEN:\n"
            "    image: registry.example/web:dev\n    container_name: web-main\n");
    p.write("api/Dockerfile", "FROM scratch\n");
    std::vector<std::string> notes;
    const auto plan = p.plan(ComposeFlavour::PodmanCompose, notes, {"api", "web"});
    ASSERT_TRUE(plan);
    EXPECT_TRUE(notes.empty());
    // podman-compose's normalisation of the basename, then this checkout's own part.
    const std::string project = p.project();
    EXPECT_EQ(plan->project, project);
    EXPECT_EQ(project.substr(0, 13), "mydemo-app_hb");
    EXPECT_EQ(plan->engine, "/usr/bin/podman");
    EXPECT_EQ(plan->network, "none");
    ASSERT_EQ(plan->services.size(), 2u);
    const ServiceBuild& api = plan->services[0];
    EXPECT_EQ(api.context, "api");
    EXPECT_EQ(api.containerfile, "Dockerfile");  // the first of the names that exists
    EXPECT_EQ(api.image, project + "_api");
    EXPECT_EQ(api.container, project + "_api_1");
    const ServiceBuild& web = plan->services[1];
    EXPECT_EQ(web.context, "web");
    EXPECT_EQ(web.containerfile, "docker/Web.Containerfile");
    EXPECT_EQ(web.target, "prod");
    EXPECT_EQ(web.args, (std::vector<std::string>{"MODE=prod", "TOKEN"}));
    EXPECT_EQ(web.image, "registry.example/web:dev");
    EXPECT_EQ(web.container, "web-main");
}

TEST(BuildPlan, DockerComposeNamesImagesWithADash) {
    Project p;
    p.write("compose.yaml", "services:\n  api:\n    build: .\n");
    std::vector<std::string> notes;
    const auto plan = p.plan(ComposeFlavour::Docker, notes, {"api"});
    ASSERT_TRUE(plan);
    ASSERT_EQ(plan->services.size(), 1u);
    EXPECT_EQ(plan->services[0].context, ".");
    EXPECT_EQ(plan->services[0].containerfile, "Dockerfile");
    EXPECT_EQ(plan->services[0].image, p.project() + "-api");
}

// Whatever the bridge cannot build from a snapshot exactly as compose would
// is left out, and install says so: its rebuild is refused, never guessed.
TEST(BuildPlan, WhatCannotBeBuiltFromASnapshotIsLeftOutWithAReason) {
    Project p;
    p.write("compose.yaml",
            "services:\n"
            "  base:\n    build: ./base\n"
            "  child:\n    extends: base\n"
            "  outside:\n    build:\n      context: ./o\n      dockerfile: ../Dockerfile\n"
            "  pre:\n    build:\n      context: ./p\n      dockerfile: Containerfile.in\n"
            "  named:\n    build: ./n\n    container_name: n_${X:-1}\n"
            "  dash:\n    build: ./d\n    image: -x\n");
    std::vector<std::string> notes;
    const auto plan = p.plan(ComposeFlavour::PodmanCompose, notes,
                             {"base", "child", "dash", "named", "outside", "pre"});
    ASSERT_TRUE(plan);
    ASSERT_EQ(plan->services.size(), 1u);
    EXPECT_EQ(plan->services[0].service, "base");
    EXPECT_EQ(notes.size(), 4u);  // outside, pre, named, dash; child is the reader's warning
}

TEST(BuildPlan, NoEngineOrNoProjectNameMeansNoBuilds) {
    std::vector<ComposeBuild> builds = {ComposeBuild{"api", ".", "", "", {}, "", ""}};
    std::vector<std::string> buildable = {"api"};
    std::vector<std::string> notes;
    EXPECT_FALSE(plan_builds({"/p/x", "/p/x/compose.yaml", true, "", &builds, &buildable, nullptr,
                              "/usr/bin/buildah", "x_hb12345678"},
                             notes));
    EXPECT_FALSE(plan_builds({"/p/...", "/p/.../compose.yaml", true, "/usr/bin/podman", &builds,
                              &buildable, nullptr, "/usr/bin/buildah", ""},
                             notes));
    EXPECT_EQ(notes.size(), 2u);
    EXPECT_EQ(compose_project_name("_My App!"), "myapp");
}

// Issue 44 item 3: two checkouts with one directory name get two names, and
// neither is what podman-compose 1.0.3 derives by hand (the basename alone).
TEST(BuildPlan, TheProjectNameIsTheBasenameAndAHashOfTheCheckout) {
    const std::string mine = install_project_name("/home/a/raproj", "/home/a/raproj/compose.yaml");
    const std::string other =
        install_project_name("/home/a/own/raproj", "/home/a/own/raproj/compose.yaml");
    EXPECT_NE(mine, other);
    EXPECT_NE(mine, compose_project_name("raproj"));
    // The rule docs/COMPOSE.md gives: `printf %s /home/a/raproj | sha256sum`.
    EXPECT_EQ(mine, "raproj_hbbf952f42");
    EXPECT_TRUE(is_project_name(mine));
    // The compose file's directory names it, the checkout's path hashes it.
    EXPECT_EQ(install_project_name("/p/x", "/p/x/deploy/compose.yaml").substr(0, 9), "deploy_hb");
    // Nothing left of the basename, or a long one: still a valid name.
    EXPECT_EQ(install_project_name("/p/...", "/p/.../compose.yaml").substr(0, 2), "hb");
    EXPECT_TRUE(is_project_name(install_project_name("/p/...", "/p/.../compose.yaml")));
    const std::string long_dir = "/p/" + std::string(80, 'a');
    const std::string long_name = install_project_name(long_dir, long_dir + "/compose.yaml");
    EXPECT_EQ(long_name.size(), 63u);
    EXPECT_TRUE(is_project_name(long_name));
}

TEST(BuilderCheck, PodmanBeforeTheFixesSaysOnlyTheSnapshotAndScreenStandBetween) {
    const BuilderReport old = describe_builder("/usr/bin/podman", "4.3.1");
    EXPECT_NE(old.line.find("podman 4.3.1"), std::string::npos);
    ASSERT_TRUE(old.note);
    EXPECT_NE(old.note->find("CVE-2024-9675"), std::string::npos);
    EXPECT_FALSE(describe_builder("/usr/bin/podman", "5.2.5").note);
    EXPECT_TRUE(describe_builder("/usr/bin/podman", "5.2.4").note);
    EXPECT_TRUE(version_before("4.9.4-rc1", 5, 0, 1));
    EXPECT_FALSE(version_before("garbage", 5, 0, 1));
}

TEST(BuilderCheck, DockerNamesAVersionNoTestRan) {
    const BuilderReport other = describe_builder("/usr/bin/docker", "27.1.1");
    ASSERT_TRUE(other.note);
    EXPECT_NE(other.note->find("no test ran docker 27.1.1"), std::string::npos);
    EXPECT_NE(other.note->find("docker 26.1.5"), std::string::npos);
    EXPECT_TRUE(describe_builder("/usr/bin/docker", "20.10.24+dfsg1").note);
    // Debian 13's own version string is the tested one.
    EXPECT_FALSE(describe_builder("/usr/bin/docker", "26.1.5+dfsg1").note);
    EXPECT_FALSE(describe_builder("/opt/x/usr/bin/docker", "26.1.5").note);
}

}  // namespace
}  // namespace hb::admin
