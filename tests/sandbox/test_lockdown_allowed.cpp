// Everything the parser needs still works after lock_down(): reading an
// inherited fd, receiving a request fd and answering on the socket,
// small and large allocations, JSON parsing with exceptions, writing to
// fd 2, and a clean exit. Also how a locked process may end: abort()
// stays SIGABRT (the one tgkill the filter allows) and exit() runs.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ipc/fd_passing.hpp"
#include "locked_child.hpp"
#include "tests/support/files.hpp"

namespace hb::sandbox::test {
namespace {

constexpr int kWrong = 1;  // the child saw something other than expected

std::span<const std::uint8_t> as_bytes(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// What the parser does with one request, inside the locked child.
int parser_like_round_trip() {
    auto request = recv_message(3, 64, FdPolicy::ExactlyOne);
    if (!request || request->kind != Received::Kind::Message) return kWrong;
    std::string body(4097, '\0');
    const ssize_t n = ::read(request->fd.get(), body.data(), body.size());
    if (n < 0) return kWrong;
    body.resize(static_cast<std::size_t>(n));
    request->fd.reset();  // close

    std::string verb;
    try {
        verb = nlohmann::json::parse(body).at("verb").get<std::string>();
        const auto never = nlohmann::json::parse("{\"verb\": ");  // throws: unwinding works too
        return never.is_object() ? kWrong : kWrong;
    } catch (const nlohmann::json::parse_error&) {
    }
    const std::string name(request->bytes.begin(), request->bytes.end());
    if (!send_message(3, as_bytes(name + ":" + verb))) return kWrong;
    return 0;
}

int allocate_small_and_large() {
    auto small = std::make_unique<char[]>(32);
    std::memset(small.get(), 'a', 32);
    // Past the mmap threshold: mmap, then realloc moves it (mremap), free (munmap).
    constexpr std::size_t kLarge = 64 << 20;
    void* large = std::malloc(kLarge);
    if (large == nullptr) return kWrong;
    std::memset(large, 'b', kLarge);
    void* larger = std::realloc(large, 2 * kLarge);
    if (larger == nullptr) return kWrong;
    std::memset(larger, 'c', 2 * kLarge);
    std::free(larger);
    // Many small blocks: the heap grows (brk) and shrinks.
    std::vector<std::string> many;
    for (int i = 0; i < 20000; ++i) many.emplace_back(100, 'd');
    many.clear();
    many.shrink_to_fit();
    return 0;
}

TEST(LockdownAllowed, ParserWorkloadRunsToExitZero) {
    hb::test::TempDir dir("sandbox");
    const auto request_path = std::filesystem::path(dir.path("ping-20260101T000000Z-0001.json"));
    std::ofstream(request_path) << R"({"verb":"ping","requested_at":"2026-01-01T00:00:00Z"})"
                                << '\n';

    LockedChild child(
        [] {
            lock_or_exit();
            // 1. An inherited fd (fd 0 here) can be read.
            char inherited[32] = {};
            if (::read(0, inherited, sizeof inherited - 1) != 14 ||
                std::strcmp(inherited, "inherited-data") != 0) {
                return kWrong;
            }
            // 2. Memory.
            if (allocate_small_and_large() != 0) return kWrong;
            // 3. recvmsg with an fd, read it, sendmsg the answer.
            if (parser_like_round_trip() != 0) return kWrong;
            // 4. fd 2.
            static const char kLine[] = "locked child writes to stderr\n";
            if (::write(2, kLine, sizeof kLine - 1) != sizeof kLine - 1) return kWrong;
            return 0;
        },
        {.stdin_pipe = true, .stderr_pipe = true});

    ASSERT_EQ(::write(child.stdin_w().get(), "inherited-data", 14), 14);
    child.stdin_w().reset();
    ASSERT_TRUE(child.wait_ready().has_value()) << child.read_stderr();

    UniqueFd request(::open(request_path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(request.valid());
    ASSERT_TRUE(send_message_with_fd(child.socket(), as_bytes(request_path.filename().string()),
                                     request.get()));
    auto answer = recv_message(child.socket(), 256, FdPolicy::None);
    ASSERT_TRUE(answer && answer->kind == Received::Kind::Message);
    EXPECT_EQ(std::string(answer->bytes.begin(), answer->bytes.end()),
              request_path.filename().string() + ":ping");

    const int status = child.wait();
    EXPECT_TRUE(exited_with(status, 0)) << describe_status(status);
    EXPECT_EQ(child.read_stderr(), "locked child writes to stderr\n");
}

// RLIMIT_FSIZE 0: no file can grow, not even a stderr that is a regular
// file (a unit's append: log). The write fails with EFBIG and, SIGXFSZ
// being ignored, the parser lives on instead of dying on a diagnostic.
TEST(LockdownAllowed, WriteToAFileBackedStderrFailsWithoutKilling) {
    hb::test::TempDir dir("sandbox");
    const auto log_path = std::filesystem::path(dir.path("service.log"));
    UniqueFd opened(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
    ASSERT_TRUE(opened.valid());
    // Above the fds the child rearranges (0-3), so it survives until dup2.
    UniqueFd log(::fcntl(opened.get(), F_DUPFD_CLOEXEC, 20));
    ASSERT_TRUE(log.valid());
    const int log_fd = log.get();
    LockedChild child([log_fd] {
        if (::dup2(log_fd, 2) < 0) return kChildSetupFailed;
        lock_or_exit();
        const ssize_t n = ::write(2, "diagnostic\n", 11);
        return n == -1 && errno == EFBIG ? 0 : kWrong;
    });
    ASSERT_TRUE(child.wait_ready().has_value());
    const int status = child.wait();
    EXPECT_TRUE(exited_with(status, 0)) << describe_status(status);
    EXPECT_EQ(std::filesystem::file_size(log_path), 0U);
}

TEST(LockdownAllowed, ExitRunsAtexitHandlers) {
    LockedChild child(
        []() -> int {
            lock_or_exit();
            std::atexit([] { (void)!::write(2, "atexit ran\n", 11); });
            std::exit(0);  // the parser's own way out: return from main
        },
        {.stderr_pipe = true});
    ASSERT_TRUE(child.wait_ready().has_value());
    const int status = child.wait();
    EXPECT_TRUE(exited_with(status, 0)) << describe_status(status);
    EXPECT_EQ(child.read_stderr(), "atexit ran\n");
}

TEST(LockdownAllowed, AbortEndsInSigabrtNotSigsys) {
    LockedChild child([]() -> int {
        lock_or_exit();
        std::abort();
    });
    ASSERT_TRUE(child.wait_ready().has_value());
    const int status = child.wait();
    EXPECT_TRUE(killed_by(status, SIGABRT)) << describe_status(status);
}

TEST(LockdownAllowed, UncaughtExceptionEndsInSigabrt) {
    LockedChild child(
        [] {
            lock_or_exit();
            const auto never = nlohmann::json::parse("not json");  // uncaught: std::terminate
            return never.is_null() ? kChildSurvived : kChildSurvived;
        },
        {.stderr_pipe = true});
    ASSERT_TRUE(child.wait_ready().has_value());
    const int status = child.wait();
    EXPECT_TRUE(killed_by(status, SIGABRT)) << describe_status(status);
    EXPECT_NE(child.read_stderr().find("terminate called"), std::string::npos);
}

TEST(LockdownAllowed, RecvmsgReportsEofWhenTheExecutorCloses) {
    LockedChild child([] {
        lock_or_exit();
        auto got = recv_message(3, 64, FdPolicy::ExactlyOne);
        return got && got->kind == Received::Kind::Eof ? 0 : kWrong;
    });
    ASSERT_TRUE(child.wait_ready().has_value());
    ::shutdown(child.socket(), SHUT_RDWR);
    const int status = child.wait();
    EXPECT_TRUE(exited_with(status, 0)) << describe_status(status);
}

#if defined(__SANITIZE_ADDRESS__)
// The sanitized build runs the parser under the same filter: a memory
// error found after lockdown must still be reported and end the process
// (SIGABRT with abort_on_error=1, else ASan's exit code), not die halfway
// through the report on a syscall the runtime was refused.
TEST(LockdownAllowed, SanitizerReportSurvivesTheFilter) {
    LockedChild child(
        [] {
            lock_or_exit();
            // Use after free: ASan's finding (UBSan has no check for it).
            char* block = new char[16];
            delete[] block;
            volatile char* volatile dangling = block;
            dangling[0] = 'x';
            return kChildSurvived;
        },
        {.stderr_pipe = true});
    ASSERT_TRUE(child.wait_ready().has_value());
    const int status = child.wait();
    const std::string report = child.read_stderr();
    EXPECT_FALSE(killed_by(status, SIGSYS)) << "the filter killed the report:\n" << report;
    EXPECT_TRUE(killed_by(status, SIGABRT) || (WIFEXITED(status) && WEXITSTATUS(status) != 0))
        << describe_status(status);
    EXPECT_NE(report.find("ERROR: AddressSanitizer: heap-use-after-free"), std::string::npos)
        << report;
}

// UBSan's runtime initialises itself on its first report, reading
// /proc/self/environ: the filter refuses that, so a UBSan finding in the
// locked parser ends it with SIGSYS before any text. What matters holds:
// the process never runs on past undefined behaviour.
TEST(LockdownAllowed, UbsanFindingUnderTheFilterStillEndsTheProcess) {
    LockedChild child([] {
        lock_or_exit();
        volatile int big = std::numeric_limits<int>::max();
        volatile int overflow = big + 1;  // signed overflow: a UBSan finding
        (void)overflow;
        return kChildSurvived;
    });
    ASSERT_TRUE(child.wait_ready().has_value());
    const int status = child.wait();
    EXPECT_TRUE(
        killed_by(status, SIGSYS) || killed_by(status, SIGABRT) ||
        (WIFEXITED(status) && WEXITSTATUS(status) != kChildSurvived && WEXITSTATUS(status) != 0))
        << describe_status(status);
}
#endif

}  // namespace
}  // namespace hb::sandbox::test
