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
        return plan_builds({root_, root_ + "/compose.yaml", flavour, engine, &builds_, &buildable_,
                            nullptr, buildah},
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
    EXPECT_EQ(plan->project, "mydemo-app");  // podman-compose's normalisation
    EXPECT_EQ(plan->engine, "/usr/bin/podman");
    EXPECT_EQ(plan->network, "none");
    ASSERT_EQ(plan->services.size(), 2u);
    const ServiceBuild& api = plan->services[0];
    EXPECT_EQ(api.context, "api");
    EXPECT_EQ(api.containerfile, "Dockerfile");  // the first of the names that exists
    EXPECT_EQ(api.image, "mydemo-app_api");
    EXPECT_EQ(api.container, "mydemo-app_api_1");
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
    EXPECT_EQ(plan->services[0].image, "mydemo-app-api");
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
    EXPECT_FALSE(plan_builds({"/p/x", "/p/x/compose.yaml", ComposeFlavour::PodmanCompose, "",
                              &builds, &buildable, nullptr, "/usr/bin/buildah"},
                             notes));
    EXPECT_FALSE(plan_builds({"/p/...", "/p/.../compose.yaml", ComposeFlavour::PodmanCompose,
                              "/usr/bin/podman", &builds, &buildable, nullptr, "/usr/bin/buildah"},
                             notes));
    EXPECT_EQ(notes.size(), 2u);
    EXPECT_EQ(compose_project_name("_My App!"), "myapp");
}

TEST(BuilderCheck, PodmanBeforeTheFixesSaysOnlyTheSnapshotAndScreenStandBetween) {
    const BuilderReport old = describe_builder("/usr/bin/podman", "4.3.1");
    EXPECT_NE(old.line.find("podman 4.3.1"), std::string::npos);
    ASSERT_TRUE(old.note);
    EXPECT_NE(old.note->find("CVE-2024-9675"), std::string::npos);
    EXPECT_FALSE(describe_builder("/usr/bin/podman", "5.2.5").note);
    EXPECT_TRUE(describe_builder("/usr/bin/podman", "5.2.4").note);
    EXPECT_FALSE(describe_builder("/usr/bin/docker", "27.1.1").note);
    EXPECT_TRUE(version_before("4.9.4-rc1", 5, 0, 1));
    EXPECT_FALSE(version_before("garbage", 5, 0, 1));
}

}  // namespace
}  // namespace hb::admin
