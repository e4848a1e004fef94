// cli/policy_engine_guard.cpp: exactly the up/rebuild lines that say auto
// become ask; every other byte of the person's file stays.
#include <gtest/gtest.h>

#include "cli/policy_engine_guard.hpp"
#include "common/policy.hpp"

namespace hb::cli {
namespace {

TEST(PolicyEngineGuard, OnlyAutoForUpAndRebuildBecomesAsk) {
    const std::string text =
        "MODE_up=auto\nMODE_upx=auto\nMODE_rebuild.api=auto\r\n\tMODE_rebuild=auto \n"
        "MODE_rebuild.db=dry-run\nMODE_restart=auto\n#MODE_up=auto\nMODE_up=autox\nMODE_rebuild=";
    const EngineGuarded g = hold_engine_verbs(text);
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
        const EngineGuarded g = hold_engine_verbs(text);
        EXPECT_EQ(g.text, text);
        EXPECT_TRUE(g.changed.empty());
    }
}

// What the executor then reads: the guarded lines parse as ask.
TEST(PolicyEngineGuard, TheExecutorReadsTheGuardedLinesAsAsk) {
    const std::vector<std::string> services = {"api", "db"};
    const exec::Policy before =
        exec::parse_policy("MODE_up=auto\nMODE_rebuild=auto\nMODE_rebuild.api=auto\n", services);
    ASSERT_EQ(before.mode(Verb::Rebuild, "api"), exec::Mode::Auto);
    const exec::Policy after = exec::parse_policy(
        hold_engine_verbs("MODE_up=auto\nMODE_rebuild=auto\nMODE_rebuild.api=auto\n").text,
        services);
    EXPECT_EQ(after.mode(Verb::Up), exec::Mode::Ask);
    EXPECT_EQ(after.mode(Verb::Rebuild, "db"), exec::Mode::Ask);
    EXPECT_EQ(after.mode(Verb::Rebuild, "api"), exec::Mode::Ask);
}

}  // namespace
}  // namespace hb::cli
