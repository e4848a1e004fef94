// docs/EXECUTOR-REVIEW.md held to the code, so the reviewer's guide cannot
// drift: its command list is the argv table, its syscall tables are the
// parser's seccomp policy, and its reading order names every executor file.
#include <cxxabi.h>
#include <dirent.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "admin/audit/argv_table_render.hpp"
#include "doc_text.hpp"
#include "engines/argv_table.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace hb::test {

using admin::describe_outcome;
using admin::display_argv;
using admin::enumerate_argv_table;

namespace {

const std::string kDoc = std::string(HB_SOURCE_DIR) + "/docs/EXECUTOR-REVIEW.md";

// The example install ARGV-TABLE.md shows, with placeholders for the paths.
hb::Config doc_config(hb::BackendKind kind,
                      hb::ComposeFlavour flavour = hb::ComposeFlavour::Docker) {
    hb::Config c;
    c.slug = "$SLUG";
    c.project_dir = "/home/u/demo-app";
    c.services = {"api", "db", "web", "worker"};
    c.buildable = {"api", "web", "worker"};
    c.backend = kind == hb::BackendKind::Stack
                    ? hb::Backend{kind, {"$STACK"}, "", hb::ComposeFlavour::Docker}
                    : hb::Backend{kind, {"$COMPOSE"}, "$COMPOSE_FILE", flavour};
    c.join_network = hb::JoinNetwork{"$ENGINE", "$NETWORK", "$AGENT_CONTAINER"};
    c.systemd = {true, "$SYSTEMD_RUN", ""};
    c.run_dir = "$RUN_DIR";
    if (kind == hb::BackendKind::Compose) {
        // api and web build from snapshots; worker's build is not recorded.
        hb::BuildSettings b;
        b.engine = "$ENGINE";
        b.project = "$PROJECT";
        b.services = {
            hb::ServiceBuild{"api", "api", "Containerfile", "", {}, "$API_IMAGE", "$API_CONTAINER"},
            hb::ServiceBuild{
                "web", "web", "Containerfile", "", {}, "$WEB_IMAGE", "$WEB_CONTAINER"}};
        c.build = b;
        // podman found: verified outcomes, and the rows that read the
        // install's own containers (docs/COMPOSE.md, "The project's name").
        if (flavour == hb::ComposeFlavour::PodmanCompose)
            c.settle = hb::SettleSettings{"$ENGINE", "$PROJECT", 30};
    }
    return c;
}

std::string render_table(const hb::Config& c) {
    using namespace hb::exec;
    std::string md = "| verb | arg | runs |\n|---|---|---|\n";
    for (const auto& row : enumerate_argv_table(c)) {
        md += "| `" + std::string(hb::verb_name(row.verb)) + "` | ";
        md += row.arg ? "`" + c.services[*row.arg] + "`" : "";
        md += " | ";
        const auto* plan = std::get_if<Plan>(&row.outcome);
        if (plan != nullptr && !plan->empty()) {
            std::string steps;
            for (const Step& step : *plan) {
                steps += (steps.empty() ? "`" : "`, then `") + display_argv(step.argv);
            }
            md += steps + "`";
        } else {
            md += describe_outcome(row.outcome);
        }
        md += " |\n";
    }
    return md;
}

TEST(ExecutorReview, CommandListIsTheArgvTable) {
    const std::string block =
        between_markers(read_text(kDoc), "<!-- argv-table:begin", "<!-- argv-table:end");
    ASSERT_FALSE(block.empty()) << "no argv-table markers in " << kDoc;
    const std::string want =
        "### Backend `stack`\n\n" + render_table(doc_config(hb::BackendKind::Stack)) +
        "\n### Backend `compose`, flavour `docker`\n\n" +
        render_table(doc_config(hb::BackendKind::Compose)) +
        "\n### Backend `compose`, flavour `podman-compose`\n\n" +
        render_table(doc_config(hb::BackendKind::Compose, hb::ComposeFlavour::PodmanCompose));
    EXPECT_EQ(block, want) << kDoc << ": the command list differs from argv_for(); paste:\n"
                           << want;
}

struct DocRow {
    std::string only_when;
};

// syscall name -> its rows ("only when" cells) in one of the doc's tables.
std::multimap<std::string, DocRow> doc_syscalls(const std::string& marker) {
    const std::string block = between_markers(read_text(kDoc), marker, "<!-- syscalls:end");
    std::multimap<std::string, DocRow> rows;
    for (const std::string& line : split_lines(block)) {
        const auto cells = table_cells(line);
        if (cells.size() != 3 || cells[0].size() < 3 || cells[0].front() != '`') continue;
        rows.emplace(cells[0].substr(1, cells[0].size() - 2), DocRow{cells[1]});
    }
    return rows;
}

// name -> whether every allowance of that name carries argument conditions.
std::map<std::string, bool> policy_syscalls(const std::vector<hb::sandbox::Allowance>& list) {
    std::map<std::string, bool> out;
    for (const auto& a : list) {
        const std::string name(a.name);
        const bool restricted = !a.conditions.empty();
        out[name] = out.contains(name) ? (out[name] && restricted) : restricted;
    }
    return out;
}

void expect_same(const std::multimap<std::string, DocRow>& doc,
                 const std::map<std::string, bool>& policy, const std::string& which) {
    ASSERT_FALSE(doc.empty()) << "no " << which << " syscall table in " << kDoc;
    for (const auto& [name, restricted] : policy) {
        const auto it = doc.find(name);
        if (it == doc.end()) {
            ADD_FAILURE() << which << ": `" << name << "` is allowed but " << kDoc
                          << " does not list it";
            continue;
        }
        EXPECT_EQ(doc.count(name), 1u) << which << ": `" << name << "` listed twice";
        EXPECT_EQ(!it->second.only_when.empty(), restricted)
            << which << ": `" << name << "`'s \"only when\" must be filled exactly when the "
            << "policy restricts its arguments";
    }
    for (const auto& [name, row] : doc) {
        EXPECT_TRUE(policy.contains(name))
            << which << ": " << kDoc << " lists `" << name << "`, which the policy does not allow";
    }
}

TEST(ExecutorReview, SyscallListIsExactlyTheParserPolicy) {
    constexpr int kSocket = 3;
    const pid_t self = ::getpid();
    const auto release = hb::sandbox::parser_policy(kSocket, self, false);
    expect_same(doc_syscalls("<!-- syscalls:release"), policy_syscalls(release), "release");

    hb::sandbox::PolicyBuilder extras;
    extras.allow_sanitizer_runtime(kSocket);
    expect_same(doc_syscalls("<!-- syscalls:sanitizer"), policy_syscalls(extras.allowances()),
                "sanitizer build");
    // The sanitized parser's policy is exactly release + extras.
    EXPECT_EQ(hb::sandbox::parser_policy(kSocket, self, true).size(),
              release.size() + extras.allowances().size());
}

TEST(ExecutorReview, EveryExecutorFileIsInTheReadingOrder) {
    const std::string text = read_text(kDoc);
    const auto start = text.find("## The files, in reading order");
    const auto end = text.find("\n## ", start + 1);
    ASSERT_NE(start, std::string::npos);
    const std::string section = text.substr(start, end - start);
    std::set<std::string> named;
    for (const std::string& word : backticked(section)) {
        named.insert(word.substr(word.rfind('/') == std::string::npos ? 0 : word.rfind('/') + 1));
    }
    int files = 0;
    for (const char* part : {"executor", "common", "engines", "engines/podman",
                             "engines/build_input", "engines/stack", "engines/podman_compose"}) {
        DIR* dir = ::opendir((std::string(HB_SOURCE_DIR) + "/" + part).c_str());
        ASSERT_NE(dir, nullptr) << part;
        while (const dirent* e = ::readdir(dir)) {
            const std::string name = e->d_name;
            if (!name.ends_with(".cpp") && !name.ends_with(".hpp")) continue;
            ++files;
            EXPECT_TRUE(named.contains(name))
                << part << "/" << name << " is missing from the reading order in " << kDoc;
        }
        ::closedir(dir);
    }
    EXPECT_GT(files, 30);
}

// The linker's map of hb_executor_reach (tests/security/CMakeLists.txt):
// each function of executor/ and common/ in a section of its own, nothing
// inlined, --gc-sections from main. A function whose section is only ever
// discarded is one that neither `drain` nor `watch` can reach.
TEST(ExecutorReview, EveryExecutorFunctionIsReachableFromMain) {
#ifdef HB_SANITIZED
    // tests/security/CMakeLists.txt builds the map in the plain tree only.
    GTEST_SKIP() << "the reach map is built by ./run-tests' own tree, not the sanitized one";
#else
    std::ifstream map(HB_REACH_MAP);
    ASSERT_TRUE(map) << "cannot read " << HB_REACH_MAP;
    std::set<std::string> discarded;
    std::set<std::string> kept;
    bool in_discarded = false;
    std::string line;
    std::string pending;  // a section name whose object is on the next line
    auto note = [&](const std::string& section, const std::string& object) {
        if (object.find("hb_executor_reach.dir") == std::string::npos) return;
        (in_discarded ? discarded : kept).insert(section);
    };
    while (std::getline(map, line)) {
        if (line.starts_with("Discarded input sections")) in_discarded = true;
        if (line.starts_with("Memory Configuration")) in_discarded = false;
        if (!pending.empty()) {
            note(pending, line);
            pending.clear();
            continue;
        }
        if (!line.starts_with(" .text._ZN2hb")) continue;
        const auto end = line.find(' ', 1);
        const std::string section = line.substr(7, end == std::string::npos ? end : end - 7);
        if (end == std::string::npos) {
            pending = section;
        } else {
            note(section, line);
        }
    }
    EXPECT_FALSE(kept.empty()) << "no executor function found in " << HB_REACH_MAP;
    std::vector<std::string> unreachable;
    for (const std::string& symbol : discarded) {
        if (kept.contains(symbol)) continue;  // a duplicate of an inline function that is kept
        int status = 0;
        char* text = abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status);
        unreachable.push_back(status == 0 ? text : symbol);
        std::free(text);
    }
    std::string list;
    for (const auto& name : unreachable) list += "  " + name + "\n";
    EXPECT_TRUE(unreachable.empty())
        << "functions compiled from executor/ or common/ that neither drain nor watch can "
           "reach (move them to admin/, or delete them):\n"
        << list;
#endif
}

}  // namespace
}  // namespace hb::test
