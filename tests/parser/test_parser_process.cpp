// The real hostbridge-parser binary, spawned the way the executor spawns it:
// a SOCK_SEQPACKET socketpair on fd 3, real request files passed as fds.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "fixture.hpp"
#include "ipc/fd_passing.hpp"
#include "ipc/unique_fd.hpp"
#include "tests/support/files.hpp"
#include "tests/support/process.hpp"

#ifndef HB_PARSER_PATH
#error "HB_PARSER_PATH must name the hostbridge-parser binary"
#endif

namespace hb::parser {
namespace {

using namespace hb::parser::testing;
namespace fs = std::filesystem;

// One parser process and our end of its socket.
class Parser {
  public:
    Parser() {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
        sock_.reset(sv[0]);
        UniqueFd theirs(sv[1]);
        test::Command command;
        command.argv = {HB_PARSER_PATH};
        command.err = "";  // the test's
        command.fds = {{theirs.get(), 3}};
        child_ = test::Child(command);
    }

    [[nodiscard]] int sock() const { return sock_.get(); }
    void close_socket() { sock_.reset(); }

    // Waits (bounded, so a hung parser fails the test instead of hanging it)
    // and returns its exit code, or -signal.
    std::optional<int> wait_exit() { return child_.wait_for(std::chrono::seconds(20)); }

    void send_startup(const Startup& s = enums()) {
        ASSERT_TRUE(send_message(sock(), encode_startup(s)));
    }

    // Sends one request with the file at `path` attached; returns the verdict.
    Verdict ask(std::uint32_t seq, const std::string& basename, const fs::path& path) {
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
        EXPECT_TRUE(fd.valid());
        auto sent = send_message_with_fd(sock(), encode_request(Request{seq, basename}), fd.get());
        EXPECT_TRUE(sent) << (sent ? "" : sent.error().message);
        auto got = recv_message_timeout(sock(), kVerdictSize, FdPolicy::None, 20000);
        EXPECT_TRUE(got) << (got ? "" : got.error().message);
        if (!got || got->kind != Received::Kind::Message) {
            ADD_FAILURE() << "no verdict from the parser";
            return Verdict{};
        }
        auto v = decode_verdict(got->bytes, enums().services.size());
        EXPECT_TRUE(v) << (v ? "" : v.error().message);
        return v ? *v : Verdict{};
    }

  private:
    UniqueFd sock_;
    test::Child child_;  // killed and reaped at the end
};

fs::path write_file(const test::TempDir& dir, const std::string& name, const std::string& content) {
    fs::path p = dir.path(name);
    std::ofstream(p, std::ios::binary) << content;
    ::chmod(p.c_str(), 0644);
    return p;
}

void expect_clean_exit(Parser& p) {
    auto code = p.wait_exit();
    ASSERT_TRUE(code) << "parser did not exit";
    ASSERT_GE(*code, 0) << "killed by signal " << -*code;
    EXPECT_EQ(*code, 0);
}

void expect_failure_exit(Parser& p) {
    auto code = p.wait_exit();
    ASSERT_TRUE(code) << "parser did not exit";
    ASSERT_GE(*code, 0) << "killed by signal " << -*code;
    EXPECT_NE(*code, 0);
}

TEST(ParserProcess, ValidatesRealRequestsAndExitsOnEof) {
    test::TempDir dir("parser");
    Parser p;
    p.send_startup();

    const std::string restart = name_for("restart");
    Verdict v = p.ask(42, restart, write_file(dir, restart, body_for("restart", "web")));
    EXPECT_EQ(v.seq, 42U);
    EXPECT_EQ(v.outcome, Outcome::Accept);
    EXPECT_EQ(v.verb, Verb::Restart);
    EXPECT_EQ(v.arg_index, 2);  // "web"
    EXPECT_EQ(v.requested_at, kEpoch);

    // Several requests in one session, each answered with its own seq.
    const std::string ping = name_for("ping");
    v = p.ask(43, ping, write_file(dir, "empty", ""));
    EXPECT_EQ(v.seq, 43U);
    EXPECT_EQ(v.outcome, Outcome::Deny);
    EXPECT_EQ(v.reason, ReasonCode::EmptyBody);

    v = p.ask(44, ping, write_file(dir, "bom", "\xEF\xBB\xBF" + body_for("ping")));
    EXPECT_EQ(v.seq, 44U);
    EXPECT_EQ(v.outcome, Outcome::Quarantine);
    EXPECT_EQ(v.reason, ReasonCode::ByteOrderMark);

    // A large file: the parser reads no more than 4097 bytes and says so.
    v = p.ask(45, ping, write_file(dir, "big", std::string(1 << 20, ' ')));
    EXPECT_EQ(v.outcome, Outcome::Quarantine);
    EXPECT_EQ(v.reason, ReasonCode::BodyTooLarge);

    v = p.ask(46, "not-on-schema.json", write_file(dir, "x", body_for("ping")));
    EXPECT_EQ(v.outcome, Outcome::Quarantine);
    EXPECT_EQ(v.reason, ReasonCode::NameSchema);

    v = p.ask(47, name_for("rebuild"), write_file(dir, "rb", body_for("rebuild", "db")));
    EXPECT_EQ(v.outcome, Outcome::Deny);
    EXPECT_EQ(v.reason, ReasonCode::ArgNotBuildable);
    EXPECT_EQ(v.verb, Verb::Rebuild);

    p.close_socket();
    expect_clean_exit(p);
}

TEST(ParserProcess, UsesTheEnumerationsItWasGiven) {
    test::TempDir dir("parser");
    Parser p;
    p.send_startup(Startup{{"alpha", "beta"}, {"beta"}});
    const std::string name = name_for("restart");
    Verdict v = p.ask(1, name, write_file(dir, "a", body_for("restart", "beta")));
    EXPECT_EQ(v.outcome, Outcome::Accept);
    EXPECT_EQ(v.arg_index, 1);
    v = p.ask(2, name, write_file(dir, "b", body_for("restart", "api")));
    EXPECT_EQ(v.outcome, Outcome::Deny);
    EXPECT_EQ(v.reason, ReasonCode::ArgNotAService);
    p.close_socket();
    expect_clean_exit(p);
}

TEST(ParserProcess, GarbageStartupExitsNonzero) {
    Parser p;
    const std::vector<std::uint8_t> garbage = {'h', 'e', 'l', 'l', 'o'};
    ASSERT_TRUE(send_message(p.sock(), garbage));
    expect_failure_exit(p);
}

TEST(ParserProcess, StartupWithBadMagicExitsNonzero) {
    Parser p;
    auto bytes = encode_startup(enums());
    bytes[0] ^= 0xFF;
    ASSERT_TRUE(send_message(p.sock(), bytes));
    expect_failure_exit(p);
}

TEST(ParserProcess, StartupWithAnFdExitsNonzero) {
    test::TempDir dir("parser");
    Parser p;
    UniqueFd fd(::open(write_file(dir, "f", "x").c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(send_message_with_fd(p.sock(), encode_startup(enums()), fd.get()));
    expect_failure_exit(p);
}

TEST(ParserProcess, RequestWithoutFdExitsNonzero) {
    Parser p;
    p.send_startup();
    ASSERT_TRUE(send_message(p.sock(), encode_request(Request{1, name_for("ping")})));
    expect_failure_exit(p);
}

TEST(ParserProcess, GarbageRequestExitsNonzero) {
    test::TempDir dir("parser");
    Parser p;
    p.send_startup();
    UniqueFd fd(::open(write_file(dir, "f", body_for("ping")).c_str(), O_RDONLY | O_CLOEXEC));
    auto bytes = encode_request(Request{1, name_for("ping")});
    bytes.back() = 'x';  // padding not zero
    ASSERT_TRUE(send_message_with_fd(p.sock(), bytes, fd.get()));
    expect_failure_exit(p);
}

TEST(ParserProcess, EofBeforeStartupExitsZero) {
    Parser p;
    p.close_socket();
    expect_clean_exit(p);
}

}  // namespace
}  // namespace hb::parser
