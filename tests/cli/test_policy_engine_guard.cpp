// admin/install/policy_engine_guard.cpp: which installs hold up and rebuild for a
// person, and exactly the lines of a held verb that say auto become ask;
// every other byte of the person's file stays.
#include <gtest/gtest.h>

#include "admin/install/policy_engine_guard.hpp"
#include "common/policy.hpp"

namespace hb::admin {
namespace {

const EngineHold kBoth{"why", "why", ""};

// A podman-compose install, rootless (pins), with builds and buildah: what
// the bridge makes safe.
Config safe_compose() {
    Config c;
    c.backend.kind = BackendKind::Compose;
    c.backend.flavour = ComposeFlavour::PodmanCompose;
    c.pins = BindPins{"/usr/bin/podman", "/x/hostbridge-pin", {"src"}};
    c.build = BuildSettings{};
    c.build->engine = "/usr/bin/podman";
    c.build->buildah = "/usr/bin/buildah";
    return c;
}

TEST(PolicyEngineGuard, TheEngineRunAsThePersonHoldsBothEvenRootlessWithEverythingPinned) {
    // A builder feature no screen knew reached the host here (SECURITY.md,
    // "Two postures"): without an engine user nothing that feeds the engine
    // runs unattended, however much the bridge makes safe.
    for (Config c : {safe_compose(), [] {
                         Config no_build = safe_compose();
                         no_build.build.reset();
                         return no_build;
                     }()}) {
        EXPECT_NE(engine_hold(c).up.find("the engine runs as you"), std::string::npos);
        EXPECT_NE(engine_hold(c).rebuild.find("engine setup"), std::string::npos);
    }

    Config rootful = safe_compose();
    rootful.pins.reset();
    EXPECT_NE(engine_hold(rootful).up.find("rootful podman"), std::string::npos);
    EXPECT_NE(engine_hold(rootful).rebuild.find("rootful podman"), std::string::npos);

    Config unpinned = safe_compose();
    unpinned.unpinned_binds = {"data"};
    EXPECT_NE(engine_hold(unpinned).up.find("unpinned_binds"), std::string::npos);
    EXPECT_FALSE(engine_hold(unpinned).rebuild.empty());
    // restart starts the container again from the swappable path, as the
    // person: held too (nothing else holds restart).
    EXPECT_NE(engine_hold(unpinned).restart.find("while restart starts a container again"),
              std::string::npos);
    EXPECT_TRUE(common::held_for_containment(unpinned, engine_hold(unpinned), Verb::Restart));
    EXPECT_TRUE(engine_hold(safe_compose()).restart.empty());
    EXPECT_TRUE(engine_hold(rootful).restart.empty());

    Config docker = safe_compose();
    docker.backend.flavour = ComposeFlavour::Docker;
    docker.pins.reset();
    EXPECT_NE(engine_hold(docker).up.find("docker"), std::string::npos);
    EXPECT_FALSE(engine_hold(docker).rebuild.empty());

    // An engine user (docs/ENGINE-USER.md): no pins, yet nothing of the
    // person's is within the engine's reach. A bind source accepted unpinned
    // mounts only what the engine user may read when swapped, but
    // podman-compose, run as the person, makes the directories the swapped
    // link names (e2e_engine_user): it holds up, and only up.
    Config engine = safe_compose();
    engine.pins.reset();
    engine.engine = EngineIdentity{"hb-demo", "/home/hb-demo/engine/podman.sock",
                                   "/home/u/.local/lib/hostbridge/demo/hostbridge-engine-relay"};
    EXPECT_FALSE(engine_hold(engine).any());
    engine.unpinned_binds = {"data"};
    EXPECT_NE(engine_hold(engine).up.find("podman-compose, run as you"), std::string::npos);
    EXPECT_TRUE(engine_hold(engine).rebuild.empty());
    EXPECT_TRUE(engine_hold(engine).restart.empty());

    Config stack;
    stack.backend.kind = BackendKind::Stack;
    EXPECT_NE(engine_hold(stack).up.find("the engine runs as you"), std::string::npos);
    EXPECT_NE(engine_hold(stack).rebuild.find("its own command"), std::string::npos);
}

TEST(PolicyEngineGuard, TheExecutorHoldsOnlyEngineVerbsAndOnlyWhereNotAccepted) {
    Config c = safe_compose();
    EXPECT_TRUE(common::held_for_containment(c, engine_hold(c), Verb::Up));
    EXPECT_TRUE(common::held_for_containment(c, engine_hold(c), Verb::Rebuild));
    for (Verb verb : {Verb::Restart, Verb::Status, Verb::Logs, Verb::Down, Verb::Ping})
        EXPECT_FALSE(common::held_for_containment(c, engine_hold(c), verb)) << verb_name(verb);
    c.accept_uncontained_engine = true;
    EXPECT_FALSE(common::held_for_containment(c, engine_hold(c), Verb::Up));
    EXPECT_FALSE(common::held_for_containment(c, engine_hold(c), Verb::Rebuild));
    Config engine = safe_compose();
    engine.pins.reset();
    engine.engine = EngineIdentity{"hb-demo", "/home/hb-demo/engine/podman.sock",
                                   "/home/u/.local/lib/hostbridge/demo/hostbridge-engine-relay"};
    EXPECT_FALSE(common::held_for_containment(engine, engine_hold(engine), Verb::Rebuild));
}

TEST(PolicyEngineGuard, TheReasonNamesEachHeldVerb) {
    EXPECT_EQ(engine_hold_reason(EngineHold{}), "");
    EXPECT_EQ(engine_hold_reason(kBoth),
              "up and rebuild are held for a person (ask): why (SECURITY.md, \"Two postures\")");
    EXPECT_EQ(engine_hold_reason(EngineHold{"", "no buildah", ""}),
              "rebuild is held for a person (ask): no buildah (SECURITY.md, \"Two postures\")");
}

TEST(PolicyEngineGuard, OnlyTheHeldVerbsLinesChange) {
    const std::string text = "MODE_up=auto\nMODE_rebuild=auto\nMODE_rebuild.api=auto\n";
    const EngineGuarded rebuild_only = hold_engine_verbs(text, EngineHold{"", "why", ""});
    EXPECT_EQ(rebuild_only.text, "MODE_up=auto\nMODE_rebuild=ask\nMODE_rebuild.api=ask\n");
    const EngineGuarded none = hold_engine_verbs(text, EngineHold{});
    EXPECT_EQ(none.text, text);
    EXPECT_TRUE(none.changed.empty());
}

TEST(PolicyEngineGuard, OnlyAutoForUpAndRebuildBecomesAsk) {
    const std::string text =
        "MODE_up=auto\nMODE_upx=auto\nMODE_rebuild.api=auto\r\n\tMODE_rebuild=auto \n"
        "MODE_rebuild.db=dry-run\nMODE_restart=auto\n#MODE_up=auto\nMODE_up=autox\nMODE_rebuild=";
    const EngineGuarded g = hold_engine_verbs(text, kBoth);
    EXPECT_EQ(g.text,
              "MODE_up=ask\nMODE_upx=auto\nMODE_rebuild.api=ask\nMODE_rebuild=ask\n"
              "MODE_rebuild.db=dry-run\nMODE_restart=auto\n#MODE_up=auto\nMODE_up=autox\n"
              "MODE_rebuild=");
    EXPECT_EQ(g.changed, (std::vector<std::string>{"MODE_up", "MODE_rebuild.api", "MODE_rebuild"}));
}

TEST(PolicyEngineGuard, AFileWithNothingToChangeComesBackByteForByte) {
    for (const std::string& text :
         {std::string(), std::string("\n\n"), std::string("MODE_up=ask\nMODE_rebuild=deny"),
          std::string("MODE_ping=auto\r\n")}) {
        const EngineGuarded g = hold_engine_verbs(text, kBoth);
        EXPECT_EQ(g.text, text);
        EXPECT_TRUE(g.changed.empty());
    }
}

// What the executor then reads: the guarded lines parse as ask.
TEST(PolicyEngineGuard, TheExecutorReadsTheGuardedLinesAsAsk) {
    const std::vector<std::string> services = {"api", "db"};
    const common::Policy before =
        common::parse_policy("MODE_up=auto\nMODE_rebuild=auto\nMODE_rebuild.api=auto\n", services);
    ASSERT_EQ(before.mode(Verb::Rebuild, "api"), common::Mode::Auto);
    const common::Policy after = common::parse_policy(
        hold_engine_verbs("MODE_up=auto\nMODE_rebuild=auto\nMODE_rebuild.api=auto\n", kBoth).text,
        services);
    EXPECT_EQ(after.mode(Verb::Up), common::Mode::Ask);
    EXPECT_EQ(after.mode(Verb::Rebuild, "db"), common::Mode::Ask);
    EXPECT_EQ(after.mode(Verb::Rebuild, "api"), common::Mode::Ask);
}

}  // namespace
}  // namespace hb::admin
