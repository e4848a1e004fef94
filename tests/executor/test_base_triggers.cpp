// The check of base images' ONBUILD triggers before a podman build
// (engines/podman/base_triggers.cpp), against stand-in `podman` and `buildah`
// scripts that answer from files and record each call, so every answer
// shape is reproducible. Real podman and buildah are
// tests/e2e/build_attacks.sh's (a trigger image present: the rebuild is
// refused and its trigger never runs).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cstring>

#include <string>

#include "engines/argv_table.hpp"
#include "engines/podman/base_triggers.hpp"
#include "ipc/unique_fd.hpp"
#include "tests/support/files.hpp"

namespace hb::exec {
namespace {

std::string id_of(char c) {
    return std::string(64, c);
}

class TriggerCheck : public ::testing::Test {
  protected:
    void SetUp() override {
        // podman prints the file `images`; buildah prints `count-<ID>` as
        // it is (buildah 1.28 prints no newline) or exits with `rc-<ID>`. Each call is appended to
        // `calls`.
        tree_.write("bin/podman", "#!/bin/sh\necho \"podman $*\" >>" + tree_.path("calls") +
                                      "\ncat " + tree_.path("images") + "\n");
        tree_.write("bin/buildah", "#!/bin/sh\nid=$6\necho \"buildah $*\" >>" +
                                       tree_.path("calls") + "\nd=" + tree_.path() +
                                       "\nif [ -f \"$d/rc-$id\" ]; then echo 'Error: image not "
                                       "known\x1b[31m' >&2; exit \"$(cat \"$d/rc-$id\")\"; fi\n"
                                       "cat \"$d/count-$id\"\n");
        ::chmod(tree_.path("bin/podman").c_str(), 0755);
        ::chmod(tree_.path("bin/buildah").c_str(), 0755);
        ::mkdir(tree_.path("builds").c_str(), 0700);
        builds_ = UniqueFd(::open(tree_.path("builds").c_str(), O_RDONLY | O_DIRECTORY));
        config_.backend.kind = BackendKind::Compose;
        config_.backend.flavour = ComposeFlavour::PodmanCompose;
        config_.build = BuildSettings{};
        config_.build->engine = tree_.path("bin/podman");
        config_.build->buildah = tree_.path("bin/buildah");
    }

    void images(const std::vector<std::string>& ids) {
        std::string text;
        for (const auto& id : ids) text += "sha256:" + id + "\n";
        tree_.write("images", text);
    }
    void count(const std::string& id, const std::string& n) { tree_.write("count-" + id, n); }
    // How many times buildah was asked, since the last call.
    int asked() {
        const std::string calls = tree_.read("calls");
        tree_.write("calls", "");
        int n = 0;
        for (std::size_t at = calls.find("buildah "); at != std::string::npos;
             at = calls.find("buildah ", at + 1))
            ++n;
        return n;
    }
    Result<std::size_t> check() { return check_base_triggers(config_, builds_.get()); }

    test::TempDir tree_;
    UniqueFd builds_;
    Config config_;
};

TEST_F(TriggerCheck, ImagesWithoutTriggersPassAndAreAskedAboutOnce) {
    images({id_of('a'), id_of('b')});
    count(id_of('a'), "0");
    count(id_of('b'), "0");
    auto first = check();
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, 2u);
    EXPECT_EQ(asked(), 2);
    // The ids are remembered: a digest of the config never gains a trigger.
    auto second = check();
    ASSERT_TRUE(second) << second.error().message;
    EXPECT_EQ(*second, 0u);
    EXPECT_EQ(asked(), 0);
    // A new image is asked about; one gone is forgotten.
    images({id_of('b'), id_of('c')});
    count(id_of('c'), "0");
    ASSERT_TRUE(check());
    EXPECT_EQ(asked(), 1);
    EXPECT_EQ(tree_.read("builds/" + std::string(kNoTriggersFile)),
              id_of('b') + "\n" + id_of('c') + "\n");
}

TEST_F(TriggerCheck, AnImageWithATriggerRefusesTheBuildNamingItEveryTime) {
    images({id_of('a'), id_of('b'), id_of('c')});
    count(id_of('a'), "0");
    count(id_of('b'), "2");
    count(id_of('c'), "0");
    auto refused = check();
    ASSERT_FALSE(refused);
    EXPECT_NE(
        refused.error().message.find("image bbbbbbbbbbbb on this host has 2 ONBUILD triggers"),
        std::string::npos)
        << refused.error().message;
    EXPECT_NE(refused.error().message.find("podman rmi bbbbbbbbbbbb"), std::string::npos);
    // Never remembered as clean: the next build asks again and is refused.
    asked();
    EXPECT_FALSE(check());
    EXPECT_EQ(asked(), 1);  // b again: a was remembered, c is never reached
    // Removed by the person: builds run again.
    images({id_of('a'), id_of('c')});
    EXPECT_TRUE(check());
}

// With an engine user (docs/ENGINE-USER.md) buildah cannot read the store:
// each image is saved through the socket as a docker-archive tar and walked
// to its config in the sandbox. The stand-in podman writes what podman
// 4.3's remote `save --format docker-archive` writes (measured: layer tars,
// <config>.json, a legacy layer directory, manifest.json, repositories),
// with the config `config-<ID>.<NAME>` holds as <NAME>.json.
class RemoteTriggerCheck : public TriggerCheck {
  protected:
    void SetUp() override {
        TriggerCheck::SetUp();
        tree_.write(
            "bin/podman",
            "#!/bin/sh\necho \"podman $*\" >>" + tree_.path("calls") + "\nd=" + tree_.path() +
                "\nif [ \"$1\" = save ]; then id=$6; out=$5; [ -e \"$out\" ] && exit 9\n"
                "  [ -f \"$d/rc-$id\" ] && { echo 'Error: boom' >&2; exit 3; }\n"
                "  s=$(mktemp -d); echo '[]' >\"$s/manifest.json\"; echo '{}' "
                ">\"$s/repositories\"\n"
                "  mkdir \"$s/$(printf %064d 1)\"; echo layer >\"$s/$(printf %064d 2).tar\"\n"
                "  for c in \"$d\"/config-$id*; do cp \"$c\" \"$s/${c##*.}.json\"; done\n"
                "  tar -C \"$s\" -cf \"$out\" .; rm -rf \"$s\"; exit 0; fi\ncat " +
                tree_.path("images") + "\n");
        ::chmod(tree_.path("bin/podman").c_str(), 0755);
        config_.parser = HB_PARSER_BIN;
        config_.run_dir = tree_.path();
        ::mkdir(tree_.path(".hostbridge-build").c_str(), 0700);
        builds_ = UniqueFd(::open(tree_.path(".hostbridge-build").c_str(), O_RDONLY | O_DIRECTORY));
        // The engine user's socket as common/engine_socket.cpp pins it: a
        // socket its user owns (here: ours, bound, never connected to).
        const std::string socket = tree_.path("podman.sock");
        socket_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        ASSERT_LT(socket.size(), sizeof addr.sun_path);
        std::strcpy(addr.sun_path, socket.c_str());
        ASSERT_EQ(::bind(socket_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        const passwd* pw = ::getpwuid(::getuid());
        ASSERT_NE(pw, nullptr);
        config_.engine = EngineIdentity{pw->pw_name, socket, HB_ENGINE_RELAY_BIN};
    }
    UniqueFd socket_;
    // The config the save of `id` writes, named <id>.json as podman names it.
    void config_json(const std::string& id, const std::string& json) {
        tree_.write("config-" + id + "." + id, json);
    }
    int saved() {
        const std::string calls = tree_.read("calls");
        tree_.write("calls", "");
        int n = 0;
        for (std::size_t at = calls.find("podman save"); at != std::string::npos;
             at = calls.find("podman save", at + 1))
            ++n;
        EXPECT_EQ(calls.find("buildah"), std::string::npos) << calls;
        return n;
    }
};

TEST_F(RemoteTriggerCheck, SavedConfigsAreReadInTheSandboxOnceAndATriggerRefuses) {
    images({id_of('a'), id_of('b')});
    config_json(id_of('a'), R"({"config": {"Env": ["PATH=/bin"], "OnBuild": null}})");
    config_json(id_of('b'), R"({"architecture": "amd64", "config": {"Labels": {"x": "\u001b"}}})");
    auto first = check();
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, 2u);
    EXPECT_EQ(saved(), 2);
    EXPECT_TRUE(check());
    EXPECT_EQ(saved(), 0);  // remembered, as with buildah
    // Nothing of a save is left in the builds dir.
    EXPECT_NE(::faccessat(builds_.get(), kImageSaveName, F_OK, AT_SYMLINK_NOFOLLOW), 0);

    images({id_of('a'), id_of('b'), id_of('c')});
    config_json(id_of('c'),
                R"({"config": {"OnBuild": ["RUN --mount=type=cache,id=../.. x", "RUN y"]}})");
    auto refused = check();
    ASSERT_FALSE(refused);
    EXPECT_NE(
        refused.error().message.find("image cccccccccccc on this host has 2 ONBUILD triggers"),
        std::string::npos)
        << refused.error().message;
    EXPECT_NE(::faccessat(builds_.get(), kImageSaveName, F_OK, AT_SYMLINK_NOFOLLOW), 0);
}

TEST_F(RemoteTriggerCheck, ConfigsOutOfShapeAndFailedSavesRefuseTheBuild) {
    images({id_of('d')});
    for (const char* json : {"", "[]", "{\"config\": []}", "{\"config\": {\"OnBuild\": \"RUN x\"}}",
                             "{\"config\": {\"OnBuild\": [1]}}", "not json"}) {
        SCOPED_TRACE(json);
        config_json(id_of('d'), json);
        auto refused = check();
        ASSERT_FALSE(refused);
        EXPECT_NE(refused.error().message.find("image dddddddddddd as saved: "), std::string::npos)
            << refused.error().message;
    }
    // Two configs in one save: which one is the image's is not known.
    config_json(id_of('d'), "{}");
    tree_.write("config-" + id_of('d') + "." + id_of('e'), "{}");
    auto two = check();
    ASSERT_FALSE(two);
    EXPECT_NE(two.error().message.find("the saved image holds no config file, or more than one"),
              std::string::npos)
        << two.error().message;
    ::unlink(tree_.path("config-" + id_of('d') + "." + id_of('e')).c_str());
    tree_.write("rc-" + id_of('d'), "3");
    auto failed = check();
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.error().message.find("saving image dddddddddddd to read its ONBUILD triggers "
                                          "exited with status 3 (Error: boom)"),
              std::string::npos)
        << failed.error().message;
    ::unlink(tree_.path("rc-" + id_of('d')).c_str());
    config_json(id_of('d'), "{}");
    EXPECT_TRUE(check());
}

TEST_F(TriggerCheck, AnswersOutOfShapeRefuseTheBuild) {
    images({id_of('a')});
    for (const char* answer : {"", "1x", "-1", "0 0", "1234567", "0\n\n"}) {
        SCOPED_TRACE(answer);
        count(id_of('a'), answer);
        auto r = check();
        ASSERT_FALSE(r);
        EXPECT_NE(r.error().message.find("not a count of ONBUILD triggers"), std::string::npos)
            << r.error().message;
    }
    count(id_of('a'), "0\n");  // a newline after it is what a terminal would add
    EXPECT_TRUE(check());
}

TEST_F(TriggerCheck, ABuildahThatFailsRefusesTheBuildWithItsWordsMadeVisible) {
    images({id_of('a')});
    tree_.write("rc-" + id_of('a'), "125");
    auto r = check();
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("exited with status 125 (Error: image not known\\x1b[31m)"),
              std::string::npos)
        << r.error().message;
}

TEST_F(TriggerCheck, AnImageListOutOfShapeRefusesTheBuild) {
    for (const std::string& list :
         {std::string("sha256:") + id_of('a'),  // cut short
          id_of('a') + "\n", "sha256:" + id_of('A') + "\n", "sha256:" + id_of('a') + " x\n",
          "sha256:" + std::string(63, 'a') + "\n"}) {
        SCOPED_TRACE(list);
        tree_.write("images", list);
        EXPECT_FALSE(check());
    }
    tree_.write("images", "");  // an empty store: nothing to ask
    auto empty = check();
    ASSERT_TRUE(empty);
    EXPECT_EQ(*empty, 0u);
}

TEST_F(TriggerCheck, ARememberedListOutOfShapeIsForgottenNotBelieved) {
    images({id_of('a')});
    count(id_of('a'), "1");
    // Planted by hand (the agent cannot reach run_dir): one bad line and
    // the whole list counts as nothing checked.
    tree_.write("builds/" + std::string(kNoTriggersFile), id_of('a') + "\nnot-an-id\n");
    EXPECT_FALSE(check());
    EXPECT_EQ(asked(), 1);
}

TEST_F(TriggerCheck, WithoutBuildahEveryBuildIsRefusedSayingWhy) {
    config_.build->buildah.clear();
    images({id_of('a')});
    auto r = check();
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("install buildah"), std::string::npos);
    EXPECT_EQ(tree_.read("calls"), "");  // not even the list ran
}

TEST_F(TriggerCheck, TheRowsAreFixedWordsAndAnIdOfOurs) {
    EXPECT_EQ(trigger_images(config_),
              (Argv{config_.build->engine, "images", "-a", "--no-trunc", "--format", "{{.ID}}"}));
    EXPECT_EQ(*trigger_count(config_, id_of('a')),
              (Argv{config_.build->buildah, "inspect", "--type", "image", "--format",
                    "{{len .Docker.Config.OnBuild}}", id_of('a')}));
    EXPECT_FALSE(trigger_count(config_, "--help"));
    EXPECT_FALSE(trigger_count(config_, "sha256:" + id_of('a')));
}

}  // namespace
}  // namespace hb::exec
