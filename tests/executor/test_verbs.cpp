#include "ipc/verbs.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace hb::exec {
namespace {

TEST(Verbs, EveryVerbHasOneRowInOrder) {
    ASSERT_EQ(kVerbTable.size(), kAllVerbs.size());
    for (std::size_t i = 0; i < kAllVerbs.size(); ++i) {
        EXPECT_EQ(kVerbTable[i].verb, kAllVerbs[i]);
        EXPECT_EQ(&verb_info(kAllVerbs[i]), &kVerbTable[i]);
    }
}

TEST(Verbs, ArgKindAgreesWithTheParserSide) {
    // The parser reads hb::verb_arg_kind (ipc); the executor reads this table.
    for (Verb verb : kAllVerbs) {
        EXPECT_EQ(verb_info(verb).arg, verb_arg_kind(verb)) << verb_name(verb);
    }
}

TEST(Verbs, PolicyKeyIsModeAndTheProtocolSpelling) {
    for (Verb verb : kAllVerbs) {
        EXPECT_EQ(verb_info(verb).policy_key, "MODE_" + std::string(verb_name(verb)));
    }
    EXPECT_EQ(verb_info(Verb::JoinNetwork).policy_key, "MODE_join-network");
}

// docs/PROTOCOL.md, "Verbs", restated independently of the table.
TEST(Verbs, PropertiesMatchTheProtocol) {
    const std::set<Verb> mutating = {Verb::Up,      Verb::Down, Verb::Restart,
                                     Verb::Rebuild, Verb::Init, Verb::JoinNetwork};
    const std::set<Verb> long_lived = {Verb::Up, Verb::Restart, Verb::Init, Verb::Rebuild};
    const std::set<Verb> read_only_with_command = {Verb::Status, Verb::Health, Verb::Logs};
    for (Verb verb : kAllVerbs) {
        const VerbInfo& info = verb_info(verb);
        SCOPED_TRACE(std::string(verb_name(verb)));
        EXPECT_EQ(info.mutating, mutating.count(verb) == 1);
        EXPECT_EQ(info.long_lived, long_lived.count(verb) == 1);
        EXPECT_EQ(info.runs_command, verb != Verb::Ping);
        const RateClass expected = verb == Verb::Ping                        ? RateClass::Exempt
                                   : read_only_with_command.count(verb) == 1 ? RateClass::ReadOnly
                                                                             : RateClass::Mutating;
        EXPECT_EQ(rate_class(verb), expected);
    }
    const std::set<Verb> asks_a_person = {Verb::Down, Verb::Init};
    for (Verb verb : kAllVerbs) EXPECT_EQ(verb_info(verb).asks_a_person, asks_a_person.count(verb));
    EXPECT_EQ(verb_info(Verb::Logs).arg, ArgKind::Service);
    EXPECT_EQ(verb_info(Verb::Restart).arg, ArgKind::Service);
    EXPECT_EQ(verb_info(Verb::Rebuild).arg, ArgKind::Buildable);
}

// What is derived from the list follows its end (ipc/wire_executor.cpp's range).
TEST(Verbs, TheLastVerbIsTheListsEnd) {
    EXPECT_EQ(kVerbCount, kAllVerbs.size());
    EXPECT_EQ(kLastVerb, kAllVerbs.back());
    EXPECT_EQ(static_cast<std::size_t>(kLastVerb), kVerbCount);
}

TEST(Verbs, RateClassNames) {
    EXPECT_EQ(rate_class_name(RateClass::Exempt), "exempt");
    EXPECT_EQ(rate_class_name(RateClass::ReadOnly), "read_only");
    EXPECT_EQ(rate_class_name(RateClass::Mutating), "mutating");
}

}  // namespace
}  // namespace hb::exec
