// executor/spool: the pinned directory fds and every operation through them,
// on real files (both the openat2 path and the component-walk fallback).
#include "executor/spool.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "ipc/request_name.hpp"
#include "tests/support/files.hpp"

namespace hb::exec {
namespace {

namespace fs = std::filesystem;

class SpoolTest : public ::testing::TestWithParam<Spool::Resolve> {
  protected:
    void SetUp() override {
        project_ = root_ + "/project";
        spool_ = project_ + "/untracked/hostbridge";
        for (SpoolDir d : kAllSpoolDirs)
            fs::create_directories(spool_ + "/" + std::string(spool_dir_name(d)));
    }
    Result<Spool> open() const { return Spool::open(project_, spool_, GetParam()); }
    std::string at(const char* sub, const std::string& name) const {
        return spool_ + "/" + sub + "/" + name;
    }
    static void write(const std::string& p, const std::string& text) { std::ofstream(p) << text; }

    hb::test::TempDir tmp_{"spool"};
    std::string root_ = tmp_.path(), project_, spool_;
};

TEST_P(SpoolTest, OpensAndListsInNameOrder) {
    write(at("requests", "b"), "");
    write(at("requests", "a"), "");
    write(at("requests", "c"), "");
    auto spool = open();
    ASSERT_TRUE(spool) << spool.error().message;
    auto names = spool->list(SpoolDir::Requests);
    ASSERT_TRUE(names);
    EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "c"}));
}

TEST_P(SpoolTest, RefusesASymlinkAnywhereOnTheWay) {
    fs::rename(project_ + "/untracked", root_ + "/elsewhere");
    fs::create_symlink(root_ + "/elsewhere", project_ + "/untracked");
    auto spool = open();
    ASSERT_FALSE(spool);
    EXPECT_NE(spool.error().message.find("symlink"), std::string::npos) << spool.error().message;
}

TEST_P(SpoolTest, RefusesASymlinkedSubdirectory) {
    fs::rename(spool_ + "/archive", root_ + "/archive");
    fs::create_symlink(root_ + "/archive", spool_ + "/archive");
    auto spool = open();
    ASSERT_FALSE(spool);
    EXPECT_NE(spool.error().message.find("archive"), std::string::npos);
}

TEST_P(SpoolTest, RefusesASubdirectoryThatIsAFile) {
    fs::remove(spool_ + "/tmp");
    write(spool_ + "/tmp", "");
    EXPECT_FALSE(open());
}

TEST_P(SpoolTest, RefusesASpoolOutsideTheProject) {
    EXPECT_FALSE(Spool::open(project_, root_ + "/other", GetParam()));
    EXPECT_FALSE(Spool::open(project_, project_ + "/../project/untracked/hostbridge", GetParam()));
    EXPECT_FALSE(Spool::open(project_, project_, GetParam()));
}

TEST_P(SpoolTest, PublishIsAtomicModeExactAndNoReplaceKeepsTheFirst) {
    auto spool = open();
    ASSERT_TRUE(spool);
    const mode_t old = ::umask(077);
    auto first =
        spool->publish(SpoolDir::Responses, "r.json", "one", Publish::NoReplace, {0644, {}});
    auto second =
        spool->publish(SpoolDir::Responses, "r.json", "two", Publish::NoReplace, {0644, {}});
    ::umask(old);
    ASSERT_TRUE(first && second);
    EXPECT_TRUE(*first);
    EXPECT_FALSE(*second);
    std::ifstream in(at("responses", "r.json"));
    std::string text((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(text, "one");
    struct stat st {};
    ASSERT_EQ(::stat(at("responses", "r.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0644u);
    EXPECT_TRUE(fs::is_empty(spool_ + "/tmp"));  // the loser's temp file is gone
    auto replaced =
        spool->publish(SpoolDir::Responses, "r.json", "three", Publish::Replace, {0640, {}});
    ASSERT_TRUE(replaced && *replaced);
    ASSERT_EQ(::stat(at("responses", "r.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_P(SpoolTest, QuarantineUsesSuffixesThenARandomShortenedName) {
    auto spool = open();
    ASSERT_TRUE(spool);
    write(at("quarantine", "x"), "");
    for (int i = 1; i <= 99; ++i) write(at("quarantine", "x." + std::to_string(i)), "");
    write(at("requests", "x"), "evidence");
    auto got = spool->quarantine(SpoolDir::Requests, "x");
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->size(), 1u + 1 + 16);
    EXPECT_EQ(got->rfind("x.", 0), 0u);
    EXPECT_FALSE(fs::exists(at("requests", "x")));

    // A name so long that no suffix fits: shortened, with a random suffix.
    const std::string long_name(254, 'n');  // even ".1" would pass NAME_MAX
    write(at("quarantine", long_name), "");
    write(at("requests", long_name), "");
    auto shortened = spool->quarantine(SpoolDir::Requests, long_name);
    ASSERT_TRUE(shortened) << shortened.error().message;
    EXPECT_EQ(shortened->size(), 200u + 1 + 16);
}

TEST_P(SpoolTest, InspectNeverFollowsAndReopenReadsTheSameInode) {
    auto spool = open();
    ASSERT_TRUE(spool);
    write(root_ + "/target", "secret");
    fs::create_symlink(root_ + "/target", at("processing", "link"));
    auto link = spool->inspect(SpoolDir::Processing, "link");
    ASSERT_TRUE(link);
    EXPECT_TRUE(S_ISLNK(link->st.st_mode));
    EXPECT_FALSE(spool->open_for_reading(SpoolDir::Processing, "link", *link));

    ASSERT_EQ(::mkfifo(at("processing", "fifo").c_str(), 0600), 0);
    auto fifo = spool->inspect(SpoolDir::Processing, "fifo");  // must not block
    ASSERT_TRUE(fifo);
    EXPECT_TRUE(S_ISFIFO(fifo->st.st_mode));

    write(at("processing", "file"), "body");
    auto file = spool->inspect(SpoolDir::Processing, "file");
    ASSERT_TRUE(file);
    // Swapped after inspection: the reopen still reads the inspected inode.
    fs::rename(at("processing", "file"), at("processing", "moved"));
    write(at("processing", "file"), "other");
    auto fd = spool->open_for_reading(SpoolDir::Processing, "file", *file);
    ASSERT_TRUE(fd) << fd.error().message;
    char buf[16] = {};
    ASSERT_EQ(::read(fd->get(), buf, sizeof buf), 4);
    EXPECT_EQ(std::string(buf), "body");
}

TEST_P(SpoolTest, MoveNoReplaceAndStuck) {
    auto spool = open();
    ASSERT_TRUE(spool);
    write(at("requests", "a"), "new");
    write(at("processing", "a"), "old");
    EXPECT_EQ(spool->move(SpoolDir::Requests, SpoolDir::Processing, "a", true), EEXIST);
    EXPECT_EQ(spool->move(SpoolDir::Requests, SpoolDir::Processing, "gone", true), ENOENT);
    auto stuck = spool->mark_stuck("a");
    ASSERT_TRUE(stuck);
    EXPECT_EQ(*stuck, ".stuck-a");
    EXPECT_TRUE(fs::exists(at("requests", ".stuck-a")));
}

// An answer replaces its acknowledgement by rename: a link planted at the
// name is replaced, never followed; a planted directory refuses the answer
// and stays as it was. Nothing is left in tmp/ either way.
TEST_P(SpoolTest, ReplaceOverAPlantedLinkFollowsNothingAndADirectoryRefuses) {
    auto spool = open();
    ASSERT_TRUE(spool);
    const std::string outside = root_ + "/outside";
    write(outside, "keep me");
    fs::create_symlink(outside, at("responses", "link.json"));
    fs::create_directories(at("responses", "dir.json") + "/inner");
    write(at("responses", "dir.json") + "/inner/file", "x");
    auto replaced =
        spool->publish(SpoolDir::Responses, "link.json", "answer", Publish::Replace, {0644, {}});
    ASSERT_TRUE(replaced && *replaced);
    EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(at("responses", "link.json"))));
    std::ifstream in(outside);
    EXPECT_EQ(std::string((std::istreambuf_iterator<char>(in)), {}), "keep me");
    EXPECT_FALSE(
        spool->publish(SpoolDir::Responses, "dir.json", "answer", Publish::Replace, {0644, {}}));
    EXPECT_TRUE(fs::exists(at("responses", "dir.json") + "/inner/file"));
    EXPECT_TRUE(fs::is_empty(spool_ + "/tmp"));
}

TEST_P(SpoolTest, PruneRemovesOldFilesAndSymlinksOnly) {
    auto spool = open();
    ASSERT_TRUE(spool);
    write(at("archive", "file"), "");
    fs::create_symlink("/nonexistent", at("archive", "link"));
    fs::create_directory(at("archive", "dir"));
    auto removed = spool->prune(SpoolDir::Archive, std::time(nullptr) + 10);
    ASSERT_TRUE(removed);
    EXPECT_EQ(*removed, 2u);
    EXPECT_TRUE(fs::is_directory(at("archive", "dir")));
    auto none = spool->prune(SpoolDir::Archive, 0);
    ASSERT_TRUE(none);
    EXPECT_EQ(*none, 0u);
}

INSTANTIATE_TEST_SUITE_P(BothResolvers, SpoolTest,
                         ::testing::Values(Spool::Resolve::Auto, Spool::Resolve::ComponentWalk),
                         [](const auto& param_info) {
                             return std::string(param_info.param == Spool::Resolve::Auto ? "openat2"
                                                                                         : "walk");
                         });

TEST(RequestName, MatchesTheSchemaExactly) {
    EXPECT_EQ(request_name_verb("20261129T080000Z-join-network-0123456789abcdef.json"),
              "join-network");
    EXPECT_TRUE(is_request_name("20261129T080000Z-ping-0123456789abcdef.json"));
    for (const char* bad :
         {"20261129T080000Z-ping-0123456789abcdef.json.tmp",
          "20261129T080000Z--0123456789abcdef.json", "20261129T080000Z-Ping-0123456789abcdef.json",
          "20261129T080000Z-ping-0123456789ABCDEF.json",
          "20261129T080000Z-ping-0123456789abcde.json",
          "2026112XT080000Z-ping-0123456789abcdef.json",
          "20261129T080000-ping-0123456789abcdef.json",
          "20261129T080000Z-shell:web-0123456789abcdef.json",
          "20261129T080000Z-ping_0123456789abcdef.json", "", ".json"}) {
        EXPECT_FALSE(is_request_name(bad)) << bad;
    }
}

}  // namespace
}  // namespace hb::exec
