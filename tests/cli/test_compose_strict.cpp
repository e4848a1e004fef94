// Attacks on the one compose reader (issue 19): what two YAML readers could
// take differently is refused with the file, line and key; the rendered
// file the engine reads carries this reader's meaning and nothing else.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "admin/compose/compose_reader.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

using Strings = std::vector<std::string>;

class ComposeStrict : public ::testing::Test {
  protected:
    Result<admin::ComposeModel> read(const std::string& rel = "compose.yaml") {
        return admin::read_compose(dir + "/" + rel, admin::current_files(), dir);
    }
    std::string error_of(const std::string& rel = "compose.yaml") {
        auto model = read(rel);
        return model.ok() ? "" : model.error().message;
    }
    admin::ComposeModel model_of(const std::string& rel = "compose.yaml") {
        auto model = read(rel);
        EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
        return model.ok() ? *model : admin::ComposeModel{};
    }
    TempDir root{"cli"};
    std::string dir = root.path() + "/proj";
    void SetUp() override { ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0); }
};

TEST_F(ComposeStrict, TwoExtendsKeysAreRefusedWithTheLine) {
    // yaml-cpp's lookup took the first (pinned), PyYAML the last (used).
    write_file(dir + "/compose.yaml", R"(services:
  api:
    image: x
    extends: {file: base.yaml, service: b}
    extends: {file: evil.yaml, service: b}
)");
    std::string error = error_of();
    EXPECT_TRUE(contains(error, "compose.yaml line 5")) << error;
    EXPECT_TRUE(contains(error, "\"extends\" appears twice")) << error;
    EXPECT_TRUE(contains(error, "first on line 4")) << error;
}

TEST_F(ComposeStrict, DuplicateKeysAnywhereAreRefused) {
    write_file(dir + "/compose.yaml", "services:\n  a:\n    image: x\nservices: {}\n");
    EXPECT_TRUE(contains(error_of(), "appears twice"));
    write_file(dir + "/compose.yaml",
               "services:\n  a:\n    image: x\n    environment:\n      K: 1\n      'K': 2\n");
    EXPECT_TRUE(contains(error_of(), "line 6"));
    write_file(dir + "/compose.yaml",
               "x: &a {image: x}\nservices:\n  a:\n    <<: *a\n    <<: *a\n");
    EXPECT_TRUE(contains(error_of(), "\"<<\" appears twice"));
}

TEST_F(ComposeStrict, InterpolationInEveryFileReferenceIsRefused) {
    const Strings cases = {
        "include: [\"base${UNSET}.yaml\"]\nservices: {}\n",
        "include:\n  - path: [b$X.yaml]\nservices: {}\n",
        "include:\n  - path: b.yaml\n    env_file: ${E}.env\nservices: {}\n",
        "services:\n  a:\n    extends: {file: \"base${UNSET}.yaml\", service: b}\n",
        "services:\n  a:\n    image: x\n    env_file: $HOME/.env\n",
        "services:\n  a:\n    image: x\n    env_file:\n      - path: ${P}\n",
        "services:\n  a:\n    build: ${CTX}\n",
        "services:\n  a:\n    build:\n      context: ./$D\n",
        "services:\n  a:\n    image: x\n    volumes: ['${SRC}:/app']\n",
        "services:\n  a:\n    image: x\n    volumes: [\"$SRC:/app\"]\n",
        "services:\n  a:\n    image: x\n    volumes:\n      - {type: bind, source: \"./${S}\", "
        "target: "
        "/a}\n",
        "services:\n  a:\n    image: x\n    volumes:\n      - {type: $T, source: /, target: /a}\n",
        "services:\n  a:\n    image: x\nsecrets:\n  s: {file: \"./${F}\"}\n",
    };
    for (const auto& text : cases) {
        write_file(dir + "/compose.yaml", text);
        std::string error = error_of();
        EXPECT_TRUE(contains(error, "interpolation")) << text << "\n-> " << error;
        EXPECT_TRUE(contains(error, "compose.yaml line ")) << error;
    }
    // Interpolation elsewhere (images, environment, mount targets) is fine:
    // .env is pinned and copied into the run tree.
    write_file(dir + "/compose.yaml",
               "services:\n  a:\n    image: ${IMG:-x}\n    volumes: ['data:${DST}']\n");
    EXPECT_EQ(error_of(), "");
}

TEST_F(ComposeStrict, TheCheckoutUnderAnotherNameIsRefused) {
    // Install used to say "lies outside the project ... not pinned": it is
    // the checkout.
    write_file(dir + "/base.yaml", "services:\n  b:\n    image: x\n");
    write_file(dir + "/compose.yaml", "services:\n  a:\n    extends:\n      file: /proc/self/root" +
                                          dir + "/base.yaml\n      service: b\n");
    std::string error = error_of();
    EXPECT_TRUE(contains(error, "same device and inode")) << error;
    EXPECT_TRUE(contains(error, "compose.yaml line 4")) << error;

    // A symlink outside the project to it (how a bind mount looks too).
    const std::string link = root.path() + "/alias";
    ASSERT_EQ(::symlink(dir.c_str(), link.c_str()), 0);
    for (const std::string& ref :
         Strings{"env_file: " + link + "/x.env", "volumes: ['" + link + "/src:/app']",
                 "volumes: ['../alias:/app']", "build: ../alias/sub"}) {
        write_file(dir + "/compose.yaml", "services:\n  a:\n    image: x\n    " + ref + "\n");
        EXPECT_TRUE(contains(error_of(), "same device and inode")) << ref << ": " << error_of();
    }
}

TEST_F(ComposeStrict, AbsolutePathsIntoTheProjectForPinnedFilesAreRefused) {
    write_file(dir + "/compose.yaml",
               "services:\n  a:\n    image: x\n    env_file: " + dir + "/a.env\n");
    EXPECT_TRUE(contains(error_of(), "by an absolute path"));
}

TEST_F(ComposeStrict, ControlCharactersInAFileReferenceAreRefused) {
    write_file(dir + "/compose.yaml",
               "services:\n  a:\n    image: x\n    env_file: \"a\\e[2J.env\"\n");
    std::string error = error_of();
    EXPECT_TRUE(contains(error, "control characters")) << error;
    EXPECT_TRUE(contains(error, "\\x1b[2J")) << error;
    EXPECT_EQ(error.find('\x1b'), std::string::npos);
}

TEST_F(ComposeStrict, AMergeKeyBombEndsWithAnError) {
    // 8 levels of 12 aliases each: 12^8 nodes if expanded; approve used to
    // spin past 25 s.
    std::string text = "l0: &l0 {a: 1}\n";
    for (int level = 1; level <= 8; ++level) {
        text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + "\n";
        for (int i = 0; i < 12; ++i) {
            text += "  k" + std::to_string(i) + ":\n    <<: *l" + std::to_string(level - 1) + "\n";
        }
    }
    text += "services:\n  api:\n    <<: *l8\n    image: x\n";
    write_file(dir + "/compose.yaml", text);
    std::string error = error_of();
    EXPECT_TRUE(contains(error, "expand to more than")) << error;
    EXPECT_TRUE(contains(error, "compose.yaml line")) << error;
}

TEST_F(ComposeStrict, PlainAliasFanOutIsBudgetedToo) {
    std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int level = 1; level <= 9; ++level) {
        const std::string prev = "*a" + std::to_string(level - 1);
        text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [" + prev;
        for (int i = 1; i < 10; ++i) text += ", " + prev;
        text += "]\n";
    }
    text += "services: {}\n";
    write_file(dir + "/compose.yaml", text);
    EXPECT_TRUE(contains(error_of(), "expand to more than"));
}

TEST_F(ComposeStrict, OversizedFilesAreRefused) {
    write_file(dir + "/compose.yaml",
               "services: {}\n# " + std::string(admin::kMaxComposeFileBytes, 'x') + "\n");
    EXPECT_NE(error_of(), "");
    write_file(dir + "/compose.yaml",
               "services:\n  a:\n    extends: {file: big.yaml, service: b}\n");
    write_file(dir + "/big.yaml", "services:\n  b: {image: x}\n# " +
                                      std::string(admin::kMaxComposeFileBytes, 'x') + "\n");
    EXPECT_NE(error_of(), "");
}

TEST_F(ComposeStrict, TagsAndSeveralDocumentsAreRefused) {
    write_file(dir + "/compose.yaml", "services:\n  a:\n    image: x\n    privileged: !!str no\n");
    EXPECT_TRUE(contains(error_of(), "explicit tag"));
    write_file(dir + "/compose.yaml", "services:\n  a:\n    image: x\n    ports: !reset []\n");
    EXPECT_TRUE(contains(error_of(), "explicit tag"));
    write_file(dir + "/compose.yaml",
               "services: {a: {image: x}}\n---\nservices: {b: {image: y}}\n");
    EXPECT_TRUE(contains(error_of(), "more than one YAML document"));
}

TEST_F(ComposeStrict, RelativeRefsInAnExtendsTargetElsewhereAreRefused) {
    // podman-compose 1.0.3 resolves them against the main file, docker
    // compose against the extended file.
    write_file(dir + "/compose.yaml",
               "services:\n  a:\n    extends: {file: common/base.yaml, service: b}\n");
    write_file(dir + "/common/base.yaml", "services:\n  b:\n    image: x\n    env_file: b.env\n");
    EXPECT_TRUE(contains(error_of(), "another directory"));
    // Without relative references it is fine.
    write_file(dir + "/common/base.yaml", "services:\n  b:\n    image: x\n    build: .\n");
    auto model = model_of();
    EXPECT_EQ(model.buildable, Strings{"a"});
    EXPECT_EQ(model.checkout_paths, Strings{"common"});
}

TEST_F(ComposeStrict, RendersPathsIntoTheCheckoutAbsolute) {
    write_file(dir + "/compose.yaml", R"(# a comment
x-base: &base
  build: .
  env_file: app.env
services:
  api:
    <<: *base
    volumes:
      - ./src:/app:ro
      - data:/data
      - /var/log:/host-log
      - type: bind
        source: sub/../assets
        target: /assets
    environment:
      FLAG: yes
      PORT: 8080
      NAME: "022"
      CMD: "a: b"
  web:
    build:
      dockerfile: services/web/Containerfile
    extends: {file: base.yaml, service: base}
    ports: [22:22]
volumes:
  data: {}
)");
    write_file(dir + "/base.yaml",
               "services:\n  base:\n    image: x\n    build: {context: ./ctx}\n");
    auto model = model_of();
    EXPECT_EQ(model.services, (Strings{"api", "web"}));
    EXPECT_EQ(model.buildable, (Strings{"api", "web"}));
    EXPECT_EQ(model.checkout_paths, (Strings{".", "assets", "ctx", "src"}));
    ASSERT_EQ(model.checkout_binds.size(), 2u);
    EXPECT_EQ(model.checkout_binds[0].source, "src");
    EXPECT_EQ(model.checkout_binds[0].service, "api");
    EXPECT_EQ(model.referenced_files, (Strings{dir + "/app.env", dir + "/base.yaml"}));
    ASSERT_EQ(model.rendered.size(), 2u);
    EXPECT_EQ(model.rendered[0].file, dir + "/compose.yaml");
    EXPECT_EQ(model.rendered[1].file, dir + "/base.yaml");

    const YAML::Node r = YAML::Load(model.rendered[0].text);
    EXPECT_EQ(r["services"]["api"]["build"].as<std::string>(), dir);
    EXPECT_EQ(r["services"]["api"]["env_file"].as<std::string>(), "app.env");
    EXPECT_EQ(r["services"]["api"]["volumes"][0].as<std::string>(), dir + "/src:/app:ro");
    EXPECT_EQ(r["services"]["api"]["volumes"][1].as<std::string>(), "data:/data");
    EXPECT_EQ(r["services"]["api"]["volumes"][2].as<std::string>(), "/var/log:/host-log");
    EXPECT_EQ(r["services"]["api"]["volumes"][3]["source"].as<std::string>(), dir + "/assets");
    EXPECT_EQ(r["services"]["web"]["build"]["context"].as<std::string>(), dir);
    EXPECT_EQ(r["services"]["web"]["build"]["dockerfile"].as<std::string>(),
              "services/web/Containerfile");
    EXPECT_EQ(r["services"]["web"]["extends"]["file"].as<std::string>(), "base.yaml");
    // Typed plain scalars stay plain (each engine types them as before),
    // quoted ones stay strings.
    EXPECT_EQ(r["services"]["api"]["environment"]["FLAG"].Tag(), "?");
    EXPECT_EQ(r["services"]["api"]["environment"]["NAME"].Tag(), "!");
    EXPECT_EQ(r["services"]["api"]["environment"]["CMD"].as<std::string>(), "a: b");
    EXPECT_EQ(r["services"]["web"]["ports"][0].as<std::string>(), "22:22");
    EXPECT_FALSE(r["x-base"]["<<"].IsDefined());
    EXPECT_FALSE(contains(model.rendered[0].text, "&base"));

    const YAML::Node b = YAML::Load(model.rendered[1].text);
    EXPECT_EQ(b["services"]["base"]["build"]["context"].as<std::string>(), dir + "/ctx");

    // The rendered file reads back to the same model (a fixed point).
    write_file(dir + "/compose.yaml", model.rendered[0].text);
    auto again = model_of();
    EXPECT_EQ(again.services, model.services);
    EXPECT_EQ(again.buildable, model.buildable);
    EXPECT_EQ(again.rendered[0].text, model.rendered[0].text);
}

TEST_F(ComposeStrict, ControlCharactersInRenderedScalarsAreEscaped) {
    write_file(dir + "/compose.yaml",
               "services:\n  a:\n    image: x\n    command: \"echo \\e[2J\\u2028done\"\n");
    auto model = model_of();
    ASSERT_EQ(model.rendered.size(), 1u);
    const std::string& text = model.rendered[0].text;
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    EXPECT_TRUE(contains(text, "\\x1b[2J\\Ldone")) << text;
    EXPECT_EQ(YAML::Load(text)["services"]["a"]["command"].as<std::string>(),
              "echo \x1b[2J\xe2\x80\xa8"
              "done");
}

}  // namespace
}  // namespace hb::test
