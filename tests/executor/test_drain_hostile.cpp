// A hostile agent's spool: planted FIFOs, symlinks, hard links, directories,
// devices, oversized files, and spool directories swapped for symlinks,
// before and during a drain. The drain must quarantine, never follow, never
// block, never write outside the spool, and always end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/drain_fixture.hpp"

namespace hb::test {
namespace {

struct Planted {
    std::string name;
    std::string reason_prefix;  // the denied response's reason
};

TEST(DrainHostile, PlantedEntriesAreQuarantinedNeverFollowedNeverBlocking) {
    DrainFixture f;
    const std::string outside = f.root + "/outside-secret";
    write_file(outside, "host secret");
    const auto outside_mtime = fs::last_write_time(outside);
    std::vector<Planted> planted;

    const std::string fifo = f.name("ping");
    ASSERT_EQ(::mkfifo(f.path("requests", fifo).c_str(), 0644), 0);
    planted.push_back({fifo, "request is not a regular file"});

    const std::string link = f.name("ping");
    fs::create_symlink(outside, f.path("requests", link));
    planted.push_back({link, "request is not a regular file"});

    const std::string hard = f.name("ping");
    const std::string original = f.project + "/tracked-file";
    const std::string original_body = DrainFixture::body("ping");
    write_file(original, original_body);
    fs::create_hard_link(original, f.path("requests", hard));
    planted.push_back({hard, "request file has more than one link"});

    const std::string dir = f.name("ping");
    fs::create_directories(f.path("requests", dir + "/inner"));
    write_file(f.path("requests", dir + "/inner/file"), "x");
    planted.push_back({dir, "request is not a regular file"});

    const std::string big = f.name("ping");
    write_file(f.path("requests", big), std::string(5000, ' '));
    planted.push_back({big, "request body is larger than 4096 bytes"});

    const std::string sparse = f.name("ping");
    write_file(f.path("requests", sparse), "");
    fs::resize_file(f.path("requests", sparse), 1ULL << 31);  // never read whole
    planted.push_back({sparse, "request body is larger than 4096 bytes"});

    const std::string sock = f.name("ping");
    {
        const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const std::string p = f.path("requests", sock);
        ASSERT_LT(p.size(), sizeof addr.sun_path);
        std::strcpy(addr.sun_path, p.c_str());
        ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        ::close(s);
    }
    planted.push_back({sock, "request is not a regular file"});

    std::string device;
    if (::geteuid() == 0) {
        device = f.name("ping");
        // /dev/zero's numbers: opening it for reading would never end.
        ASSERT_EQ(::mknod(f.path("requests", device).c_str(), S_IFCHR | 0644, ::makedev(1, 5)), 0);
        planted.push_back({device, "request is not a regular file"});
    }
    const std::string good = f.publish("ping");

    const Exit e = f.run("drain", {});
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.count("requests"), 0u);
    EXPECT_EQ(f.count("processing"), 0u);
    for (const auto& p : planted) {
        EXPECT_TRUE(fs::exists(fs::symlink_status(f.path("quarantine", p.name)))) << p.name;
        const auto r = f.response(p.name);
        ASSERT_TRUE(r) << p.name;
        EXPECT_EQ((*r)["state"], "denied") << p.name;
        EXPECT_EQ((*r)["reason"], p.reason_prefix) << p.name;
        EXPECT_EQ(f.audit_for(p.name, "quarantined").size(), 1u) << p.name;
    }
    EXPECT_EQ(f.state_of(good), "done");
    // Never followed, never written through.
    EXPECT_EQ(read_file(outside), "host secret");
    EXPECT_EQ(fs::last_write_time(outside), outside_mtime);
    EXPECT_TRUE(fs::is_symlink(f.path("quarantine", link)));
    EXPECT_EQ(read_file(original), original_body);
    EXPECT_EQ(fs::hard_link_count(original), 2u);
    EXPECT_EQ(read_file(f.path("quarantine", dir + "/inner/file")), "x");
    // The evidence: the hard link's hash (a small regular file), no hash for
    // the 2 GiB one or the FIFO.
    const auto hard_audit = f.audit_for(hard, "quarantined");
    EXPECT_NE(hard_audit[0]["reason"].get<std::string>().find("sha256 "), std::string::npos);
    EXPECT_NE(
        f.audit_for(sparse, "quarantined")[0]["reason"].get<std::string>().find("not computed"),
        std::string::npos);
    EXPECT_NE(f.audit_for(fifo, "quarantined")[0]["reason"].get<std::string>().find("fifo"),
              std::string::npos);
}

// Replaces spool/<rel> by a symlink to a decoy dir outside the spool.
void swap_for_symlink(const std::string& spool, const std::string& rel, const std::string& decoy) {
    fs::create_directories(decoy);
    fs::rename(spool + "/" + rel, spool + "/" + rel + ".real");
    fs::create_symlink(decoy, spool + "/" + rel);
}

bool empty_dir(const std::string& dir) {
    return fs::is_empty(dir);
}

class SymlinkedBeforeDrain : public ::testing::TestWithParam<std::string> {};

TEST_P(SymlinkedBeforeDrain, IsRefusedAndNothingIsTouched) {
    DrainFixture f;
    const std::string req = f.publish("ping");
    const std::string decoy = f.root + "/decoy";
    const std::string rel = GetParam();
    if (rel == "<spool>") {
        // The spool itself: a real copy elsewhere, the spool path a symlink.
        fs::rename(f.spool, f.root + "/real-spool");
        fs::create_symlink(f.root + "/real-spool", f.spool);
        fs::create_directories(decoy);
    } else if (rel == "<parent>") {
        fs::rename(f.project + "/untracked", f.root + "/real-untracked");
        fs::create_symlink(f.root + "/real-untracked", f.project + "/untracked");
        fs::create_directories(decoy);
    } else {
        swap_for_symlink(f.spool, rel, decoy);
    }
    const Exit e = f.run();
    EXPECT_EQ(e.code, 1);
    EXPECT_EQ(lines_of(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("symlink"), std::string::npos) << e.err;
    EXPECT_TRUE(empty_dir(decoy));
    EXPECT_FALSE(fs::exists(f.state + "/audit.jsonl"));
    // The request is where the agent put it, unanswered.
    const std::string requests = rel == "<spool>" ? f.root + "/real-spool/requests"
                                 : rel == "<parent>"
                                     ? f.root + "/real-untracked/hostbridge/requests"
                                 : rel == "requests" ? f.spool + "/requests.real"
                                                     : f.spool + "/requests";
    EXPECT_TRUE(fs::exists(requests + "/" + req));
}

INSTANTIATE_TEST_SUITE_P(EverySpoolDir, SymlinkedBeforeDrain,
                         ::testing::Values("<parent>", "<spool>", "tmp", "requests", "processing",
                                           "responses", "archive", "quarantine", "diagnostics"),
                         [](const auto& param_info) {
                             std::string n = param_info.param;
                             if (n == "<spool>") return std::string("spool");
                             if (n == "<parent>") return std::string("parent");
                             return n;
                         });

TEST(DrainHostile, SubdirectoriesSwappedForSymlinksMidDrainWriteNothingOutside) {
    DrainFixture f;
    constexpr int kRequests = 1000;
    for (int i = 0; i < kRequests; ++i) f.publish("ping");
    const pid_t pid = f.start();
    ASSERT_TRUE(wait_until([&] { return f.count("archive") >= 5; }));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the drain finished before the swap";
    const std::string decoy = f.root + "/decoy";
    for (const char* sub :
         {"tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"}) {
        swap_for_symlink(f.spool, sub, decoy + "/" + sub);
    }
    const Exit e = f.finish(pid);
    EXPECT_EQ(e.code, 0) << e.err;
    for (const auto& sub : fs::directory_iterator(decoy)) {
        for (const auto& entry : fs::recursive_directory_iterator(sub.path())) {
            ADD_FAILURE() << "written outside the spool: " << entry.path();
        }
    }
    // The drain went on in the directories it had pinned.
    EXPECT_EQ(
        std::distance(fs::directory_iterator(f.spool + "/archive.real"), fs::directory_iterator{}),
        kRequests);
    EXPECT_TRUE(fs::is_empty(f.spool + "/requests.real"));
    EXPECT_TRUE(fs::is_empty(f.spool + "/processing.real"));
}

// chattr +i: the entry can be neither moved out of requests/ nor renamed
// within it. Cleared again in the destructor, so the temp dir can go.
class Immutable {
  public:
    explicit Immutable(std::string path) : path_(std::move(path)) { ok_ = set(FS_IMMUTABLE_FL); }
    ~Immutable() {
        if (ok_) set(0);
    }
    Immutable(const Immutable&) = delete;
    Immutable& operator=(const Immutable&) = delete;
    [[nodiscard]] bool ok() const { return ok_; }

  private:
    bool set(int flag) {
        const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK);
        if (fd < 0) return false;
        int flags = 0;
        bool done = ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0;
        flags = flag != 0 ? (flags | flag) : (flags & ~FS_IMMUTABLE_FL);
        done = done && ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
        ::close(fd);
        return done;
    }
    std::string path_;
    bool ok_ = false;
};

TEST(DrainHostile, ImmovableEntryIsAuditedStuckAndTheDrainEnds) {
    DrainFixture f;
    const std::string stuck = f.publish("ping");
    Immutable guard(f.path("requests", stuck));
    if (!guard.ok()) GTEST_SKIP() << "cannot set the immutable flag here (needs root on ext4)";
    const std::string good = f.publish("ping");
    const Exit e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(good), "done");
    EXPECT_EQ(f.state_of(stuck), "queued");
    const auto events = f.audit_for(stuck, "stuck");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_NE(events[0]["reason"].get<std::string>().find("left in place"), std::string::npos);
}

TEST(DrainHostile, UnwritableQuarantineNeverHangsTheDrain) {
    DrainFixture f;
    f.publish_as("off-schema", "x");
    const std::string good = f.publish("ping");
    Immutable guard(f.dir("quarantine"));
    if (!guard.ok()) GTEST_SKIP() << "cannot set the immutable flag here (needs root on ext4)";
    const Exit e = f.run();
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.err.find("cannot quarantine"), std::string::npos) << e.err;
    EXPECT_EQ(f.state_of(good), "done");
    // Left where it could not be moved from; the next drain tries again and
    // also ends.
    EXPECT_EQ(f.list("processing"), std::vector<std::string>{"off-schema"});
    EXPECT_EQ(f.run().code, 0);
}

TEST(DrainHostile, DirectoryOfAnotherUserIsRenamedStuckAndTheRestIsServed) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the drain as another user";
    // The drain runs as nobody; the agent planted a root-owned directory: it
    // cannot be moved to another parent (its ".." would change) but can be
    // renamed within requests/.
    constexpr uid_t kNobody = 65534;
    DrainFixture f;
    f.config["allow_root"] = false;
    f.binaries_reachable_by_others();  // nobody may not reach the build tree
    const std::string planted_dir = f.name("ping");
    const std::string unreadable = f.name("ping");
    const std::string good = f.publish("ping");
    for (const auto& entry : fs::recursive_directory_iterator(f.root)) {
        ASSERT_EQ(::lchown(entry.path().c_str(), kNobody, kNobody), 0);
    }
    ASSERT_EQ(::chown(f.root.c_str(), kNobody, kNobody), 0);
    fs::create_directory(f.path("requests", planted_dir));  // root-owned, 0755
    write_file(f.path("requests", unreadable), DrainFixture::body("ping"));
    fs::permissions(f.path("requests", unreadable), fs::perms::owner_read | fs::perms::owner_write);

    SpawnOptions as_nobody;
    as_nobody.uid = kNobody;
    as_nobody.allow_root_flag = false;
    const Exit e = f.run("drain", as_nobody);
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(f.state_of(good), "done");
    EXPECT_TRUE(fs::is_directory(f.path("requests", ".stuck-" + planted_dir)));
    EXPECT_EQ(f.audit_for(planted_dir, "stuck").size(), 1u);
    EXPECT_EQ(f.list("requests"), std::vector<std::string>{".stuck-" + planted_dir});
    // The root-owned 0600 file: claimed, but the host cannot read it.
    const auto r = f.response(unreadable);
    ASSERT_TRUE(r);
    EXPECT_EQ((*r)["state"], "denied");
    EXPECT_EQ((*r)["reason"], "request file cannot be read");
    EXPECT_TRUE(fs::exists(f.path("quarantine", unreadable)));
    // A second drain does not trip over the stuck entry again.
    ASSERT_EQ(f.run("drain", as_nobody).code, 0);
    EXPECT_EQ(f.audit_for(planted_dir, "stuck").size(), 1u);
}

}  // namespace
}  // namespace hb::test
