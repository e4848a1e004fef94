// The container-facts reader (parser/container_inspect.cpp) on the real
// `podman container inspect` output of Debian 12's podman 4.3.1
// (data/podman-4.3.1-inspect.json: a healthy running container, one that
// exited 3 with a label full of JSON punctuation, and one of another
// project), on docker's shape, and on what no engine writes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parser/container_inspect.hpp"

namespace hb::parser {
namespace {

std::vector<std::uint8_t> bytes(const std::string& text) {
    return {text.begin(), text.end()};
}

std::string fixture() {
    std::ifstream in(std::string(HB_TEST_DATA) + "/podman-4.3.1-inspect.json", std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const InspectRequest kRequest{7, "pp", {"app", "db"}};

std::array<std::uint8_t, 32> id(const std::string& hex) {
    std::array<std::uint8_t, 32> out{};
    EXPECT_TRUE(parse_hex_id(hex, out)) << hex;
    return out;
}

TEST(ContainerInspect, ReadsRealPodmanOutput) {
    const InspectAnswer a = read_container_inspect(bytes(fixture()), kRequest);
    ASSERT_EQ(a.status, InspectStatus::Ok);
    EXPECT_EQ(a.seq, 7u);
    ASSERT_EQ(a.total, 3u);
    ASSERT_EQ(a.containers.size(), 3u);

    const ContainerFacts& healthy = a.containers[0];
    EXPECT_EQ(healthy.id, id("6fae82b12d65bfed24d45afe7f084f00f8b5c75af58651a4d3364cdc34aed81b"));
    EXPECT_EQ(healthy.image,
              id("67fd95d081015a96344ee2f14d217fcdca5817af9d363995cef53b3ec4ee9eef"));
    EXPECT_EQ(healthy.state, ContainerState::Running);
    EXPECT_EQ(healthy.health, ContainerHealth::Healthy);
    EXPECT_EQ(healthy.service, 0);
    EXPECT_TRUE(healthy.labelled);
    EXPECT_EQ(healthy.pid, 931u);
    EXPECT_EQ(healthy.restarts, 0u);
    EXPECT_EQ(healthy.started_ns, rfc3339_ns("2026-12-02T20:57:25.602731173Z"));

    const ContainerFacts& exited = a.containers[1];
    EXPECT_EQ(exited.state, ContainerState::Exited);
    EXPECT_EQ(exited.exit_code, 3);
    EXPECT_EQ(exited.health, ContainerHealth::None);  // no healthcheck configured
    EXPECT_EQ(exited.service, 1);
    EXPECT_TRUE(exited.labelled);
    EXPECT_EQ(exited.pid, 0u);

    const ContainerFacts& other = a.containers[2];
    EXPECT_EQ(other.state, ContainerState::Running);
    EXPECT_FALSE(other.labelled);  // com.docker.compose.project=other
}

TEST(ContainerInspect, ReadsDockersShape) {
    const std::string docker = R"([{
      "Id": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      "Image": "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
      "RestartCount": 2,
      "State": {"Status": "restarting", "Pid": 0, "ExitCode": 1,
                "StartedAt": "2026-12-02T10:00:00.5+01:00",
                "Health": {"Status": "unhealthy", "FailingStreak": 3, "Log": []}},
      "Config": {"Labels": {"com.docker.compose.project": "pp",
                            "com.docker.compose.service": "db"},
                 "Healthcheck": {"Test": ["CMD", "false"]}}}])";
    const InspectAnswer a = read_container_inspect(bytes(docker), kRequest);
    ASSERT_EQ(a.status, InspectStatus::Ok);
    ASSERT_EQ(a.containers.size(), 1u);
    const ContainerFacts& c = a.containers[0];
    EXPECT_EQ(c.image, id(std::string(64, 'b')));
    EXPECT_EQ(c.state, ContainerState::Restarting);
    EXPECT_EQ(c.health, ContainerHealth::Unhealthy);
    EXPECT_EQ(c.restarts, 2u);
    EXPECT_EQ(c.exit_code, 1);
    EXPECT_EQ(c.service, 1);
    EXPECT_EQ(c.started_ns, rfc3339_ns("2026-12-02T09:00:00.5Z"));
}

// A compose install's request: a container is the project's only with the
// install's label too (io.hostbridge.project, set by the rendered compose
// file), as a hand run of the same file with the same -p lacks it.
TEST(ContainerInspect, WithTheInstallLabelOnlyContainersThatCarryItAreTheProjects) {
    const auto one = [](const std::string& labels) {
        return R"([{"Id": ")" + std::string(64, 'a') +
               R"(", "State": {"Status": "running"}, "Config": {"Labels": {)" + labels + "}}}]";
    };
    const std::string both = R"("com.docker.compose.project": "pp", "io.hostbridge.project": "pp")";
    const std::string project_only = R"("com.docker.compose.project": "pp")";
    const std::string other_install =
        R"("com.docker.compose.project": "pp", "io.hostbridge.project": "qq")";
    const std::string label_only = R"("io.hostbridge.project": "pp")";
    InspectRequest labelled = kRequest;
    labelled.install_label = true;
    const auto is_labelled = [&](const std::string& labels, const InspectRequest& request) {
        const InspectAnswer a = read_container_inspect(bytes(one(labels)), request);
        EXPECT_EQ(a.status, InspectStatus::Ok);
        return !a.containers.empty() && a.containers[0].labelled;
    };
    EXPECT_TRUE(is_labelled(both, labelled));
    EXPECT_FALSE(is_labelled(project_only, labelled));
    EXPECT_FALSE(is_labelled(other_install, labelled));
    EXPECT_FALSE(is_labelled(label_only, labelled));
    // A stack's request asks for the project label alone.
    EXPECT_TRUE(is_labelled(project_only, kRequest));
    EXPECT_TRUE(is_labelled(other_install, kRequest));
    // The real podman output carries no install label: none is the project's.
    const InspectAnswer real = read_container_inspect(bytes(fixture()), labelled);
    ASSERT_EQ(real.containers.size(), 3u);
    for (const ContainerFacts& c : real.containers) EXPECT_FALSE(c.labelled);
}

// `up` (docs/COMPOSE.md, "Applying an approved edit"): the definition label
// against the hash the request names for the container's service.
TEST(ContainerInspect, TheDefinitionLabelIsComparedWithTheServicesHash) {
    const std::string hash(64, 'b');
    const auto match = [&](const std::string& service, const std::string& label,
                           const InspectRequest& request) {
        std::string labels =
            R"("com.docker.compose.project": "pp", "com.docker.compose.service": ")" + service +
            "\"";
        if (!label.empty()) labels += R"(, "io.hostbridge.definition": )" + label;
        const std::string json = R"([{"Id": ")" + std::string(64, 'a') +
                                 R"(", "State": {"Status": "running"}, "Config": {"Labels": {)" +
                                 labels + "}}}]";
        const InspectAnswer a = read_container_inspect(bytes(json), request);
        EXPECT_EQ(a.status, InspectStatus::Ok);
        return a.containers.empty() ? DefinitionMatch::NotAsked : a.containers[0].definition;
    };
    InspectRequest asked = kRequest;
    asked.definitions = {id(hash), {}};  // app's asked, db's not
    EXPECT_EQ(match("app", "\"" + hash + "\"", asked), DefinitionMatch::Same);
    EXPECT_EQ(match("app", "\"" + std::string(64, 'c') + "\"", asked), DefinitionMatch::Changed);
    EXPECT_EQ(match("app", "\"" + std::string(64, 'B') + "\"", asked), DefinitionMatch::Changed);
    EXPECT_EQ(match("app", "", asked), DefinitionMatch::Changed);  // made before the label
    EXPECT_EQ(match("app", "42", asked), DefinitionMatch::Changed);
    EXPECT_EQ(match("db", "\"" + hash + "\"", asked), DefinitionMatch::NotAsked);
    EXPECT_EQ(match("other", "\"" + hash + "\"", asked), DefinitionMatch::NotAsked);
    EXPECT_EQ(match("app", "\"" + hash + "\"", kRequest), DefinitionMatch::NotAsked);
}

TEST(ContainerInspect, AHealthcheckThatNeverRanIsStartingAndNoneIsNone) {
    const std::string base = R"({"Id": ")" + std::string(64, 'c') +
                             R"(", "State": {"Status": "running"}, "Config": {"Healthcheck": )";
    auto health = [&](const std::string& check) {
        const InspectAnswer a = read_container_inspect(bytes("[" + base + check + "}}]"), kRequest);
        EXPECT_EQ(a.status, InspectStatus::Ok) << check;
        return a.containers.empty() ? ContainerHealth::Unknown : a.containers[0].health;
    };
    EXPECT_EQ(health(R"({"Test": ["CMD-SHELL", "true"]})"), ContainerHealth::Starting);
    EXPECT_EQ(health(R"({"Test": ["NONE"]})"), ContainerHealth::None);
    EXPECT_EQ(health("null"), ContainerHealth::None);
}

TEST(ContainerInspect, RefusesWhatNoEngineWrites) {
    const auto status = [](const std::string& text) {
        return read_container_inspect(bytes(text), kRequest).status;
    };
    const std::string c =
        R"({"Id": ")" + std::string(64, 'd') + R"(", "State": {"Status": "running"}})";
    EXPECT_EQ(status("[" + c + "]"), InspectStatus::Ok);
    EXPECT_EQ(status("not json"), InspectStatus::NotJson);
    EXPECT_EQ(status(std::string(17, '[') + std::string(17, ']')), InspectStatus::NotJson);
    EXPECT_EQ(status("{}"), InspectStatus::BadShape);
    EXPECT_EQ(status("[1]"), InspectStatus::BadShape);
    EXPECT_EQ(status(R"([{"Id": "xyz", "State": {"Status": "running"}}])"),
              InspectStatus::BadShape);
    EXPECT_EQ(
        status(R"([{"Id": ")" + std::string(64, 'D') + R"(", "State": {"Status": "running"}}])"),
        InspectStatus::BadShape);  // the engine writes lowercase
    EXPECT_EQ(status(R"([{"Id": ")" + std::string(64, 'd') + R"("}])"), InspectStatus::BadShape);
    EXPECT_EQ(status(R"([{"Id": ")" + std::string(64, 'd') +
                     R"(", "RestartCount": -1, "State": {"Status": "running"}}])"),
              InspectStatus::BadShape);
    EXPECT_EQ(status(R"([{"Id": ")" + std::string(64, 'd') +
                     R"(", "State": {"Status": "running", "Pid": "1"}}])"),
              InspectStatus::BadShape);
    // A string of brackets is not depth.
    EXPECT_EQ(
        status(R"([{"Id": ")" + std::string(64, 'd') +
               R"(", "State": {"Status": "running"}, "X": ")" + std::string(100, '[') + R"("}])"),
        InspectStatus::Ok);
    std::string big = "[" + c;
    while (big.size() <= kMaxInspectBytes) big += "," + c;
    EXPECT_EQ(status(big + "]"), InspectStatus::TooLarge);
}

TEST(ContainerInspect, KeepsTheFirst32AndCountsThemAll) {
    std::string many = "[";
    for (int i = 0; i < 40; ++i) {
        many += std::string(i ? "," : "") + R"({"Id": ")" + std::string(64, 'e') +
                R"(", "State": {"Status": "running"}})";
    }
    const InspectAnswer a = read_container_inspect(bytes(many + "]"), kRequest);
    ASSERT_EQ(a.status, InspectStatus::Ok);
    EXPECT_EQ(a.total, 40u);
    EXPECT_EQ(a.containers.size(), kMaxInspectContainers);
}

TEST(ContainerInspect, Rfc3339) {
    EXPECT_EQ(rfc3339_ns("1970-01-01T00:00:00Z"), 0);
    EXPECT_EQ(rfc3339_ns("1970-01-01T00:00:01.5Z"), 1500000000);
    EXPECT_EQ(rfc3339_ns("2026-12-02T20:57:25.602731173Z"), 1796245045602731173);
    EXPECT_EQ(rfc3339_ns("2026-12-02T21:57:25.602731173+01:00"), 1796245045602731173);
    EXPECT_EQ(rfc3339_ns("2026-12-02T20:57:25.6027311739999Z"), 1796245045602731173);
    EXPECT_EQ(rfc3339_ns("0001-01-01T00:00:00Z"), 0);  // podman's "never"
    for (const char* bad :
         {"", "2026-12-02", "2026-12-02T20:57:25", "2026-13-02T20:57:25Z", "2026-12-02T20:57:25.Z",
          "2026-12-02T20:57:25Zx", "x026-12-02T20:57:25Z"}) {
        EXPECT_EQ(rfc3339_ns(bad), 0) << bad;
    }
}

}  // namespace
}  // namespace hb::parser
