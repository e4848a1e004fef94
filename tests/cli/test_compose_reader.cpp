// The compose reader on real compose files: services, build: as a string
// and as a map, merge keys and anchors, profiles, include/env_file/extends
// (the files they pull in belong to the trusted computing base).
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <map>

#include "admin/compose/compose_reader.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

using Strings = std::vector<std::string>;

class ComposeReader : public ::testing::Test {
  protected:
    admin::ComposeModel read(const std::string& rel) {
        auto model = admin::read_compose(dir + "/" + rel, admin::current_files());
        EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
        return model.ok() ? *model : admin::ComposeModel{};
    }
    std::string error_of(const std::string& rel) {
        auto model = admin::read_compose(dir + "/" + rel, admin::current_files());
        return model.ok() ? "" : model.error().message;
    }
    TempDir root{"cli"};
    std::string dir = root.path();
};

TEST_F(ComposeReader, ServicesBuildAsStringAndMapProfilesAnchors) {
    write_file(dir + "/compose.yaml", R"(name: demo
x-common: &common
  restart: unless-stopped
  environment: &env
    A: "1"
x-buildable: &buildable
  build:
    context: .
    dockerfile: Dockerfile.dev
services:
  api:
    <<: [*common, *buildable]
  web:
    build: ./web
    environment: *env
  db:
    <<: *common
    image: postgres:16
  test-runner:
    build: {context: ., target: test}
    profiles: ["test"]
  docs:
    image: nginx
    profiles: [docs, extra]
  empty:
volumes:
  data: {}
)");
    auto model = read("compose.yaml");
    EXPECT_EQ(model.services, (Strings{"api", "db", "docs", "empty", "test-runner", "web"}));
    EXPECT_EQ(model.buildable, (Strings{"api", "test-runner", "web"}));
    EXPECT_TRUE(model.referenced_files.empty());
}

TEST_F(ComposeReader, IncludeEnvFileAndExtendsAreFollowed) {
    write_file(dir + "/compose.yaml", R"(include:
  - infra/db.yaml
  - path: [infra/cache.yaml]
    env_file: infra/cache.env
services:
  api:
    extends:
      file: base.yaml
      service: base
    env_file: .api.env
  worker:
    extends: api
    env_file:
      - path: worker.env
        required: false
      - shared.env
)");
    write_file(dir + "/infra/db.yaml",
               "services:\n  db:\n    image: postgres\n    env_file: db.env\n");
    write_file(dir + "/infra/cache.yaml", "services:\n  cache:\n    build: ./cache\n");
    write_file(dir + "/base.yaml",
               "services:\n  base:\n    extends:\n      file: root.yaml\n      service: root\n");
    write_file(dir + "/root.yaml", "services:\n  root:\n    build: .\n");
    auto model = read("compose.yaml");
    EXPECT_EQ(model.services, (Strings{"api", "cache", "db", "worker"}));
    // api extends base extends root, which builds; worker extends api.
    EXPECT_EQ(model.buildable, (Strings{"api", "cache", "worker"}));
    EXPECT_EQ(model.referenced_files,
              (Strings{dir + "/.api.env", dir + "/base.yaml", dir + "/infra/cache.env",
                       dir + "/infra/cache.yaml", dir + "/infra/db.env", dir + "/infra/db.yaml",
                       dir + "/root.yaml", dir + "/shared.env", dir + "/worker.env"}));
}

TEST_F(ComposeReader, AMissingIncludeIsListedAndWarnedAbout) {
    write_file(dir + "/compose.yaml", "include: [gone.yaml]\nservices:\n  a:\n    image: x\n");
    auto model = read("compose.yaml");
    EXPECT_EQ(model.referenced_files, (Strings{dir + "/gone.yaml"}));
    ASSERT_EQ(model.warnings.size(), 1u);
    EXPECT_TRUE(contains(model.warnings[0], "pinned as absent"));
}

TEST_F(ComposeReader, ServiceNamesARequestCannotCarryAreLeftOut) {
    write_file(dir + "/compose.yaml",
               "services:\n  Api:\n    image: x\n  web.v2:\n    image: x\n  ok_1:\n    image: x\n");
    auto model = read("compose.yaml");
    EXPECT_EQ(model.services, (Strings{"ok_1"}));
    EXPECT_EQ(model.warnings.size(), 2u);
}

TEST_F(ComposeReader, IncludeCyclesEnd) {
    write_file(dir + "/compose.yaml", "include: [b.yaml]\nservices:\n  a:\n    image: x\n");
    write_file(dir + "/b.yaml", "include: [compose.yaml]\nservices:\n  b:\n    build: .\n");
    auto model = read("compose.yaml");
    EXPECT_EQ(model.services, (Strings{"a", "b"}));
    EXPECT_EQ(model.referenced_files, (Strings{dir + "/b.yaml"}));
}

TEST_F(ComposeReader, ErrorsNameTheFileAndLine) {
    write_file(dir + "/compose.yaml", "services:\n  api:\n    image: [unclosed\n");
    std::string error = error_of("compose.yaml");
    EXPECT_TRUE(contains(error, dir + "/compose.yaml")) << error;
    EXPECT_TRUE(contains(error, "line")) << error;
    write_file(dir + "/list.yaml", "- a\n- b\n");
    EXPECT_TRUE(contains(error_of("list.yaml"), "not a mapping"));
    EXPECT_TRUE(contains(error_of("absent.yaml"), "does not exist"));
    write_file(dir + "/bad.yaml", "services:\n  - api\n");
    EXPECT_TRUE(contains(error_of("bad.yaml"), "services is not a mapping"));
}

// With a run dir to pin into (rootless podman, admin/commands/install.cpp), every bind
// source in the checkout (short and long volume syntax, a secret's and a
// config's file) is rendered as its pin, and listed; a build context stays
// the checkout path (only the bridge's snapshot build reads it) and a bind
// outside the project stays where it is.
TEST_F(ComposeReader, BindSourcesInTheCheckoutAreRenderedAsTheirPins) {
    write_file(dir + "/compose.yaml", R"(services:
  app:
    build: ./app
    volumes:
      - ./src:/srv/src:ro
      - type: bind
        source: ./web/static
        target: /static
      - .:/work
      - /etc/hostname:/etc/host-name:ro
      - data:/data
    secrets: [token]
    configs: [conf]
secrets:
  token:
    file: ./secrets/token
configs:
  conf:
    file: ./conf/app.ini
volumes:
  data: {}
)");
    const std::string run = "/home/u/.cache/hostbridge/run/demo";
    auto model = admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir, run);
    ASSERT_TRUE(model.ok()) << model.error().message;
    EXPECT_EQ(model->pinned_sources,
              (Strings{".", "conf/app.ini", "secrets/token", "src", "web/static"}));
    EXPECT_EQ(model->checkout_paths,
              (Strings{".", "app", "conf/app.ini", "secrets/token", "src", "web/static"}));
    const std::string& text = model->rendered.at(0).text;
    const std::string pins = run + "/.hostbridge-binds/";
    for (const std::string& want : Strings{
             pins + "src:/srv/src:ro", "source: \"" + pins + "web%2Fstatic\"", pins + "%2E:/work",
             "file: \"" + pins + "secrets%2Ftoken\"", "file: \"" + pins + "conf%2Fapp.ini\"",
             "/etc/hostname:/etc/host-name:ro", "data:/data", dir + "/app"}) {
        EXPECT_NE(text.find(want), std::string::npos) << want << " not in\n" << text;
    }
    EXPECT_EQ(text.find(dir + "/src"), std::string::npos) << text;

    auto unpinned = admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir);
    ASSERT_TRUE(unpinned.ok());
    EXPECT_TRUE(unpinned->pinned_sources.empty());
    EXPECT_NE(unpinned->rendered.at(0).text.find(dir + "/src:/srv/src:ro"), std::string::npos);
}

// The install's label (docs/COMPOSE.md, "The project's name") on every
// service of every rendered file, whichever way the file writes its labels,
// replacing one the file gives; the file's own labels kept.
TEST_F(ComposeReader, EveryRenderedServiceCarriesTheInstallLabel) {
    write_file(dir + "/compose.yaml", R"(services:
  bare:
    image: x
  as-map:
    image: x
    labels:
      tier: web
      io.hostbridge.project: forged
  as-list:
    image: x
    labels:
      - tier=worker
      - io.hostbridge.project=forged
      - io.hostbridge.project
      - io.hostbridge.projects=kept
  as-null:
    image: x
    labels:
  child:
    extends: as-map
    container_name: web
    labels:
      - role=child
  from-file:
    extends:
      file: base.yaml
      service: base
)");
    write_file(dir + "/base.yaml", "services:\n  base:\n    image: y\n    labels: {a: b}\n");
    auto model = admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir, "",
                                     "demo_hb0123abcd");
    ASSERT_TRUE(model.ok()) << model.error().message;
    ASSERT_EQ(model->rendered.size(), 2u);
    const YAML::Node services = YAML::Load(model->rendered[0].text)["services"];
    // The definition label (DefinitionsAreHashesOfTheRenderedEntries) aside.
    const auto label_map = [](const YAML::Node& labels) {
        std::map<std::string, std::string> out;
        if (labels.IsMap()) {
            for (const auto& kv : labels)
                out[kv.first.as<std::string>()] = kv.second.as<std::string>();
        } else {
            for (const auto& item : labels) {
                const std::string text = item.as<std::string>();
                const auto eq = text.find('=');
                out[text.substr(0, eq)] = eq == std::string::npos ? "" : text.substr(eq + 1);
            }
        }
        out.erase("io.hostbridge.definition");
        return out;
    };
    using Labels = std::map<std::string, std::string>;
    const std::string own = "demo_hb0123abcd";
    EXPECT_EQ(label_map(services["bare"]["labels"]), (Labels{{"io.hostbridge.project", own}}));
    EXPECT_EQ(label_map(services["as-map"]["labels"]),
              (Labels{{"tier", "web"}, {"io.hostbridge.project", own}}));
    EXPECT_TRUE(services["as-list"]["labels"].IsSequence());
    // The two spellings of the key replaced; the definition label added.
    EXPECT_EQ(services["as-list"]["labels"].size(), 4u);
    EXPECT_EQ(label_map(services["as-list"]["labels"]), (Labels{{"tier", "worker"},
                                                                {"io.hostbridge.projects", "kept"},
                                                                {"io.hostbridge.project", own}}));
    EXPECT_EQ(label_map(services["as-null"]["labels"]), (Labels{{"io.hostbridge.project", own}}));
    EXPECT_EQ(label_map(services["child"]["labels"]),
              (Labels{{"role", "child"}, {"io.hostbridge.project", own}}));
    EXPECT_EQ(services["child"]["extends"].as<std::string>(), "as-map");
    EXPECT_EQ(label_map(services["from-file"]["labels"]), (Labels{{"io.hostbridge.project", own}}));
    // The file another service extends is labelled too.
    const YAML::Node base = YAML::Load(model->rendered[1].text)["services"]["base"];
    EXPECT_EQ(label_map(base["labels"]), (Labels{{"a", "b"}, {"io.hostbridge.project", own}}));

    // Without a project name (a stack's reading, doctor's) nothing is added.
    auto plain = admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir);
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(YAML::Load(plain->rendered[0].text)["services"]["bare"]["labels"].Type(),
              YAML::NodeType::Undefined);
    EXPECT_EQ(label_map(YAML::Load(plain->rendered[0].text)["services"]["as-map"]["labels"]),
              (Labels{{"tier", "web"}, {"io.hostbridge.project", "forged"}}));

    write_file(dir + "/compose.yaml", "services:\n  app:\n    image: x\n    labels: a=b\n");
    auto scalar = admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir, "", own);
    ASSERT_FALSE(scalar.ok());
    EXPECT_NE(scalar.error().message.find("services.app.labels is not a list or a mapping"),
              std::string::npos)
        << scalar.error().message;
}

// The definition label (docs/COMPOSE.md, "Applying an approved edit"): the
// sha256 of each service's rendered entry with every mapping's keys sorted
// and the label itself left out; the model lists the root file's.
TEST_F(ComposeReader, DefinitionsAreHashesOfTheRenderedEntries) {
    const std::string own = "demo_hb0123abcd";
    const auto definitions = [&](const std::string& text) {
        write_file(dir + "/compose.yaml", text);
        auto model =
            admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir, "", own);
        EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
        if (!model.ok()) return std::map<std::string, std::string>{};
        // Each hash is the label its service carries in the rendered file.
        const YAML::Node services = YAML::Load(model->rendered.at(0).text)["services"];
        for (const auto& [service, hash] : model->definitions) {
            EXPECT_EQ(hash.size(), 64u);
            const YAML::Node labels = services[service]["labels"];
            std::string carried;
            if (labels.IsMap()) carried = labels["io.hostbridge.definition"].as<std::string>("");
            for (std::size_t i = 0; labels.IsSequence() && i < labels.size(); ++i) {
                const std::string item = labels[i].as<std::string>();
                if (item.starts_with("io.hostbridge.definition="))
                    carried = item.substr(item.find('=') + 1);
            }
            EXPECT_EQ(carried, hash) << service;
        }
        return model->definitions;
    };
    const auto base = definitions(R"(services:
  app:
    image: x
    environment:
      A: "1"
      B: "2"
    command: [sleep, "1"]
  db:
    image: y
)");
    ASSERT_EQ(base.size(), 2u);
    EXPECT_NE(base.at("app"), base.at("db"));
    // Keys in another order, at both levels: the same definitions.
    EXPECT_EQ(definitions(R"(services:
  db:
    image: y
  app:
    command: [sleep, "1"]
    environment:
      B: "2"
      A: "1"
    image: x
)"),
              base);
    // A label of that name in the file is replaced and never hashed.
    EXPECT_EQ(definitions(R"(services:
  app:
    image: x
    labels:
      io.hostbridge.definition: forged
    environment:
      A: "1"
      B: "2"
    command: [sleep, "1"]
  db:
    image: y
    labels: {io.hostbridge.definition: forged}
)"),
              base);
    // In a list too, either spelling.
    const auto listed = definitions("services:\n  db:\n    image: y\n    labels: [a=b]\n");
    EXPECT_EQ(definitions("services:\n  db:\n    image: y\n    labels: [a=b, "
                          "io.hostbridge.definition=forged, io.hostbridge.definition]\n"),
              listed);
    // A changed value, a list in another order, a quoted number for a
    // plain one: app's definition changes, db's stays.
    for (const char* app : {"    environment:\n      A: \"2\"\n      B: \"2\"\n"
                            "    command: [sleep, \"1\"]\n",
                            "    environment:\n      A: \"1\"\n      B: \"2\"\n"
                            "    command: [\"1\", sleep]\n",
                            "    environment:\n      A: 1\n      B: \"2\"\n"
                            "    command: [sleep, \"1\"]\n"}) {
        const auto changed = definitions(std::string("services:\n  app:\n    image: x\n") + app +
                                         "  db:\n    image: y\n");
        EXPECT_NE(changed.at("app"), base.at("app")) << app;
        EXPECT_EQ(changed.at("db"), base.at("db")) << app;
    }
    // Another project's label is another rendering: another definition.
    write_file(dir + "/compose.yaml", "services:\n  db:\n    image: y\n");
    auto other = admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir, "",
                                     "other_hb0123abcd");
    ASSERT_TRUE(other.ok());
    EXPECT_NE(other->definitions.at("db"), base.at("db"));
    // Without a project name nothing is labelled or listed.
    auto plain = admin::read_compose(dir + "/compose.yaml", admin::current_files(), dir);
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(plain->definitions.empty());
    EXPECT_EQ(plain->rendered.at(0).text.find("io.hostbridge.definition"), std::string::npos);
}

TEST_F(ComposeReader, AnEmptyFileHasNoServices) {
    write_file(dir + "/compose.yaml", "");
    auto model = read("compose.yaml");
    EXPECT_TRUE(model.services.empty());
}

TEST_F(ComposeReader, ReadsThroughTheGivenSource) {
    // Install reads a changed, pinned file through its approved copy.
    write_file(dir + "/compose.yaml", "services:\n  evil:\n    build: .\n");
    admin::FileSource approved =
        [&](const std::string& path) -> Result<std::optional<std::string>> {
        if (path == dir + "/compose.yaml") {
            return std::optional<std::string>("services:\n  api:\n    image: x\n");
        }
        return std::optional<std::string>{};
    };
    auto model = admin::read_compose(dir + "/compose.yaml", approved);
    ASSERT_TRUE(model.ok());
    EXPECT_EQ(model->services, (Strings{"api"}));
    EXPECT_TRUE(model->buildable.empty());
}

}  // namespace
}  // namespace hb::test
