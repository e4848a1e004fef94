// The sh client parses responses with awk, and awks differ (mawk is
// Debian's default, gawk is common, busybox brings its own). The response
// cases that stress the parser, under dash with each awk found here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/client/client_harness.hpp"

namespace hb::test {
namespace {

using nlohmann::json;

struct Awk {
    const char* name;
    const char* binary;  // linked as `awk` (busybox picks the applet by name)
};

const Awk kAwks[] = {
    {"mawk", "/usr/bin/mawk"},
    {"gawk", "/usr/bin/gawk"},
    {"busybox_awk", "/bin/busybox"},
    {"original_awk", "/usr/bin/original-awk"},
};

std::string awk_name(const ::testing::TestParamInfo<Awk>& p) {
    return p.param.name;
}

std::string hard_output() {
    std::string text = "-x %s %% \\ \\\\ \\u0041 \"\" \"q\\\"\" {\"state\":\"denied\"}\n";
    for (int c = 0; c < 0x80; ++c) text += static_cast<char>(c);
    text += "é € 😀 \u2028\n";
    return text;
}

class ClientAwkTest : public ::testing::TestWithParam<Awk> {
  protected:
    void SetUp() override {
        if (auto why = client_unavailable(ClientKind::Dash); !why.empty()) GTEST_SKIP() << why;
        if (::access(GetParam().binary, X_OK) != 0)
            GTEST_SKIP() << GetParam().binary << " is not installed";
        spool_ = dir_.path() + "/spool";
        make_spool(spool_);
        std::filesystem::create_directories(dir_.path() + "/bin");
        std::filesystem::create_symlink(GetParam().binary, dir_.path() + "/bin/awk");
    }

    ClientOptions with_awk() const {
        ClientOptions options;
        options.env = {"HOSTBRIDGE_SPOOL=" + spool_};
        options.path_prefix = dir_.path() + "/bin";
        return options;
    }

    // One client run answered with `body` (a response for its request);
    // `request`: its arguments after --timeout.
    ClientResult answered(const json& body, int indent = -1, bool ensure_ascii = false,
                          const std::vector<std::string>& request = {"ping"}) {
        std::vector<std::string> args = {"--timeout", "30"};
        args.insert(args.end(), request.begin(), request.end());
        ClientProcess client(ClientKind::Dash, args, with_awk());
        std::string name = wait_for_json(spool_ + "/requests");
        EXPECT_FALSE(name.empty());
        json response = body;
        response["request"] = name;
        publish_response(spool_, name, response.dump(indent, ' ', ensure_ascii));
        ClientResult r = client.wait();
        std::filesystem::remove(spool_ + "/requests/" + name);
        return r;
    }

    TempDir dir_;
    std::string spool_;
};

INSTANTIATE_TEST_SUITE_P(Awks, ClientAwkTest, ::testing::ValuesIn(kAwks), awk_name);

TEST_P(ClientAwkTest, OutputComesOutByteForByteInEveryJsonSpelling) {
    const json done = {
        {"state", "done"}, {"exit_code", nullptr}, {"reason", nullptr}, {"output", hard_output()}};
    for (int indent : {-1, 2}) {
        for (bool ascii : {false, true}) {
            ClientResult r = answered(done, indent, ascii);
            EXPECT_EQ(r.exit_code, 0) << r.err;
            EXPECT_EQ(r.out, hard_output()) << "indent " << indent << " ascii " << ascii;
        }
    }
}

TEST_P(ClientAwkTest, ReasonAndExitCodeReachStderr) {
    const json failed = {{"state", "failed"},
                         {"exit_code", 42},
                         {"reason", "it said \"no\" \\ twice\tand é"},
                         {"output", nullptr}};
    ClientResult r = answered(failed);
    EXPECT_EQ(r.exit_code, 70);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "hostbridge-request: failed: it said \"no\" \\ twice\tand é (exit code 42)\n");
}

TEST_P(ClientAwkTest, SixteenKibOfEscapesIsReadWhole) {
    std::string output;
    while (output.size() < 16384) output += "\x01\"\\\n%é";
    ClientResult r = answered({{"state", "done"}, {"output", output}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, output);
}

// The client checks a cursor's nanoseconds against INT64_MAX in awk (as
// strings: beyond some shells' arithmetic) and reads `cursor` and `more`.
TEST_P(ClientAwkTest, ACursorIsCheckedAtItsBoundAndReadBack) {
    ClientResult over = run_client(ClientKind::Dash,
                                   {"--since", "9223372036854775808:0", "logs", "web"}, with_awk());
    EXPECT_EQ(over.exit_code, 64) << over.err;
    EXPECT_NE(over.err.find("--since must be a cursor"), std::string::npos) << over.err;
    EXPECT_EQ(files_under(spool_), std::vector<std::string>{});
    for (int indent : {-1, 2}) {
        ClientResult r =
            answered({{"state", "done"},
                      {"output", "x\n"},
                      {"cursor", "9223372036854775807:1000000"},
                      {"more", true}},
                     indent, false, {"--since", "9223372036854775807:1000000", "logs", "web"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(r.out, "x\n");
        EXPECT_EQ(r.err, "cursor: 9223372036854775807:1000000\nmore: true\n") << indent;
    }
}

}  // namespace
}  // namespace hb::test
