// hostbridge-pin (engines/podman/pin_main.cpp) runs its two modes under the
// seccomp filter sandbox/seccomp_policy.cpp's pin_policy builds: the real
// binary is seen confined while it answers, a process under that filter is
// killed for what pinning does not need (exec, a socket, a write to a file,
// an unlink), and a pinned install whose pin binary is missing is refused
// before any row runs (engines/registry.cpp, step_environment).
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "engines/registry.hpp"
#include "ipc/unique_fd.hpp"
#include "sandbox/seccomp_policy.hpp"
#include "tests/support/files.hpp"

namespace hb::test {
namespace {

std::string status_field(pid_t pid, const std::string& field) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with(field + ":")) {
            const auto at = line.find_first_not_of(" \t", field.size() + 1);
            return at == std::string::npos ? "" : line.substr(at);
        }
    }
    return "";
}

// The real binary, its stdout a full pipe: it blocks writing its answer,
// after its filter went on, and /proc says what confines it.
TEST(PinBinary, AnswersUnderItsSeccompFilter) {
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    UniqueFd read_end(p[0]), write_end(p[1]);
    ASSERT_GT(::fcntl(write_end.get(), F_SETPIPE_SZ, 4096), 0);
    ASSERT_EQ(::fcntl(write_end.get(), F_SETFL, O_NONBLOCK), 0);
    const std::string fill(4096, 'x');
    while (::write(write_end.get(), fill.data(), fill.size()) > 0) {
    }
    ASSERT_EQ(::fcntl(write_end.get(), F_SETFL, 0), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ::dup2(write_end.get(), 1);
        const char* argv[] = {HB_PIN_BIN, "check-pins", "/nonexistent-run", "1", "src",
                              "/srv",     nullptr};
        ::execv(HB_PIN_BIN, const_cast<char**>(argv));
        ::_exit(127);
    }
    write_end.reset();
    std::string seccomp;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
        seccomp = status_field(pid, "Seccomp");
        if (seccomp == "2") break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(seccomp, "2") << "hostbridge-pin answered without its seccomp filter";
    EXPECT_EQ(status_field(pid, "NoNewPrivs"), "1");
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) > 0;) out.append(buf, n);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 1);
    EXPECT_NE(out.find("unreadable 0 "), std::string::npos) << out.substr(out.size() - 200);
}

// `body` in a child under the pin binary's filter; its wait status.
int under_pin_policy(const std::function<void()>& body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (!sandbox::install_seccomp(sandbox::pin_policy(::getpid()))) ::_exit(100);
        body();
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
}

bool killed_by_seccomp(int status) {
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

TEST(PinPolicy, RefusesWhatPinningAndCheckingDoNotNeed) {
    TempDir dir;
    dir.write("file", "kept");
    const std::string file = dir.path("file");
    EXPECT_TRUE(killed_by_seccomp(under_pin_policy([&] {
        ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    }))) << "an open for writing";
    EXPECT_TRUE(killed_by_seccomp(under_pin_policy([&] {
        ::open((dir.path() + "/new").c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
    }))) << "an open that creates";
    EXPECT_TRUE(killed_by_seccomp(under_pin_policy([&] {
        ::open(file.c_str(), O_RDONLY | O_TRUNC | O_CLOEXEC);
    }))) << "an open that truncates";
    EXPECT_TRUE(killed_by_seccomp(under_pin_policy([&] { ::unlink(file.c_str()); })))
        << "an unlink";
    EXPECT_TRUE(killed_by_seccomp(under_pin_policy([&] {
        const char* argv[] = {"/bin/true", nullptr};
        ::execv("/bin/true", const_cast<char**>(argv));
    }))) << "an exec";
    EXPECT_TRUE(killed_by_seccomp(under_pin_policy([] { ::socket(AF_UNIX, SOCK_STREAM, 0); })))
        << "a socket";
    // An fd it was handed: a write goes to 1 and 2 only. A sanitized build
    // lets UBSan's memory probe write to any fd from 3 up
    // (allow_sanitizer_runtime, sandbox/seccomp_policy.cpp): not checked there.
    if (sandbox::sanitizer_build()) {
        std::cout << "[ SKIPPED  ] a write to a handed file: the sanitizer runtime's allowance "
                     "permits writes to fds from 3 up in this build\n";
    } else {
        const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        EXPECT_TRUE(killed_by_seccomp(under_pin_policy([&] { (void)::write(fd, "x", 1); })))
            << "a write to a file";
        ::close(fd);
    }
    EXPECT_EQ(read_file(file), "kept");
    // What it needs: looking up, with no write flag, is allowed.
    const int looked = under_pin_policy([&] {
        const int f = ::open(file.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
        struct stat st {};
        ::_exit(f >= 0 && ::fstat(f, &st) == 0 && st.st_size == 4 ? 0 : 1);
    });
    EXPECT_TRUE(WIFEXITED(looked) && WEXITSTATUS(looked) == 0) << looked;
}

// A pinned install whose pin binary is gone: every row is refused, saying
// which binary, before podman is asked to run it.
TEST(PinBinary, APinnedInstallWithoutItIsRefusedBeforeAnyRow) {
    TempDir dir;
    Config config;
    config.pins = BindPins{"/usr/bin/podman", dir.path() + "/hostbridge-pin", {"src"}};
    auto refused = exec::registry().step_environment(config);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("the pin binary " + dir.path() + "/hostbridge-pin"),
              std::string::npos)
        << refused.error().message;
    config.pins->binary = HB_PIN_BIN;
    EXPECT_TRUE(exec::registry().step_environment(config));
}

}  // namespace
}  // namespace hb::test
