// The states of a held request and the transitions between them
// (common/held.hpp), on a real held/ directory: what the drain
// (executor/drain_held.cpp) and `hostbridge allow|deny|pending`
// (admin/commands/held.cpp, pending.cpp) both move a request through.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "common/held.hpp"
#include "tests/support/files.hpp"

namespace hb::common {
namespace held_states_test {
namespace {

const std::string kName = "20261129T080000Z-down-0123456789abcdef.json";

std::set<std::string> files_in(int fd) {
    auto names = list_held(fd);
    EXPECT_TRUE(names);
    return names ? std::set<std::string>(names->begin(), names->end()) : std::set<std::string>{};
}

std::set<std::string> named(std::initializer_list<HeldFile> files) {
    std::set<std::string> out;
    for (HeldFile file : files) out.insert(held_name(kName, file));
    return out;
}

HeldRequest record() {
    HeldRequest h;
    h.request = kName;
    h.verb = Verb::Down;
    h.command = "stack down";
    h.generation = std::string(64, 'a');
    h.requested_at = 1;
    h.held_at = 2;
    h.expires_at = 3;
    return h;
}

// Each state's file name says its state and its request, and nothing else
// in held/ (a temporary file, a record moved aside) reads as a state.
TEST(HeldStates, EachFileNamesItsStateAndRequest) {
    std::set<std::string_view> suffixes;
    for (const HeldFile file : kHeldFiles) {
        suffixes.insert(held_suffix(file));
        const auto parsed = parse_held_name(held_name(kName, file));
        ASSERT_TRUE(parsed) << held_name(kName, file);
        EXPECT_EQ(parsed->request, kName);
        EXPECT_EQ(parsed->file, file);
    }
    EXPECT_EQ(suffixes.size(), kHeldFiles.size()) << "two states share a suffix";
    EXPECT_EQ(held_suffix(HeldFile::Record), "");
    EXPECT_EQ(held_name(kName, HeldFile::Decision), kName + ".decision");
    EXPECT_EQ(held_name(kName, HeldFile::Taken), kName + ".taken");
    EXPECT_EQ(held_name(kName, HeldFile::Decided), kName + ".decided");
    EXPECT_EQ(held_name(kName, HeldFile::Gone), kName + ".gone");
    for (const std::string& name : std::initializer_list<std::string>{
             ".tmp-12-34", ".unreadable-" + kName, "junk", "", "x.json"})
        EXPECT_FALSE(parse_held_name(name)) << name;
}

TEST(HeldStates, AllowedRequestMovesFromRecordToTakenAndDecided) {
    hb::test::TempDir state("held-states");
    auto fd = open_held_dir(state.path());
    ASSERT_TRUE(fd) << fd.error().message;
    const int held = fd->get();
    EXPECT_FALSE(held_name_used(held, kName));

    auto holds = hold_record(held, record());
    ASSERT_TRUE(holds && *holds);
    EXPECT_EQ(files_in(held), named({HeldFile::Record}));
    EXPECT_TRUE(held_name_used(held, kName));
    auto again = hold_record(held, record());
    ASSERT_TRUE(again);
    EXPECT_FALSE(*again) << "a name is held once";

    auto decided = publish_decision(held, kName, "first");
    ASSERT_TRUE(decided && *decided);
    auto second = publish_decision(held, kName, "second");
    ASSERT_TRUE(second);
    EXPECT_FALSE(*second) << "a decision is published once";
    EXPECT_EQ(files_in(held), named({HeldFile::Record, HeldFile::Decision}));

    ASSERT_TRUE(take_up(held, kName));
    EXPECT_EQ(files_in(held), named({HeldFile::Taken, HeldFile::Decided}));
    auto kept = read_held_file(held, held_name(kName, HeldFile::Decided));
    ASSERT_TRUE(kept && *kept);
    EXPECT_EQ(**kept, "first") << "the decision taken up is the one kept";
    EXPECT_FALSE(take_up(held, kName)) << "nothing to take up twice";

    remove_held(held, kName, HeldFile::Taken);
    EXPECT_EQ(files_in(held), named({HeldFile::Decided}));
    EXPECT_TRUE(held_name_used(held, kName)) << "the name stays used while .decided is kept";
    remove_held(held, kName, HeldFile::Decided);
    EXPECT_FALSE(held_name_used(held, kName));
}

TEST(HeldStates, AnUndecidedRecordEndsAsATombstone) {
    hb::test::TempDir state("held-states");
    auto fd = open_held_dir(state.path());
    ASSERT_TRUE(fd) << fd.error().message;
    const int held = fd->get();
    ASSERT_TRUE(hold_record(held, record()));
    ASSERT_TRUE(end_undecided(held, kName));
    EXPECT_EQ(files_in(held), named({HeldFile::Gone}));
    EXPECT_TRUE(held_name_used(held, kName)) << "the name is not held again while .gone is there";
}

}  // namespace
}  // namespace held_states_test
}  // namespace hb::common
