// SECURITY.md's gate table held to the build: one row per gate, and every
// test a row names as its proof is a test ctest knows (`ctest -N` of this
// very build directory), so a renamed or deleted test breaks this test
// instead of leaving the document pointing at nothing.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "doc_text.hpp"

namespace hb::test {
namespace {

const std::string kSecurityMd = std::string(HB_SOURCE_DIR) + "/SECURITY.md";

// The gates issue 8 asks the table to cover, each with its own row.
const std::set<std::string> kGates = {
    "closed verb set", "hardcoded deny", "arg enumeration", "policy", "rate limit",
    "integrity gate", "expiry", "quarantine", "pinned dirfds", "atomic publish", "parser lockdown",
    "fd hygiene", "audit chain",
    // Commands run only the bytes a person approved (executor/run_tree.hpp).
    "the bytes hashed are the bytes run", "bind sources at rest", "probing costs",
    // Where runc resolves a bind source (engines/podman/bind_pin.cpp), and what
    // a container got, checked after it starts (engines/podman/pin_check.cpp).
    "bind sources are pinned (rootless podman)",
    "what a container got is checked after it starts (rootless podman)",
    // The compose model, git and the admin tool, as the agent attacks them.
    "what the engine reads is what was pinned", "approve shows every byte", "default compose files",
    "the agent's git configuration", "no write through `.git`",
    "helper programs outside the checkout", "nothing raw on a terminal",
    "admin tool follows no link", "stuck names drained", "every entry wakes `watch`",
    // The host clients resolve the spool from the person's config
    // (client/request/host_install.hpp), never from the checkout's layout.
    "the person's client uses the person's install", "fixes reach every install",
    // The agent's MCP client (admin/install/agent_manifest.cpp) and the executor's
    // own boundary (executor/CMakeLists.txt, admin/).
    "the agent's client dropped without a link followed", "the tool manifest decides nothing",
    "only what the drain runs is trusted",
    // The record cannot be flushed away (common/audit_log.cpp).
    "audit budget", "history kept", "journal anchor",
    // A person in the loop (executor/drain_held.cpp).
    "a person in the loop (`ask`)",
    // A person's grant for a while (common/grant.cpp).
    "grants (`allow --for`)",
    // What the engine builds from (engines/build_input/build_input.cpp, docs/BUILDS.md).
    "builds read only a screened snapshot",
    // What a person allowed is what builds (engines/build_input/build_input.cpp, hold_build).
    "a person allows the build they were shown",
    // Names no hand-run compose derives (admin/compose/build_plan.cpp).
    "a project's engine names are its own"};

struct GateRow {
    std::string gate;
    std::string stops;
    std::vector<std::string> tests;
};

std::vector<GateRow> gate_rows() {
    const std::string block =
        between_markers(read_text(kSecurityMd), "<!-- gate-table", "<!-- gate-table:end");
    std::vector<GateRow> rows;
    for (const std::string& line : split_lines(block)) {
        const auto cells = table_cells(line);
        if (cells.size() != 4 || cells[0] == "gate" || cells[0].starts_with("---")) continue;
        rows.push_back({cells[0], cells[1], backticked(cells[3])});
    }
    return rows;
}

// Every test name `ctest -N` lists in this build directory. ctest -N
// rewrites Testing/Temporary/LastTest.log, and ./run-tests' own ctest is
// still writing that file while this test runs (CI then showed "(not in the
// log)" for a failed test, tools/failed-tests.sh): so it runs on a copy of
// the CTestTestfile.cmake tree, whose includes name the real build by
// absolute path.
std::set<std::string> ctest_names() {
    namespace fs = std::filesystem;
    const fs::path build(HB_BINARY_DIR);
    const fs::path copy = build / ("security-ctest-N-" + std::to_string(::getpid()));
    fs::remove_all(copy);
    for (auto it = fs::recursive_directory_iterator(build);
         it != fs::recursive_directory_iterator(); ++it) {
        if (it->is_directory() &&
            (it->path().filename() == "Testing" ||
             it->path().filename().string().starts_with("security-ctest-N-"))) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->path().filename() != "CTestTestfile.cmake") continue;
        const fs::path target = copy / fs::relative(it->path(), build);
        fs::create_directories(target.parent_path());
        fs::copy_file(it->path(), target);
    }
    const std::string out_path = (copy / "listing").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (out < 0 || ::dup2(out, 1) < 0 || ::chdir(copy.c_str()) != 0) ::_exit(126);
        ::execl(HB_CTEST_COMMAND, HB_CTEST_COMMAND, "-N", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    const std::string listing = read_text(out_path);
    fs::remove_all(copy);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        throw std::runtime_error("ctest -N failed: " + listing);
    }
    std::set<std::string> names;
    // "  Test  #12: Suite.Name" (no std::regex: GCC 12 warns in it under the sanitizers)
    for (const std::string& line : split_lines(listing)) {
        const auto test = line.find("Test");
        const auto hash = line.find('#');
        const auto colon = line.find(": ", hash == std::string::npos ? 0 : hash);
        if (test == std::string::npos || hash == std::string::npos || colon == std::string::npos ||
            line.find_first_not_of(' ') != test || hash < test) {
            continue;
        }
        std::string name = line.substr(colon + 2);
        // CMake's gtest discovery appends "  # GetParam() = ..." to the name
        // of a parameterised test; `ctest -R` matches the part before it.
        if (const auto comment = name.find("  # GetParam() = "); comment != std::string::npos) {
            name.erase(comment);
        }
        while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.pop_back();
        if (!name.empty()) names.insert(name);
    }
    return names;
}

TEST(SecurityMd, GateTableHasOneRowPerGate) {
    const auto rows = gate_rows();
    ASSERT_FALSE(rows.empty()) << "no gate table (<!-- gate-table ... -->) in " << kSecurityMd;
    std::multiset<std::string> seen;
    for (const auto& row : rows) seen.insert(row.gate);
    for (const auto& gate : kGates) EXPECT_EQ(seen.count(gate), 1u) << "row for: " << gate;
    for (const auto& row : rows) {
        EXPECT_TRUE(kGates.contains(row.gate)) << "unexpected gate row: " << row.gate;
        EXPECT_GE(row.stops.size(), 20u) << row.gate << ": say which attack it stops";
        EXPECT_FALSE(row.tests.empty()) << row.gate << ": name the tests that prove it";
    }
}

TEST(SecurityMd, EveryTestTheGateTableNamesExists) {
    const std::set<std::string> known = ctest_names();
    ASSERT_GT(known.size(), 100u) << "ctest -N in " << HB_BINARY_DIR << " lists too few tests";
    int named = 0;
    for (const auto& row : gate_rows()) {
        for (const auto& test : row.tests) {
            ++named;
            EXPECT_TRUE(known.contains(test))
                << row.gate << ": `" << test << "` is not a ctest test of this build "
                << "(ctest -N -R '" << test << "')";
        }
    }
    EXPECT_GE(named, static_cast<int>(kGates.size()));
}

// The security case read at once (issue 46): its parts, and at most 40 KB
// counted as 40,000 bytes, not 40 KiB; the long explanations live in
// docs/SECURITY-DETAILS.md and docs/SANDBOX.md.
TEST(SecurityMd, IsTheSecurityCaseInAtMost40000Bytes) {
    const std::string text = read_text(kSecurityMd);
    EXPECT_LE(text.size(), 40000u) << "SECURITY.md is " << text.size()
                                   << " bytes: move the explanation into docs/SECURITY-DETAILS.md";
    for (const char* part :
         {"\n## The attacker\n", "\n## The invariant\n", "\n## Trust boundaries\n",
          "\n## Two postures", "\n## The gates\n", "\n## What is not defended\n"}) {
        EXPECT_NE(text.find(part), std::string::npos) << "no heading " << part;
    }
}

// The per-step privilege table ("Engine steps and the privilege each
// keeps"): every test a row names is a test of this build.
TEST(SecurityMd, EveryTestTheStepTableNamesExists) {
    const std::string block =
        between_markers(read_text(kSecurityMd), "<!-- step-table", "<!-- step-table:end");
    const std::set<std::string> known = ctest_names();
    int rows = 0;
    for (const std::string& line : split_lines(block)) {
        const auto cells = table_cells(line);
        if (cells.size() != 4 || cells[0] == "step" || cells[0].starts_with("---")) continue;
        ++rows;
        const auto tests = backticked(cells[3]);
        EXPECT_FALSE(tests.empty()) << cells[0] << ": name the tests that prove it";
        for (const auto& test : tests) {
            EXPECT_TRUE(known.contains(test))
                << cells[0] << ": `" << test << "` is not a ctest test";
        }
    }
    EXPECT_GE(rows, 6);
}

TEST(SecurityMd, SaysWhatIsNotDefendedAndHowToReport) {
    const std::string text = read_text(kSecurityMd);
    EXPECT_NE(text.find("\n## What is not defended"), std::string::npos);
    const auto report = text.find("\n## Reporting a vulnerability");
    ASSERT_NE(report, std::string::npos);
    const auto next = text.find("\n## ", report + 1);
    const std::string section = text.substr(report, next - report);
    // A private channel that exists, never a made-up address.
    EXPECT_EQ(section.find('@'), std::string::npos) << "no invented e-mail address";
    EXPECT_NE(section.find("private"), std::string::npos);
}

}  // namespace
}  // namespace hb::test
