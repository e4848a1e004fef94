#include "common/sha256.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/support/files.hpp"

namespace hb::exec {

using common::sha256_fd;
using common::sha256_hex;

namespace {

TEST(Sha256, KnownVectors) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, FdMatchesBytesAcrossManyReads) {
    test::TempDir t;
    std::string big;
    for (int i = 0; i < 300000; ++i) big += static_cast<char>(i * 7);
    t.write("big", big);
    const int fd = ::open(t.path("big").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    auto h = sha256_fd(fd);
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h.value(), sha256_hex(big));
    // From the current offset: at end of file, the hash of nothing.
    EXPECT_EQ(sha256_fd(fd).value(), sha256_hex(""));
    ::close(fd);
}

TEST(Sha256, UnreadableFdIsAnError) {
    const auto h = sha256_fd(-1);
    ASSERT_FALSE(h.ok());
    EXPECT_NE(h.error().message.find("read failed"), std::string::npos);
}

}  // namespace
}  // namespace hb::exec
