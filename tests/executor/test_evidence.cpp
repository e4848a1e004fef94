// executor/evidence: what the audit log keeps of a quarantined file, on real
// files, including one that grows between the drain's fstat and its read.
#include "executor/evidence.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/sha256.hpp"
#include "tests/support/files.hpp"

namespace hb::exec {
namespace {

// The file's fstat, then APPENDED written to its end, then its evidence:
// what a drain reports of a file the agent still writes.
std::string evidence_after_growth(const std::string& start, const std::string& appended) {
    hb::test::TempDir tmp{"evidence"};
    const std::string path = tmp.path() + "/planted";
    std::ofstream(path, std::ios::binary) << start;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    struct stat st {};
    EXPECT_EQ(::fstat(fd, &st), 0);
    std::ofstream(path, std::ios::binary | std::ios::app) << appended;
    std::string out = describe_evidence(st, fd);
    ::close(fd);
    return out;
}

TEST(Evidence, ASmallFileIsHashedWhole) {
    EXPECT_EQ(evidence_after_growth("not a request", ""),
              "regular file, 13 bytes, sha256 " + common::sha256_hex("not a request"));
    EXPECT_EQ(evidence_after_growth("", ""),
              "regular file, 0 bytes, sha256 " + common::sha256_hex(""));
}

// The size is fstat's, the hash is of every byte there when it is read.
TEST(Evidence, AFileThatGrewSinceItsStatIsHashedWithWhatItGrew) {
    const std::string grown(1000, 'x');
    EXPECT_EQ(evidence_after_growth("junk", grown),
              "regular file, 4 bytes, sha256 " + common::sha256_hex("junk" + grown));
    EXPECT_EQ(evidence_after_growth("", "y"),
              "regular file, 0 bytes, sha256 " + common::sha256_hex("y"));
}

TEST(Evidence, AFileThatGrewPastTheCapSinceItsStatIsNotHashed) {
    EXPECT_EQ(evidence_after_growth("junk", std::string(kMaxHashedBytes, 'x')),
              "regular file, 4 bytes, sha256 not computed (over 1 MiB)");
}

}  // namespace
}  // namespace hb::exec
