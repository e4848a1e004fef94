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
};

TEST_F(EngineSocket, ItsOwnSocketIsPinnedAndASwapAfterwardsChangesNothing) {
    ASSERT_TRUE(engine_listener && person_listener);
    auto pinned = common::pin_engine_socket(engine);
    ASSERT_TRUE(pinned.ok()) << pinned.error().message;
    const std::string path = pinned->container_host.substr(std::strlen("unix://"));
    EXPECT_EQ(path,
              "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(pinned->fd.get()));
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

TEST_F(EngineSocket, QueriesGetThePinnedSocketAsContainerHost) {
    ASSERT_TRUE(engine_listener);
    ::setenv("CONTAINER_HOST", "unix:///tmp/from-our-own-environment.sock", 1);
    Config config;
    config.engine = engine;
    auto out = scratch_file("hb-test-env");
    ASSERT_TRUE(out.ok());
    const RunResult r = run_query(config, {"/usr/bin/env"}, out->get(), out->get(), seconds(10));
    ::unsetenv("CONTAINER_HOST");
    ASSERT_EQ(r.status, RunResult::Status::Exited) << r.error;
    auto text = read_scratch(out->get(), 65536);
    ASSERT_TRUE(text.ok());
    EXPECT_NE(text->find("\nCONTAINER_HOST=unix:///proc/" + std::to_string(::getpid()) + "/fd/"),
              std::string::npos)
        << *text;
    EXPECT_EQ(text->find("from-our-own-environment"), std::string::npos) << *text;
}

}  // namespace
}  // namespace hb::exec
