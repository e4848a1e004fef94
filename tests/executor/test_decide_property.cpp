// The invariant, tested as a property: whatever requests arrive, the only
// commands the bridge ever runs are rows of the enumerated argv table.
//   1. 100,000 generated requests (valid, invalid, hostile; fixed seed)
//      through the validator and argv_for(), in this process, against a
//      stack and a compose install.
//   2. 5,000 of them (1,000 in a sanitized build) through the real drain
//      (several drain runs), where the recording stack script writes down
//      every argv it was started with.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "admin/audit/argv_table_render.hpp"
#include "engines/argv_table.hpp"
#include "parser/validate.hpp"
#include "tests/executor/decide_fixture.hpp"
#include "tests/executor/request_generator.hpp"

namespace {

using Argv = std::vector<std::string>;
using hb::test::RequestGenerator;
using hb::test::StackFixture;

constexpr std::uint64_t kSeed = 0x68627374'61636b21ULL;  // fixed: failures reproduce

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

const std::vector<std::string> kServices = {"api", "db", "web", "worker"};
const std::vector<std::string> kBuildable = {"api", "web", "worker"};

hb::Config install(hb::BackendKind kind) {
    hb::Config c;
    c.slug = "prop";
    c.project_dir = "/srv/prop";
    c.services = kServices;
    c.buildable = kBuildable;
    c.backend.kind = kind;
    if (kind == hb::BackendKind::Stack) {
        c.backend.argv = {"/srv/prop/stack"};
        c.join_network = hb::JoinNetwork{"/usr/bin/podman", "prop-net", "agent"};
    } else {
        // podman-compose: docker compose's rows are denied until a test
        // runs them (ArgvTable.DockerComposeRowsAreDeniedUntilATestRunsThem).
        c.backend.argv = {"/usr/bin/podman-compose"};
        c.backend.flavour = hb::ComposeFlavour::PodmanCompose;
        c.backend.file = "/srv/prop/compose.yaml";
    }
    return c;
}

std::set<Argv> table_of(const hb::Config& config) {
    std::set<Argv> out;
    for (const auto& row : hb::admin::enumerate_argv_table(config)) {
        if (const auto* plan = std::get_if<hb::exec::Plan>(&row.outcome)) {
            for (const auto& step : *plan) out.insert(step.argv);
        }
    }
    return out;
}

// ^[0-9]{8}T[0-9]{6}Z-[a-z-]+-[0-9a-f]{16}\.json$ (no std::regex: GCC 12
// warns inside it under the sanitizers).
bool on_schema(const std::string& name) {
    const auto all = [&](std::size_t from, std::size_t n, const char* set) {
        return from + n <= name.size() &&
               name.substr(from, n).find_first_not_of(set) == std::string::npos;
    };
    constexpr std::size_t kStamp = 17;         // YYYYMMDDTHHMMSSZ-
    constexpr std::size_t kTail = 1 + 16 + 5;  // -<nonce>.json
    if (name.size() < kStamp + 1 + kTail) return false;
    const std::size_t verb_len = name.size() - kStamp - kTail;
    const std::size_t nonce_at = name.size() - 5 - 16;
    return all(0, 8, "0123456789") && name[8] == 'T' && all(9, 6, "0123456789") &&
           name[15] == 'Z' && name[16] == '-' &&
           all(kStamp, verb_len, "abcdefghijklmnopqrstuvwxyz-") && name[nonce_at - 1] == '-' &&
           all(nonce_at, 16, "0123456789abcdef") && name.compare(name.size() - 5, 5, ".json") == 0;
}

std::string show(const hb::test::GeneratedRequest& r) {
    return ::testing::PrintToString(r.name) + " " + ::testing::PrintToString(r.body);
}

TEST(DecideProperty, HundredThousandRequestsThroughTheValidatorAndTheArgvTable) {
    const hb::Startup enums{kServices, kBuildable};
    const std::vector<hb::Config> installs = {install(hb::BackendKind::Stack),
                                              install(hb::BackendKind::Compose)};
    std::vector<std::set<Argv>> tables;
    for (const auto& c : installs) tables.push_back(table_of(c));
    std::vector<std::set<Argv>> produced(installs.size());

    RequestGenerator gen(kSeed, kServices, std::time(nullptr));
    std::size_t accepted = 0, denied = 0, quarantined = 0, argvs = 0;
    std::vector<std::string> violations;
    for (int i = 0; i < 100000; ++i) {
        const auto request = gen.next({});
        // The parser process reads at most kMaxBody + 1 bytes.
        const std::size_t n = std::min(request.body.size(), hb::kMaxBody + 1);
        const auto* bytes = reinterpret_cast<const std::uint8_t*>(request.body.data());
        const hb::Verdict v = hb::parser::validate(request.name, {bytes, n}, enums);
        switch (v.outcome) {
            case hb::Outcome::Accept:
                ++accepted;
                if (!v.verb || v.reason != hb::ReasonCode::None) {
                    violations.push_back("accepted without a verb or with a reason: " +
                                         show(request));
                }
                break;
            case hb::Outcome::Deny:
                ++denied;
                break;
            case hb::Outcome::Quarantine:
                ++quarantined;
                break;
        }
        if (!v.verb) continue;
        // Whatever the outcome: argv_for() on what the parser named only
        // ever yields a row of the table (it checks the arg again itself).
        std::optional<std::size_t> arg;
        if (v.arg_index != hb::kNoArg) arg = v.arg_index;
        for (std::size_t k = 0; k < installs.size(); ++k) {
            const auto outcome = hb::exec::argv_for(*v.verb, arg, installs[k]);
            if (const auto* plan = std::get_if<hb::exec::Plan>(&outcome)) {
                ++argvs;
                for (const auto& step : *plan) {
                    produced[k].insert(step.argv);
                    if (tables[k].count(step.argv) == 0) {
                        violations.push_back("argv outside the table: " + show(request));
                    }
                }
            } else if (std::holds_alternative<hb::exec::NoCommand>(outcome)) {
                if (*v.verb != hb::Verb::Ping) violations.push_back("no command: " + show(request));
            } else if (v.outcome == hb::Outcome::Accept) {
                // An accepted request is refused here only by what the
                // install does not support.
                const auto reason = std::get<hb::exec::Denied>(outcome).reason;
                if (reason != hb::ReasonCode::JoinNetworkNotConfigured &&
                    reason != hb::ReasonCode::NotSupportedByCompose &&
                    reason != hb::ReasonCode::BuildNotConfigured) {
                    violations.push_back("accepted but argv_for refused: " + show(request));
                }
            }
        }
        if (violations.size() > 20) break;
    }
    EXPECT_TRUE(violations.empty()) << ::testing::PrintToString(violations);
    // The generator exercises every outcome, and every row of both tables.
    EXPECT_GT(accepted, 30000U);
    EXPECT_GT(denied, 15000U);
    EXPECT_GT(quarantined, 10000U);
    EXPECT_GT(argvs, 50000U);
    for (std::size_t k = 0; k < installs.size(); ++k) EXPECT_EQ(produced[k], tables[k]) << k;
    std::printf("accepted %zu, denied %zu, quarantined %zu, argv produced %zu\n", accepted, denied,
                quarantined, argvs);
}

// tmpfs when there is one: the property is about argv, not about the cost
// of fdatasync on a busy disk.
std::string scratch_base() {
    struct stat st {};
    if (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0) {
        return "/dev/shm";
    }
    return "/tmp";
}

TEST(DecideProperty, FiveThousandRequestsThroughTheDrainRunOnlyTableRows) {
    // The name check above agrees with docs/PROTOCOL.md on a few names.
    ASSERT_TRUE(on_schema("20261129T080000Z-join-network-0123456789abcdef.json"));
    ASSERT_FALSE(on_schema("20261129T080000Z-Status-0123456789abcdef.json"));
    ASSERT_FALSE(on_schema("20261129T080000Z-status-0123456789abcde.json"));
    ASSERT_FALSE(on_schema("20261129T080000Z--0123456789abcdef.json"));
    ASSERT_FALSE(on_schema("20261129T080000Z-status-0123456789abcdef.json.tmp"));
    StackFixture f(scratch_base());
    const std::string engine = f.root + "/engine";
    f.install_script(engine);
    f.config["services"] = kServices;
    f.config["buildable"] = kBuildable;
    f.config["join_network"] = {
        {"engine", engine}, {"network", "prop-net"}, {"agent_container", "agent"}};
    f.limits(1000000, 600, 1000000, 60);  // this test is not about the limiter
    const std::set<Argv> table = table_of(f.parsed_config());

    // Mostly pings, read-only verbs and refusals, so 5,000 stay fast.
    RequestGenerator gen(kSeed + 1, kServices, std::time(nullptr));
    const RequestGenerator::Mix mix{25, 30, 20};
    std::vector<std::string> answered;  // on-schema names: each gets a final response
    // 5 x 1,000; under ASan a fork costs ten times as much, so 2 x 500 there.
    constexpr int kBatches = kSanitized ? 2 : 5;
    constexpr int kPerBatch = kSanitized ? 500 : 1000;
    for (int batch = 0; batch < kBatches; ++batch) {
        for (int i = 0; i < kPerBatch; ++i) {
            const auto request = gen.next(mix);
            f.publish_as(request.name, request.body);
            if (on_schema(request.name)) answered.push_back(request.name);
        }
        f.drain();
        ASSERT_TRUE(f.list("requests").empty());
        ASSERT_TRUE(f.list("processing").empty());
    }

    const auto recorded = f.recorded();
    std::size_t outside = 0;
    for (const auto& argv : recorded) {
        if (table.count(argv) == 0) {
            ADD_FAILURE() << "ran an argv outside the table: " << ::testing::PrintToString(argv);
            if (++outside > 10) break;
        }
    }
    std::size_t started = 0, succeeded = 0, commands_succeeded = 0;
    for (const auto& line : f.audit()) {
        if (line["event"] == "started") ++started;
        if (line["event"] == "succeeded") {
            ++succeeded;
            if (line["verb"] != "ping") ++commands_succeeded;
        }
    }
    EXPECT_EQ(started, recorded.size());
    // Every command exits 0 here: each recorded run is one success, and
    // the successes without a run are exactly the pings.
    EXPECT_EQ(commands_succeeded, recorded.size());
    EXPECT_GT(recorded.size(), static_cast<std::size_t>(kBatches * kPerBatch / 5));

    std::size_t terminal = 0;
    for (const auto& name : answered) {
        const std::string state = f.state_of(name);
        if (state == "done" || state == "failed" || state == "denied" || state == "expired") {
            ++terminal;
        } else {
            ADD_FAILURE() << name << " ended " << state;
        }
    }
    EXPECT_EQ(terminal, answered.size());
    std::printf("%zu requests, %zu commands run, %zu succeeded events, %zu answered\n",
                static_cast<std::size_t>(kBatches * kPerBatch), recorded.size(), succeeded,
                answered.size());
}

}  // namespace
