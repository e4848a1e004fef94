// common/engine_socket.cpp and its use by the runner (executor/runner.cpp):
// the engine user's socket is opened with no link followed and must be a
// socket that user owns; podman is handed the open file, so a swap of the
// name afterwards (an escape as the engine user pointing it at the
// person's own podman socket) reaches nothing else.
#include "common/engine_socket.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "engines/podman/engine_relay.hpp"
#include "executor/runner.hpp"
#include "tests/support/files.hpp"

namespace hb::exec {
namespace {

using std::chrono::seconds;

// Non-blocking, so reached() can ask each listener in turn.
UniqueFd listen_at(const std::string& path) {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (!fd || path.size() >= sizeof addr.sun_path) return {};
    std::strcpy(addr.sun_path, path.c_str());
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd.get(), 4) != 0)
        return {};
    return fd;
}

// What a client that connects by path reaches: the socket whose listener
// accepts (none: -1).
int reached(const std::string& path, const std::vector<int>& listeners) {
    UniqueFd c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    if (::connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
    for (int l : listeners) {
        UniqueFd accepted(::accept4(l, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (accepted) return l;
    }
    return -1;
}

// Which listener a connection through `path` (the relay) reaches: the
// relay connects upstream on its own time, so each listener is asked for
// a while.
int reached_through(const std::string& path, int engine_fd, int person_fd) {
    UniqueFd c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    if (::connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return -1;
    for (int i = 0; i < 500; ++i) {
        for (int l : {engine_fd, person_fd}) {
            UniqueFd accepted(::accept4(l, nullptr, nullptr, SOCK_CLOEXEC));
            if (accepted) return l;
        }
        ::usleep(10 * 1000);
    }
    return -1;
}

std::string own_name() {
    const passwd* pw = ::getpwuid(::getuid());
    return pw != nullptr ? pw->pw_name : "";
}

class EngineSocket : public ::testing::Test {
  protected:
    test::TempDir dir{"engine-socket"};
    std::string socket = dir.path("podman.sock");
    std::string persons = dir.path("persons.sock");
    UniqueFd engine_listener = listen_at(socket);
    UniqueFd person_listener = listen_at(persons);
    EngineIdentity engine{own_name(), socket, HB_ENGINE_RELAY_BIN};
    int reached_through(const std::string& path) const {
        return exec::reached_through(path, engine_listener.get(), person_listener.get());
    }
    Config relay_config() const {
        Config config;
        config.engine = engine;
        config.run_dir = dir.path();
        return config;
    }
    // The relay every engine command gets (engine_environment), and the
    // path of its socket; it runs until relay_env is reset.
    std::optional<EngineEnvironment> relay_env;
    std::string relay_path;
    ::testing::AssertionResult start_relay() {
        auto env = engine_environment(relay_config());
        if (!env) return ::testing::AssertionFailure() << env.error().message;
        // CONTAINER_HOST, DOCKER_HOST and DOCKER_BUILDKIT=1 (docs/ARGV-TABLE.md).
        if (env->env.size() != 3 || !env->relay)
            return ::testing::AssertionFailure() << "no relay in the environment";
        relay_path = env->env[0].substr(std::strlen("CONTAINER_HOST=unix://"));
        relay_env.emplace(std::move(*env));
        return ::testing::AssertionSuccess();
    }
};

TEST_F(EngineSocket, ItsOwnSocketIsPinnedAndASwapAfterwardsChangesNothing) {
    ASSERT_TRUE(engine_listener && person_listener);
    auto pinned = common::pin_engine_socket(engine);
    ASSERT_TRUE(pinned.ok()) << pinned.error().message;
    // How the relay connects (engines/podman/engine_relay.cpp).
    const std::string path = "/proc/self/fd/" + std::to_string(pinned->fd.get());
    // The escape's move: the name becomes a link to the person's socket.
    ASSERT_EQ(::rename(socket.c_str(), (socket + ".real").c_str()), 0);
    ASSERT_EQ(::symlink(persons.c_str(), socket.c_str()), 0);
    // Control: a client connecting by the name reaches the person's.
    EXPECT_EQ(reached(socket, {engine_listener.get(), person_listener.get()}),
              person_listener.get());
    // Through the pinned file: still the engine user's.
    EXPECT_EQ(reached(path, {engine_listener.get(), person_listener.get()}), engine_listener.get());
}

TEST_F(EngineSocket, ALinkInItsPlaceIsRefusedAndNothingRuns) {
    ASSERT_TRUE(engine_listener && person_listener);
    ASSERT_EQ(::rename(socket.c_str(), (socket + ".real").c_str()), 0);
    ASSERT_EQ(::symlink(persons.c_str(), socket.c_str()), 0);
    auto pinned = common::pin_engine_socket(engine);
    ASSERT_FALSE(pinned.ok());
    EXPECT_NE(pinned.error().message.find("is a link, which the bridge never follows"),
              std::string::npos)
        << pinned.error().message;

    const RunResult r = run_query(relay_config(), {"/bin/true"}, -1, -1, seconds(10));
    EXPECT_EQ(r.status, RunResult::Status::SpawnFailed);
    EXPECT_NE(r.error.find("is a link"), std::string::npos) << r.error;
}

TEST_F(EngineSocket, ASocketOfAnotherOwnerOrNoSocketOrNoSuchUserIsRefused) {
    ASSERT_TRUE(engine_listener);
    if (::getuid() == 0) {
        // root can give it away, as only root could: another user's socket.
        ASSERT_EQ(::lchown(socket.c_str(), 65534, 65534), 0);
        auto pinned = common::pin_engine_socket(engine);
        ASSERT_FALSE(pinned.ok());
        EXPECT_NE(pinned.error().message.find("belongs to uid 65534, not to"), std::string::npos)
            << pinned.error().message;
        ASSERT_EQ(::lchown(socket.c_str(), 0, 0), 0);
    } else {
        std::cout << "SKIP (part): another owner needs root to chown the socket\n";
    }
    test::write_file(dir.path("plain"), "not a socket");
    auto plain = common::pin_engine_socket({own_name(), dir.path("plain"), HB_ENGINE_RELAY_BIN});
    ASSERT_FALSE(plain.ok());
    EXPECT_NE(plain.error().message.find("is not a socket"), std::string::npos);
    auto nobody = common::pin_engine_socket({"hb-no-such-user-x", socket, HB_ENGINE_RELAY_BIN});
    ASSERT_FALSE(nobody.ok());
    EXPECT_NE(nobody.error().message.find("no user hb-no-such-user-x"), std::string::npos);
}

// A command is handed a relay of the drain's (engines/podman/engine_relay.hpp):
// what connects there reaches the pinned socket, before and after the name
// is made a link to the person's; the relay goes with the command.
TEST_F(EngineSocket, CommandsReachThePinnedSocketThroughTheDrainsRelay) {
    ASSERT_TRUE(engine_listener && person_listener);
    ::setenv("CONTAINER_HOST", "unix:///tmp/from-our-own-environment.sock", 1);
    const Config config = relay_config();
    {
        ASSERT_TRUE(start_relay());
        const std::string prefix = "CONTAINER_HOST=unix://" + dir.path() + "/.hostbridge-engine-";
        ASSERT_EQ(relay_env->env[0].rfind(prefix, 0), 0u) << relay_env->env[0];
        EXPECT_EQ(reached_through(relay_path), engine_listener.get());
        ASSERT_EQ(::rename(socket.c_str(), (socket + ".real").c_str()), 0);
        ASSERT_EQ(::symlink(persons.c_str(), socket.c_str()), 0);
        EXPECT_EQ(reached_through(relay_path), engine_listener.get());
        // The query's own environment names the relay, not ours.
        auto out = scratch_file("hb-test-env");
        ASSERT_TRUE(out.ok());
        ASSERT_EQ(::rename((socket + ".real").c_str(), socket.c_str()), 0);
        const RunResult r =
            run_query(config, {"/usr/bin/env"}, out->get(), out->get(), seconds(10));
        ASSERT_EQ(r.status, RunResult::Status::Exited) << r.error;
        auto text = read_scratch(out->get(), 65536);
        ASSERT_TRUE(text.ok());
        EXPECT_NE(text->find("\nCONTAINER_HOST=unix://" + dir.path() + "/.hostbridge-engine-"),
                  std::string::npos)
            << *text;
        EXPECT_EQ(text->find("from-our-own-environment"), std::string::npos) << *text;
        // docker's build never falls back to the legacy builder's parser.
        EXPECT_NE(text->find("\nDOCKER_BUILDKIT=1\n"), std::string::npos) << *text;
        relay_env.reset();
    }
    ::unsetenv("CONTAINER_HOST");
    // Gone with the command: its directory too.
    EXPECT_NE(::access(relay_path.c_str(), F_OK), 0);
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().rfind(".hostbridge-engine-", 0),
                  std::string::npos)
            << entry.path();
}

// Connects to the relay and returns the engine side of that connection.
std::pair<UniqueFd, UniqueFd> relayed_pair(const std::string& path, int engine_fd) {
    UniqueFd c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    if (::connect(c.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return {};
    pollfd p{engine_fd, POLLIN, 0};
    if (::poll(&p, 1, 30'000) != 1) return {};  // a hang guard, not a duration under test
    UniqueFd accepted(::accept4(engine_fd, nullptr, nullptr, SOCK_CLOEXEC));
    return {std::move(c), std::move(accepted)};
}

// podman keeps an attach or events stream open and unread while it talks on
// another connection: a relay that blocks writing the unread one (its
// receive buffer full) answers no other connection, and the command hangs.
TEST_F(EngineSocket, AnUnreadConnectionStallsNoOtherAndLosesNoByte) {
    ASSERT_TRUE(engine_listener && person_listener);
    ASSERT_TRUE(start_relay());
    const std::string& path = relay_path;
    // The listener is non-blocking (listen_at): accept through poll.
    auto [stream_client, stream_engine] = relayed_pair(path, engine_listener.get());
    ASSERT_TRUE(stream_client && stream_engine);
    // 8 MiB the client does not read yet: far more than two socket buffers.
    const std::string big(8 << 20, 'x');
    std::size_t sent = 0;
    ASSERT_EQ(::fcntl(stream_engine.get(), F_SETFL, O_NONBLOCK), 0);
    for (int i = 0; i < 200 && sent < big.size(); ++i) {
        const ssize_t n =
            ::send(stream_engine.get(), big.data() + sent, big.size() - sent, MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<std::size_t>(n);
        if (n < 0) ::usleep(5 * 1000);
    }
    // Another connection while the first is stuck: asked and answered.
    auto [client, engine_side] = relayed_pair(path, engine_listener.get());
    ASSERT_TRUE(client && engine_side) << "the relay took no second connection";
    ASSERT_EQ(::send(client.get(), "ping", 4, MSG_NOSIGNAL), 4);
    char buf[4] = {};
    pollfd p{engine_side.get(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 30'000), 1) << "the question never reached the engine";
    ASSERT_EQ(::recv(engine_side.get(), buf, 4, MSG_WAITALL), 4);
    ASSERT_EQ(::send(engine_side.get(), "pong", 4, MSG_NOSIGNAL), 4);
    p = {client.get(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 30'000), 1) << "the answer never came back";
    ASSERT_EQ(::recv(client.get(), buf, 4, MSG_WAITALL), 4);
    EXPECT_EQ(std::string(buf, 4), "pong");
    // Now the stream is read: every byte the engine sent arrives, then its end.
    std::thread rest([&] {
        while (sent < big.size()) {
            const ssize_t n =
                ::send(stream_engine.get(), big.data() + sent, big.size() - sent, MSG_NOSIGNAL);
            if (n > 0) sent += static_cast<std::size_t>(n);
            if (n < 0) ::usleep(1000);
        }
        ::shutdown(stream_engine.get(), SHUT_WR);
    });
    std::size_t got = 0;
    bool intact = true;
    char chunk[65536];
    for (;;) {
        const ssize_t n = ::recv(stream_client.get(), chunk, sizeof chunk, 0);
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i) intact = intact && chunk[i] == 'x';
        got += static_cast<std::size_t>(n);
    }
    rest.join();
    EXPECT_EQ(got, big.size());
    EXPECT_TRUE(intact);
}

// A podman that exits while the engine holds its stream open and silent
// (an attach, an events stream) frees its place in the relay: forty such
// commands, more than the relay holds at once, and the next still passes.
TEST_F(EngineSocket, AClientThatLeftFreesItsPlaceThoughTheEngineStaysSilent) {
    ASSERT_TRUE(engine_listener && person_listener);
    ASSERT_TRUE(start_relay());
    const std::string& path = relay_path;
    std::vector<UniqueFd> silent;
    for (int i = 0; i < 40; ++i) {
        auto [client, engine_side] = relayed_pair(path, engine_listener.get());
        ASSERT_TRUE(client && engine_side) << "connection " << i << " was refused";
        client = UniqueFd();
        // The relay closes the engine's side in turn: its hang-up arrives.
        // Asked for no event, poll reports the hang-up alone (30 s: a hang guard).
        pollfd p{engine_side.get(), 0, 0};
        ::poll(&p, 1, 30'000);
        ASSERT_NE(p.revents & POLLHUP, 0) << "connection " << i << " is still held";
        silent.push_back(std::move(engine_side));
    }
    auto [client, engine_side] = relayed_pair(path, engine_listener.get());
    ASSERT_TRUE(client && engine_side);
    ASSERT_EQ(::send(client.get(), "ping", 4, MSG_NOSIGNAL), 4);
    char buf[4] = {};
    ASSERT_EQ(::recv(engine_side.get(), buf, 4, MSG_WAITALL), 4);
    EXPECT_EQ(std::string(buf, 4), "ping");
}

// The relay is its own binary (engines/relay/), confined by a seccomp filter
// to what a byte pump needs: the running relay has the filter, and that
// filter kills a process that opens a file.
TEST_F(EngineSocket, TheRelayRunsConfinedAndCannotOpenAFile) {
    ASSERT_TRUE(engine_listener && person_listener);
    ASSERT_TRUE(start_relay());
    EXPECT_EQ(reached_through(relay_path), engine_listener.get());
    // One filter more than this test runs under (a container may add its own).
    const auto status_of = [](const std::string& pid, std::string_view field) {
        std::ifstream status("/proc/" + pid + "/status");
        std::string line;
        while (std::getline(status, line))
            if (line.rfind(field, 0) == 0) return line.substr(field.size());
        return std::string();
    };
    const std::string relay = std::to_string(relay_env->relay->pid());
    EXPECT_EQ(status_of(relay, "Seccomp:\t"), "2");
    EXPECT_EQ(status_of(relay, "NoNewPrivs:\t"), "1");
    EXPECT_EQ(status_of(relay, "Seccomp_filters:\t"),
              std::to_string(std::stoi(status_of("self", "Seccomp_filters:\t")) + 1));

    // The same filter, then an open of a readable file: killed by SIGSYS.
    test::write_file(dir.path("readable"), "x");
    const auto run_probe = [&](bool confined) {
        const pid_t pid = ::fork();
        if (pid == 0) {
            const std::string file = dir.path("readable");
            if (confined)
                ::execl(HB_RELAY_OPEN_PROBE, HB_RELAY_OPEN_PROBE, file.c_str(), nullptr);
            else
                ::execl(HB_RELAY_OPEN_PROBE, HB_RELAY_OPEN_PROBE, "--unconfined", file.c_str(),
                        nullptr);
            ::_exit(127);
        }
        int wstatus = 0;
        ::waitpid(pid, &wstatus, 0);
        return wstatus;
    };
    const int unconfined = run_probe(false);
    ASSERT_TRUE(WIFEXITED(unconfined) && WEXITSTATUS(unconfined) == 0)
        << "the control could not open the file: " << unconfined;
    const int confined = run_probe(true);
    EXPECT_TRUE(WIFSIGNALED(confined) && WTERMSIG(confined) == SIGSYS)
        << "the confined open was not killed: " << confined;
}

// Without the relay binary no engine command runs, and the person is told
// why in one sentence; nothing is left in the run dir.
TEST_F(EngineSocket, WithoutItsRelayBinaryTheEngineCommandIsRefused) {
    ASSERT_TRUE(engine_listener && person_listener);
    Config config = relay_config();
    config.engine->relay = dir.path("no-such-relay");
    const RunResult r = run_query(config, {"/bin/true"}, -1, -1, seconds(10));
    EXPECT_EQ(r.status, RunResult::Status::SpawnFailed);
    EXPECT_EQ(r.error, "the engine relay " + dir.path("no-such-relay") +
                           " (bridge.json engine.relay) cannot be run (No such file or "
                           "directory), so no command can reach the engine user's podman; "
                           "`hostbridge doctor` says how to reinstall it");
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().rfind(".hostbridge-engine-", 0),
                  std::string::npos)
            << entry.path();
}

}  // namespace
}  // namespace hb::exec
