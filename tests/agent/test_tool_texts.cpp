// What the MCP tools tell the model (client/agent/tools.cpp) against the rows of
// the argv table they describe (engines/argv_table.cpp): a row that changes
// what it does fails here until its text says so (issue 29: "rebuild
// recreates its container" was said while it only built).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "client/agent/tools.hpp"
#include "engines/argv_table.hpp"
#include "tests/support/files.hpp"

namespace {

using hb::BackendKind;
using hb::Config;
using hb::Verb;
using hb::exec::Argv;
using hb::exec::Plan;

Config compose_config() {
    Config c;
    c.slug = "demo-app";
    c.project_dir = "/home/u/demo-app";
    c.run_dir = "/home/u/.cache/hostbridge/run/demo-app";
    c.services = {"api", "web"};
    c.buildable = {"web"};
    c.backend = {BackendKind::Compose,
                 {"/usr/bin/podman-compose"},
                 "/home/u/demo-app/compose.yaml",
                 hb::ComposeFlavour::PodmanCompose};
    hb::BuildSettings build;
    build.engine = "/usr/bin/podman";
    build.project = "demo-app";
    build.services = {{"web", ".", "Containerfile", "", {}, "demo-app_web", "demo-app_web_1"}};
    c.build = build;
    return c;
}

Plan plan_of(Verb verb, std::optional<std::size_t> arg, const Config& c) {
    const auto outcome = hb::exec::argv_for(verb, arg, c);
    const auto* plan = std::get_if<Plan>(&outcome);
    return plan != nullptr ? *plan : Plan{};
}

bool has(const Argv& argv, const std::string& word) {
    return std::find(argv.begin(), argv.end(), word) != argv.end();
}

bool says(const std::string& verb, const std::string& text) {
    return hb::agent::tool_description_of(verb, "compose").find(text) != std::string::npos;
}

TEST(ToolTexts, ComposeRebuildSaysItBuildsFromACopyAndReplacesTheContainer) {
    const Plan plan = plan_of(Verb::Rebuild, 1, compose_config());
    ASSERT_EQ(plan.size(), 3U);
    // Built from the snapshot, offline; then S's container replaced, alone.
    EXPECT_TRUE(plan[0].snapshot_of.has_value());
    EXPECT_TRUE(has(plan[0].argv, "--network=none"));
    EXPECT_TRUE(has(plan[1].argv, "rm"));
    EXPECT_TRUE(has(plan[2].argv, "up") && has(plan[2].argv, "--no-build") &&
                plan[2].argv.back() == "web");
    EXPECT_TRUE(says("rebuild", "host-owned copy of its build context"));
    EXPECT_TRUE(says("rebuild", "no network during the build"));
    EXPECT_TRUE(says("rebuild", "replaces that service's container"));
    EXPECT_TRUE(says("rebuild", "the others keep running"));
}

TEST(ToolTexts, ComposeRestartAndUpSayWhatTheyDoNot) {
    const Config c = compose_config();
    const Plan restart = plan_of(Verb::Restart, 0, c);
    ASSERT_EQ(restart.size(), 1U);
    EXPECT_TRUE(has(restart[0].argv, "restart") && !has(restart[0].argv, "build"));
    EXPECT_TRUE(says("restart", "not a new image"));
    const Plan up = plan_of(Verb::Up, std::nullopt, c);
    ASSERT_EQ(up.size(), 1U);
    EXPECT_TRUE(has(up[0].argv, "--no-build"));
    EXPECT_TRUE(says("up", "Builds nothing"));
    const Plan down = plan_of(Verb::Down, std::nullopt, c);
    ASSERT_EQ(down.size(), 1U);
    EXPECT_TRUE(has(down[0].argv, "stop"));
    EXPECT_TRUE(says("down", "`compose stop`"));
}

// Without `settle`, `health` claims no check of its own exactly while its
// row is `status`'s and nothing follows it.
TEST(ToolTexts, ComposeHealthSaysItIsTheStatusListWhileItsRowIs) {
    const Config c = compose_config();
    ASSERT_FALSE(hb::exec::looks(Verb::Health, c));
    EXPECT_EQ(plan_of(Verb::Health, std::nullopt, c), plan_of(Verb::Status, std::nullopt, c));
    EXPECT_TRUE(says("health", "The same list as `status`"));
    EXPECT_TRUE(says("health", "runs no check of its own"));
}

// With `settle` (the manifest's verified_outcomes) the executor follows the
// rows with its engine queries: each text claims exactly what looks() and
// settles() say runs.
TEST(ToolTexts, WithVerifiedOutcomesEachTextSaysWhatTheEngineQueriesDo) {
    Config c = compose_config();
    c.settle = hb::SettleSettings{"/usr/bin/podman", "demo-app", 30};
    const auto verified = [](const std::string& verb, const std::string& text) {
        return hb::agent::tool_description_of(verb, "compose", true).find(text) !=
               std::string::npos;
    };
    ASSERT_TRUE(hb::exec::looks(Verb::Health, c));
    EXPECT_TRUE(verified("health", "healthcheck once"));
    EXPECT_TRUE(verified("health", "which have none"));
    EXPECT_FALSE(verified("health", "runs no check"));
    ASSERT_TRUE(hb::exec::looks(Verb::Status, c));
    EXPECT_TRUE(verified("status", "(in `services`)"));
    for (const Verb verb : {Verb::Up, Verb::Restart, Verb::Rebuild, Verb::Down, Verb::Logs}) {
        const std::string name(hb::verb_name(verb));
        EXPECT_EQ(verified(name, "waits until the services it touched settled"),
                  hb::exec::settles(verb, c))
            << name;
        EXPECT_FALSE(says(name, "settled")) << name;  // not without settle
    }
    hb::agent::Manifest m = hb::agent::parse_manifest(
        R"({"format": 1, "backend": "compose", "verified_outcomes": true,
            "verbs": [{"verb": "health", "mode": "auto"}]})");
    EXPECT_TRUE(m.verified_outcomes);
    EXPECT_NE(
        hb::agent::tool_list(m, true)[0]["description"].get<std::string>().find("healthcheck once"),
        std::string::npos);
    m = hb::agent::parse_manifest(
        R"({"format": 1, "backend": "compose", "verified_outcomes": "yes", "verbs": []})");
    EXPECT_FALSE(m.verified_outcomes);  // only JSON true
}

// docs/MCP.md retells what the compose tool texts claim: each claim is said
// there, and a claim a text makes only with (or only without)
// verified_outcomes is said in a clause that names the key (issue 48:
// MCP.md said `health` runs no check while its text, on every install
// that settles, runs each healthcheck once).
TEST(ToolTexts, McpMdTellsEachClaimWithTheManifestKeyItDependsOn) {
    std::string doc = hb::test::read_file(std::string(HB_SOURCE_DIR) + "/docs/MCP.md");
    std::replace(doc.begin(), doc.end(), '\n', ' ');
    const auto lower = [](std::string text) {
        for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return text;
    };
    // MCP.md's clauses: between semicolons and sentence ends.
    std::vector<std::string> clauses(1);
    for (std::size_t i = 0; i < doc.size(); ++i) {
        if (doc[i] == ';' || (doc[i] == '.' && i + 1 < doc.size() && doc[i + 1] == ' ')) {
            clauses.emplace_back();
        } else {
            clauses.back() += doc[i];
        }
    }
    const std::vector<std::pair<std::string, std::string>> claims = {
        {"health", "runs no check of its own"},
        {"health", "healthcheck once"},
        {"up", "builds nothing"},
        {"restart", "not a new image"},
    };
    for (const auto& [verb, claim] : claims) {
        const auto text = [&](bool verified) {
            return lower(hb::agent::tool_description_of(verb, "compose", verified));
        };
        const bool without = text(false).find(claim) != std::string::npos;
        const bool with = text(true).find(claim) != std::string::npos;
        ASSERT_TRUE(without || with) << verb << ": no text claims \"" << claim << "\" any more";
        const auto told = std::find_if(clauses.begin(), clauses.end(), [&](const std::string& c) {
            return c.find("`" + verb + "`") != std::string::npos &&
                   lower(c).find(claim) != std::string::npos;
        });
        ASSERT_NE(told, clauses.end()) << "docs/MCP.md does not say `" << verb << "` " << claim;
        if (without != with) {
            EXPECT_NE(told->find("verified_outcomes"), std::string::npos)
                << "docs/MCP.md says `" << verb << "` " << claim << " without naming "
                << "verified_outcomes, which the text depends on: " << *told;
        }
    }
}

// A stack whose containers carry compose's labels (install --stack-project):
// its script's row runs, then the same engine queries; each text says so
// exactly where looks() and settles() hold, and never without `settle`.
TEST(ToolTexts, AStackWithVerifiedOutcomesSaysTheHostLooksAfterItsScript) {
    Config c = compose_config();
    c.backend = {BackendKind::Stack, {"/home/u/demo-app/stack"}, "", {}};
    c.build.reset();
    const auto text = [](const std::string& verb, bool verified) {
        return hb::agent::tool_description_of(verb, "script", verified);
    };
    for (const Verb verb : {Verb::Status, Verb::Health, Verb::Up, Verb::Restart, Verb::Rebuild,
                            Verb::Down, Verb::Logs, Verb::Init}) {
        const std::string name(hb::verb_name(verb));
        c.settle.reset();
        EXPECT_FALSE(hb::exec::settles(verb, c) || hb::exec::looks(verb, c));
        EXPECT_EQ(text(name, false).find("(in `services`)"), std::string::npos) << name;
        EXPECT_EQ(text(name, false).find("settled"), std::string::npos) << name;
        c.settle = hb::SettleSettings{"/usr/bin/podman", "demo-app", 30};
        const std::string with = text(name, true);
        EXPECT_TRUE(with.starts_with(text(name, false))) << with;  // the script still runs
        EXPECT_EQ(with.find("waits until the services it touched settled") != std::string::npos,
                  hb::exec::settles(verb, c))
            << name;
        EXPECT_EQ(with.find("(in `services`)") != std::string::npos ||
                      with.find("healthcheck once") != std::string::npos,
                  hb::exec::looks(verb, c))
            << name;
    }
    // The engine's healthcheck row runs for a stack too (podman).
    EXPECT_TRUE(
        hb::exec::settle_healthcheck(c, hb::exec::posture(c), std::string(64, 'a')).has_value());
    EXPECT_TRUE(hb::exec::accepts_log_window(c));
}

TEST(ToolTexts, ComposeLogsSaysHowManyLinesItsRowAsksFor) {
    const Plan logs = plan_of(Verb::Logs, 0, compose_config());
    ASSERT_EQ(logs.size(), 1U);
    const auto tail = std::find(logs[0].argv.begin(), logs[0].argv.end(), "--tail");
    ASSERT_NE(tail, logs[0].argv.end());
    EXPECT_TRUE(says("logs", "last " + *(tail + 1) + " lines"));
}

TEST(ToolTexts, InitIsNotOfferedWithComposeWhoseTableRefusesIt) {
    EXPECT_TRUE(std::holds_alternative<hb::exec::Denied>(
        hb::exec::argv_for(Verb::Init, std::nullopt, compose_config())));
    hb::agent::Manifest m = hb::agent::parse_manifest(
        R"({"format": 1, "backend": "compose", "verbs": [{"verb": "init", "mode": "auto"},
            {"verb": "status", "mode": "auto"}]})");
    const auto tools = hb::agent::tool_list(m, true);
    ASSERT_EQ(tools.size(), 1U);
    EXPECT_EQ(tools[0]["name"], "status");
}

// What every tool shares is said once, in the instructions.
TEST(ToolTexts, TheSharedAdviceIsInTheInstructionsNotInEachTool) {
    hb::agent::Manifest m = hb::agent::parse_manifest(
        R"({"format": 1, "backend": "compose", "verbs": [{"verb": "status", "mode": "auto"},
            {"verb": "restart", "mode": "auto"}], "services": ["api"]})");
    for (const auto& tool : hb::agent::tool_list(m, true)) {
        const std::string d = tool["description"].get<std::string>();
        EXPECT_EQ(d.find("retry"), std::string::npos) << d;
        EXPECT_LT(d.size(), 400U) << d;
    }
    EXPECT_NE(hb::agent::tool_instructions().find("never retry"), std::string::npos);
}

// A compose manifest offering logs and status for api, with `extra`
// members (each followed by a comma) before them.
hb::agent::Manifest logs_manifest(const std::string& extra) {
    return hb::agent::parse_manifest(
        R"({"format": 1, "backend": "compose", )" + extra +
        R"("verbs": [{"verb": "logs", "mode": "auto"}, {"verb": "status", "mode": "auto"}],
           "services": ["api"]})");
}

// `log_window` (the manifest; docs/PROTOCOL.md `lines` and `since`): the
// logs tool takes both and says how to follow a log; without it, and on
// every other tool, nothing changes.
TEST(ToolTexts, TheLogWindowIsOfferedOnTheLogsToolExactlyWhereTheManifestSaysSo) {
    const hb::agent::Manifest plain = logs_manifest("");
    const hb::agent::Manifest window = logs_manifest(R"("log_window": true, )");
    EXPECT_FALSE(plain.log_window);
    EXPECT_TRUE(window.log_window);
    EXPECT_FALSE(logs_manifest(R"("log_window": "yes", )").log_window);  // only JSON true

    const auto p = hb::agent::tool_list(plain, true);
    const auto w = hb::agent::tool_list(window, true);
    ASSERT_EQ(p.size(), 2U);
    ASSERT_EQ(w.size(), 2U);
    ASSERT_EQ(w[0]["name"], "logs");
    EXPECT_EQ(p[0]["inputSchema"]["properties"].size(), 1U) << p[0].dump();
    const auto& in = w[0]["inputSchema"];
    EXPECT_EQ(in["properties"]["lines"]["type"], "integer");
    EXPECT_EQ(in["properties"]["lines"]["minimum"], 1);
    EXPECT_EQ(in["properties"]["lines"]["maximum"], 1000);
    EXPECT_EQ(in["properties"]["since"]["type"], "string");
    EXPECT_NE(in["properties"]["since"]["description"].get<std::string>().find(
                  "cursor a previous logs answer returned"),
              std::string::npos);
    EXPECT_EQ(in["required"], nlohmann::json({"service"}));  // both optional
    EXPECT_EQ(in["additionalProperties"], false);
    const std::string d = w[0]["description"];
    EXPECT_NE(d.find("pass the previous answer's `cursor` as `since`"), std::string::npos) << d;
    EXPECT_NE(d.find("`more: true` means more are waiting: call again"), std::string::npos) << d;
    EXPECT_EQ(p[0]["description"].get<std::string>().find("cursor"), std::string::npos);
    EXPECT_EQ(hb::agent::tool_description_of("logs", "compose", true, true), d);
    EXPECT_TRUE(w[0]["outputSchema"]["properties"].contains("cursor"));
    EXPECT_EQ(w[0]["outputSchema"]["properties"]["more"]["type"], "boolean");
    EXPECT_FALSE(p[0]["outputSchema"]["properties"].contains("cursor"));
    EXPECT_FALSE(hb::agent::tool_list(window, false)[0].contains("outputSchema"));
    EXPECT_EQ(w[1], p[1]);  // status: as without
}

// A call's `lines` and `since` are checked by the host's rules and carried
// as the request's strings; where the window is not offered, or on another
// verb, they are refused as any unknown argument is.
TEST(ToolTexts, ALogWindowCallIsCheckedAndCarriedAsStrings) {
    const hb::agent::Manifest plain = logs_manifest("");
    const hb::agent::Manifest window = logs_manifest(R"("log_window": true, )");
    using nlohmann::json;
    auto ok = hb::agent::check_call(
        window, "logs", {{"since", "1764762565926492145:2"}, {"lines", 50}, {"service", "api"}});
    ASSERT_TRUE(ok.target.has_value()) << ok.error;
    EXPECT_EQ(ok.target->service, "api");
    EXPECT_EQ(ok.target->lines, "50");
    EXPECT_EQ(ok.target->since, "1764762565926492145:2");
    ok = hb::agent::check_call(window, "logs", {{"service", "api"}, {"lines", 1000}});
    ASSERT_TRUE(ok.target.has_value()) << ok.error;
    EXPECT_EQ(ok.target->lines, "1000");
    EXPECT_FALSE(ok.target->since.has_value());
    ok = hb::agent::check_call(window, "logs", {{"service", "api"}});
    ASSERT_TRUE(ok.target.has_value()) << ok.error;
    EXPECT_FALSE(ok.target->lines.has_value());

    const std::string lines_rule = "`lines` must be an integer from 1 to 1000";
    const std::string since_rule = "`since` must be the `cursor` a previous logs answer returned";
    const std::vector<std::pair<json, std::string>> refused = {
        {{{"service", "api"}, {"lines", 0}}, lines_rule},
        {{{"service", "api"}, {"lines", 1001}}, lines_rule},
        {{{"service", "api"}, {"lines", -1}}, lines_rule},
        {{{"service", "api"}, {"lines", 50.5}}, lines_rule},
        {{{"service", "api"}, {"lines", "50"}}, lines_rule},
        {{{"service", "api"}, {"lines", 18446744073709551615ULL}}, lines_rule},
        {{{"service", "api"}, {"since", "01:0"}}, since_rule},
        {{{"service", "api"}, {"since", "9223372036854775808:0"}}, since_rule},
        {{{"service", "api"}, {"since", "1:1000001"}}, since_rule},
        {{{"service", "api"}, {"since", 17}}, since_rule},
        {{{"service", "api"}, {"tail", 5}},
         "`logs` takes only `service`, `lines` and `since`; drop `tail`"},
    };
    for (const auto& [arguments, says] : refused) {
        const auto c = hb::agent::check_call(window, "logs", arguments);
        EXPECT_FALSE(c.target.has_value()) << arguments.dump();
        EXPECT_NE(c.error.find(says), std::string::npos) << arguments.dump() << ": " << c.error;
    }
    EXPECT_EQ(hb::agent::check_call(plain, "logs", {{"service", "api"}, {"lines", 5}}).error,
              "`logs` takes only `service`; drop `lines`");
    EXPECT_EQ(hb::agent::check_call(window, "status", {{"since", "0:0"}}).error,
              "`status` takes no arguments; drop `since`");
}

}  // namespace
