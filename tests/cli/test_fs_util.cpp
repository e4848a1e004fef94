// admin/util/fs_util.cpp's write_file_if_changed on real files: what makes a second
// install say "no change" (tests/cli/test_install.cpp).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "admin/util/fs_util.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

using admin::WriteOutcome;

TEST(WriteIfChanged, CreatesThenSeesNoChangeThenUpdates) {
    TempDir root{"cli"};
    const std::string path = root.path() + "/file";
    auto first = admin::write_file_if_changed(path, "one\n", 0644);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, WriteOutcome::Created);
    auto same = admin::write_file_if_changed(path, "one\n", 0644);
    ASSERT_TRUE(same);
    EXPECT_EQ(*same, WriteOutcome::Unchanged);
    // Same length, other bytes; then another mode: both rewrite.
    auto other = admin::write_file_if_changed(path, "two\n", 0644);
    ASSERT_TRUE(other);
    EXPECT_EQ(*other, WriteOutcome::Updated);
    auto mode = admin::write_file_if_changed(path, "two\n", 0600);
    ASSERT_TRUE(mode);
    EXPECT_EQ(*mode, WriteOutcome::Updated);
    EXPECT_EQ(read_file(path), "two\n");
}

// A sanitized build's executor is about 65 MiB, past read_file_if_exists's
// default cap: every install rewrote it and said "updated" (a CI failure of
// Install.FirstRunCreatesEverythingAndSecondRunChangesNothing).
TEST(WriteIfChanged, SeesNoChangeInAFileLargerThanTheDefaultReadCap) {
    TempDir root{"cli"};
    const std::string path = root.path() + "/big";
    std::string content((65u << 20) + 1, 'x');
    content.back() = 'y';
    auto first = admin::write_file_if_changed(path, content, 0755);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, WriteOutcome::Created);
    auto second = admin::write_file_if_changed(path, content, 0755);
    ASSERT_TRUE(second) << second.error().message;
    EXPECT_EQ(*second, WriteOutcome::Unchanged);
    // One byte more, then one byte changed at the end: both rewrite.
    content.push_back('z');
    auto longer = admin::write_file_if_changed(path, content, 0755);
    ASSERT_TRUE(longer);
    EXPECT_EQ(*longer, WriteOutcome::Updated);
    content.back() = 'w';
    auto changed = admin::write_file_if_changed(path, content, 0755);
    ASSERT_TRUE(changed);
    EXPECT_EQ(*changed, WriteOutcome::Updated);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(static_cast<std::size_t>(st.st_size), content.size());
}

}  // namespace
}  // namespace hb::test
