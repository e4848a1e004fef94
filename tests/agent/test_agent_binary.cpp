// hostbridge-agent must run in a container with no libc at all: a static
// ELF with no interpreter and no dynamic section, small enough to drop into
// every spool.
#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "tests/client/client_harness.hpp"

namespace hb::test {
namespace {

class AgentBinary : public ::testing::Test {
  protected:
    void SetUp() override {
        if (!HB_AGENT_STATIC)
            GTEST_SKIP()
                << "a sanitizer build links hostbridge-agent dynamically (AddressSanitizer "
                   "has no static runtime)";
    }
};

TEST_F(AgentBinary, IsStaticWithNoInterpreterAndNoDynamicSection) {
    const std::string bytes = read_file(HB_AGENT_BIN);
    ASSERT_GE(bytes.size(), sizeof(Elf64_Ehdr));
    Elf64_Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof eh);
    ASSERT_EQ(std::memcmp(eh.e_ident, ELFMAG, SELFMAG), 0);
    ASSERT_EQ(eh.e_ident[EI_CLASS], ELFCLASS64);
    for (int i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph;
        const std::size_t at = eh.e_phoff + static_cast<std::size_t>(i) * eh.e_phentsize;
        ASSERT_LE(at + sizeof ph, bytes.size());
        std::memcpy(&ph, bytes.data() + at, sizeof ph);
        EXPECT_NE(ph.p_type, static_cast<Elf64_Word>(PT_INTERP)) << "needs a dynamic loader";
        EXPECT_NE(ph.p_type, static_cast<Elf64_Word>(PT_DYNAMIC)) << "has a dynamic section";
    }
}

TEST_F(AgentBinary, LddSaysNotADynamicExecutable) {
    if (::access("/usr/bin/ldd", X_OK) != 0) GTEST_SKIP() << "no ldd here";
    Command ldd;
    ldd.argv = {"/usr/bin/ldd", HB_AGENT_BIN};
    const std::string said = run_output(ldd).text;  // ldd exits 1 on a static binary
    EXPECT_NE(said.find("not a dynamic executable"), std::string::npos) << said;
}

TEST_F(AgentBinary, IsAtMostThreeMebibytes) {
    EXPECT_LE(read_file(HB_AGENT_BIN).size(), 3u << 20);
}

// The copy install drops into SPOOL/bin/ finds its own spool with no
// environment and from any directory (docs/MCP.md, "Register it").
TEST(AgentSpool, TheDroppedCopyUsesTheSpoolItLiesIn) {
    TempDir dir("agent");
    const std::string spool = dir.path() + "/project/untracked/hostbridge";
    make_spool(spool);
    std::filesystem::create_directories(spool + "/bin");
    const std::string copy = spool + "/bin/hostbridge-agent";
    std::filesystem::copy_file(HB_AGENT_BIN, copy);
    std::filesystem::permissions(copy, std::filesystem::perms::owner_all);
    Command command;
    command.argv = {copy, "request", "--no-wait", "ping"};
    command.env = std::vector<std::string>{};
    command.cwd = "/";
    command.err = "";  // the test's, so a failure shows why
    EXPECT_EQ(run(command), 0);
    EXPECT_EQ(files_under(spool + "/requests").size(), 1u);
}

}  // namespace
}  // namespace hb::test
