// common/engine_socket.cpp and its use by the runner (executor/runner.cpp):
// the engine user's socket is opened with no link followed and must be a
// socket that user owns; podman is handed the open file, so a swap of the
// name afterwards (an escape as the engine user pointing it at the
// person's own podman socket) reaches nothing else.
#include "common/engine_socket.hpp"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>

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
    EngineIdentity engine{own_name(), socket};
    int reached_through(const std::string& path) const {
        return exec::reached_through(path, engine_listener.get(), person_listener.get());
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

    Config config;
    config.engine = engine;
    const RunResult r = run_query(config, {"/bin/true"}, -1, -1, seconds(10));
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
    auto plain = common::pin_engine_socket({own_name(), dir.path("plain")});
    ASSERT_FALSE(plain.ok());
    EXPECT_NE(plain.error().message.find("is not a socket"), std::string::npos);
    auto nobody = common::pin_engine_socket({"hb-no-such-user-x", socket});
    ASSERT_FALSE(nobody.ok());
    EXPECT_NE(nobody.error().message.find("no user hb-no-such-user-x"), std::string::npos);
}

// A command is handed a relay of the drain's (engines/podman/engine_relay.hpp):
// what connects there reaches the pinned socket, before and after the name
// is made a link to the person's; the relay goes with the command.
TEST_F(EngineSocket, CommandsReachThePinnedSocketThroughTheDrainsRelay) {
    ASSERT_TRUE(engine_listener && person_listener);
    ::setenv("CONTAINER_HOST", "unix:///tmp/from-our-own-environment.sock", 1);
    Config config;
    config.engine = engine;
    config.run_dir = dir.path();
    std::string relay_path;
    {
        auto env = engine_environment(config);
        ASSERT_TRUE(env.ok()) << env.error().message;
        ASSERT_EQ(env->env.size(), 1u);
        const std::string prefix = "CONTAINER_HOST=unix://" + dir.path() + "/.hostbridge-engine-";
        ASSERT_EQ(env->env[0].rfind(prefix, 0), 0u) << env->env[0];
        relay_path = env->env[0].substr(std::strlen("CONTAINER_HOST=unix://"));
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
    }
    ::unsetenv("CONTAINER_HOST");
    // Gone with the command: its directory too.
    EXPECT_NE(::access(relay_path.c_str(), F_OK), 0);
    for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
        EXPECT_EQ(entry.path().filename().string().rfind(".hostbridge-engine-", 0),
                  std::string::npos)
            << entry.path();
}
}  // namespace
}  // namespace hb::exec
