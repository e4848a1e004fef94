// admin/install/engine_reach.cpp on real files, modes and ACLs: what doctor says an
// engine user can read of the person's home (docs/ENGINE-USER.md, "Your
// home"). The other user is a uid no file here belongs to; the ACLs are
// written as the kernel stores them and checked by it on write.
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "admin/install/engine_reach.hpp"
#include "tests/cli/cli_harness.hpp"

namespace hb::test {
namespace {

using admin::OtherUser;

constexpr uid_t kEngineUid = 61234;
constexpr gid_t kEngineGid = 61234;

struct Entry {
    std::uint16_t tag, perm;
    std::uint32_t id;
};

// 0: written; else errno (EOPNOTSUPP where the filesystem has no ACLs).
int set_acl(const std::string& path, const std::vector<Entry>& entries) {
    std::vector<unsigned char> raw = {2, 0, 0, 0};
    for (const Entry& e : entries) {
        for (int i = 0; i < 2; ++i) raw.push_back(static_cast<unsigned char>(e.tag >> (8 * i)));
        for (int i = 0; i < 2; ++i) raw.push_back(static_cast<unsigned char>(e.perm >> (8 * i)));
        for (int i = 0; i < 4; ++i) raw.push_back(static_cast<unsigned char>(e.id >> (8 * i)));
    }
    return ::lsetxattr(path.c_str(), "system.posix_acl_access", raw.data(), raw.size(), 0) == 0
               ? 0
               : errno;
}
// user::rwx, user:ENGINE:named, group::r-x, mask::mask, other::---
std::vector<Entry> named_engine(std::uint16_t named, std::uint16_t mask) {
    return {{0x01, 7, 0xffffffff},
            {0x02, named, kEngineUid},
            {0x04, 5, 0xffffffff},
            {0x10, mask, 0xffffffff},
            {0x20, 0, 0xffffffff}};
}

class EngineReach : public ::testing::Test {
  protected:
    void SetUp() override {
        home_ = root_.path() + "/home";
        ASSERT_EQ(::mkdir(home_.c_str(), 0700), 0);
        ASSERT_EQ(::chmod(root_.path().c_str(), 0755), 0);
        write_file(home_ + "/.bashrc", "x", 0644);
        write_file(home_ + "/notes", "x", 0600);
        ASSERT_EQ(::mkdir((home_ + "/.config").c_str(), 0755), 0);
        ASSERT_EQ(::mkdir((home_ + "/.ssh").c_str(), 0700), 0);
        ASSERT_EQ(::mkdir((home_ + "/drop").c_str(), 0711), 0);
        ASSERT_EQ(::symlink("/etc/passwd", (home_ + "/link").c_str()), 0);
    }
    TempDir root_{"cli"};
    std::string home_;
    OtherUser engine_{kEngineUid, {kEngineGid}};
};

TEST_F(EngineReach, AHomeOfMode0700ExposesNothing) {
    const auto exposure = admin::home_exposure(home_, engine_);
    EXPECT_FALSE(exposure.passes);
    EXPECT_TRUE(exposure.entries.empty());
}

TEST_F(EngineReach, AHomeOthersMayPassExposesWhatTheyMayReadOrEnterButNoLink) {
    ASSERT_EQ(::chmod(home_.c_str(), 0711), 0);
    const auto exposure = admin::home_exposure(home_, engine_);
    EXPECT_TRUE(exposure.passes);
    const std::vector<std::string> want = {".bashrc (0644)", ".config/ (0755)", "drop/ (0711)"};
    EXPECT_EQ(exposure.entries, want);
}

TEST_F(EngineReach, ANamedUserAclPassesAHomeOfMode0700UnlessItsMaskSaysNo) {
    const int err = set_acl(home_, named_engine(1, 5));
    if (err == EOPNOTSUPP) GTEST_SKIP() << "no POSIX ACLs on " << home_;
    ASSERT_EQ(err, 0);
    EXPECT_EQ(admin::access_bits(home_, engine_), 1u);
    EXPECT_TRUE(admin::home_exposure(home_, engine_).passes);
    // The mask is what setfacl recomputes and chmod g-x sets: it wins.
    ASSERT_EQ(set_acl(home_, named_engine(1, 4)), 0);
    EXPECT_EQ(admin::access_bits(home_, engine_), 0u);
    EXPECT_FALSE(admin::home_exposure(home_, engine_).passes);
}

// Linux reads the ACL only while the mask is not zero: `chmod 0701` on a
// home whose ACL names the engine user with nothing lets it pass by the
// others' bits (fs/namei.c acl_permission_check).
TEST_F(EngineReach, AZeroMaskLeavesTheModeAloneAsTheKernelDoes) {
    const int err = set_acl(home_, named_engine(0, 0));
    if (err == EOPNOTSUPP) GTEST_SKIP() << "no POSIX ACLs on " << home_;
    ASSERT_EQ(err, 0);
    ASSERT_EQ(::chmod(home_.c_str(), 0701), 0);  // mask ---, other --x
    EXPECT_EQ(admin::access_bits(home_, engine_), 1u);
    ASSERT_EQ(::chmod(home_.c_str(), 0711), 0);  // mask --x: the named entry (---) wins
    EXPECT_EQ(admin::access_bits(home_, engine_), 0u);
}

// A named group the engine user is in grants through the mask; a group
// that matched stops the check before the others' bits.
TEST_F(EngineReach, ANamedGroupEntryGrantsAMemberAndAMatchedGroupHidesOthersBits) {
    constexpr gid_t kShared = 61300;
    const OtherUser member{kEngineUid, {kEngineGid, kShared}};
    // user::rwx group::--- group:61300:r-x mask::r-x other::--x
    const std::vector<Entry> acl = {{0x01, 7, 0xffffffff},
                                    {0x04, 0, 0xffffffff},
                                    {0x08, 5, kShared},
                                    {0x10, 5, 0xffffffff},
                                    {0x20, 1, 0xffffffff}};
    const int err = set_acl(home_, acl);
    if (err == EOPNOTSUPP) GTEST_SKIP() << "no POSIX ACLs on " << home_;
    ASSERT_EQ(err, 0);
    EXPECT_EQ(admin::access_bits(home_, member), 5u);
    EXPECT_EQ(admin::access_bits(home_, engine_), 1u);  // no group matched: other
    // The named group with nothing: matched, so the others' x is not read.
    std::vector<Entry> none = acl;
    none[2].perm = 0;
    ASSERT_EQ(set_acl(home_, none), 0);
    EXPECT_EQ(admin::access_bits(home_, member), 0u);
    EXPECT_EQ(admin::access_bits(home_, engine_), 1u);
}

TEST_F(EngineReach, AnOwnerGetsTheOwnerBitsEvenWhenOthersGetMore) {
    const std::string file = home_ + "/odd";
    write_file(file, "x", 0077);
    struct stat st {};
    ASSERT_EQ(::lstat(file.c_str(), &st), 0);
    EXPECT_EQ(admin::access_bits(file, OtherUser{st.st_uid, {}}), 0u);
    EXPECT_EQ(admin::access_bits(file, engine_), 7u);
}

TEST_F(EngineReach, GroupBitsApplyToAMemberAndOthersBitsToAStranger) {
    const std::string file = home_ + "/shared";
    write_file(file, "x", 0640);
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(admin::access_bits(file, engine_), 0u);
    const OtherUser member{kEngineUid, {kEngineGid, st.st_gid}};
    EXPECT_EQ(admin::access_bits(file, member), 4u);
    const OtherUser owner{st.st_uid, {}};
    EXPECT_EQ(admin::access_bits(file, owner), 6u);
}

TEST_F(EngineReach, TheFirstDirectoryItCannotPassIsNamed) {
    const std::string checkout = home_ + "/drop/project";
    ASSERT_EQ(::mkdir(checkout.c_str(), 0755), 0);
    // "/" and the temp dirs above root_ are 0755 or 1777 here.
    EXPECT_EQ(admin::first_closed_dir(checkout, engine_), home_);
    ASSERT_EQ(::chmod(home_.c_str(), 0711), 0);
    EXPECT_EQ(admin::first_closed_dir(checkout, engine_), std::nullopt);
    ASSERT_EQ(::chmod(checkout.c_str(), 0700), 0);
    EXPECT_EQ(admin::first_closed_dir(checkout, engine_), checkout);
    EXPECT_EQ(admin::first_closed_dir("/", engine_), std::nullopt);
    EXPECT_EQ(admin::first_closed_dir("relative/dir", engine_), "relative/dir");
}

// A home others may pass, under a directory they may not: nothing exposed.
TEST_F(EngineReach, AHomeBelowAClosedDirectoryExposesNothing) {
    ASSERT_EQ(::chmod(home_.c_str(), 0755), 0);
    ASSERT_TRUE(admin::home_exposure(home_, engine_).passes);
    ASSERT_EQ(::chmod(root_.path().c_str(), 0700), 0);
    EXPECT_FALSE(admin::home_exposure(home_, engine_).passes);
}

}  // namespace
}  // namespace hb::test
