#include "executor/parser_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "ipc/fd_passing.hpp"
#include "ipc/request_name.hpp"
#include "sandbox/fds.hpp"

namespace hb::exec {
namespace {

constexpr int kParserSocketFd = 3;

// The parser's whole environment: empty, except the sanitizer runtime's
// own settings in a sanitized build (they configure the runtime, nothing of
// ours, and without them LeakSanitizer trips over the seccomp filter).
std::vector<std::string> parser_environment() {
    std::vector<std::string> env;
    for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
        if (const char* value = std::getenv(name)) env.push_back(std::string(name) + "=" + value);
    }
    return env;
}

// Runs in the forked child: only async-signal-safe calls, then exec.
[[noreturn]] void exec_parser(const char* path, const char* argv0, const char* mode, int sock,
                              pid_t parent, char* const envp[]) {
    // Die with the executor: an orphaned parser must never linger.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Signal state is inherited across exec; the parser starts clean.
    sys::reset_signals();

    const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(null_fd, 1) < 0) ::_exit(127);
    if (sock == kParserSocketFd) {
        if (::fcntl(sock, F_SETFD, 0) != 0) ::_exit(127);
    } else if (::dup2(sock, kParserSocketFd) < 0) {  // dup2 clears FD_CLOEXEC
        ::_exit(127);
    }
    if (!sandbox::close_fds_from_3(kParserSocketFd)) ::_exit(127);
    char* const argv[] = {const_cast<char*>(argv0), const_cast<char*>(mode), nullptr};
    ::execve(path, argv, envp);
    ::_exit(127);
}

}  // namespace

Result<SpawnedParser> spawn_parser(const std::string& path, const char* mode, const char* argv0) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        return make_error(sys::errno_text("socketpair"));
    UniqueFd ours(pair[0]);
    UniqueFd theirs(pair[1]);

    // Everything the child needs is built before fork: it must not allocate.
    std::vector<std::string> env = parser_environment();
    std::vector<char*> envp = sys::c_strings(env);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return make_error(sys::errno_text("fork"));
    if (pid == 0) exec_parser(path.c_str(), argv0, mode, theirs.get(), parent, envp.data());
    return SpawnedParser{std::move(ours), ParserChild(pid)};
}

ParserClient::ParserClient(std::string parser_path, Startup startup)
    : path_(std::move(parser_path)), startup_(std::move(startup)) {}

void ParserClient::stop() {
    sock_.reset();
    child_.kill_and_reap();
}

Result<void> ParserClient::start() {
    auto spawned = spawn_parser(path_, nullptr);
    if (!spawned) return spawned.error();
    child_ = std::move(spawned->child);
    sock_ = std::move(spawned->sock);
    const std::vector<std::uint8_t> startup = encode_startup(startup_);
    if (auto sent = send_message(sock_.get(), startup); !sent) {
        stop();
        return make_error("cannot send the startup message: " + sent.error().message);
    }
    return {};
}

Result<Verdict> ParserClient::classify(int fd, std::string_view basename) {
    if (child_.pid() < 0) {
        if (auto started = start(); !started) return started.error();
    }
    auto verdict = round_trip(fd, basename);
    // Any failure leaves the parser in an unknown state: a fresh one serves
    // the next request.
    if (!verdict) stop();
    return verdict;
}

Result<Verdict> ParserClient::round_trip(int fd, std::string_view basename) {
    Request request;
    request.seq = next_seq_++;
    request.basename = std::string(basename);
    const std::vector<std::uint8_t> bytes = encode_request(request);
    if (auto sent = send_message_with_fd(sock_.get(), bytes, fd); !sent) {
        return make_error("cannot send the request: " + sent.error().message);
    }

    const auto deadline = std::chrono::steady_clock::now() + kRoundTripTimeout;
    const auto remaining_ms = [&] {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        return static_cast<int>(std::max<std::int64_t>(0, left.count()));
    };
    // A longer message is an error (MSG_TRUNC), a shorter one fails decoding.
    auto received = recv_message_timeout(sock_.get(), kVerdictSize, FdPolicy::None, remaining_ms());
    if (!received) return make_error("bad reply: " + received.error().message);
    switch (received->kind) {
        case Received::Kind::Timeout:
            return make_error("no verdict within " + std::to_string(kRoundTripTimeout.count()) +
                              " s");
        case Received::Kind::Eof:
            return make_error("the parser exited");
        case Received::Kind::Message:
            break;
    }
    auto verdict = decode_verdict(received->bytes, startup_.services.size());
    if (!verdict) return make_error("garbage verdict: " + verdict.error().message);
    if (verdict->seq != request.seq) return make_error("verdict for another request");
    if (auto trusted = check_trust(*verdict, basename); !trusted) return trusted.error();
    return verdict;
}

// What decode_verdict cannot know: the name and the buildable list. A
// compromised parser gains nothing a well-formed request could not, but it
// does not get to contradict what the executor can see for itself.
Result<void> ParserClient::check_trust(const Verdict& verdict, std::string_view basename) const {
    if (verdict.outcome != Outcome::Accept) return {};
    const auto name_verb = request_name_verb(basename);
    if (!name_verb || !verdict.verb || *name_verb != verb_name(*verdict.verb)) {
        return make_error("accepted a verb other than the name's");
    }
    if (verb_arg_kind(*verdict.verb) == ArgKind::Buildable) {
        const std::string& arg = startup_.services.at(verdict.arg_index);
        if (!std::binary_search(startup_.buildable.begin(), startup_.buildable.end(), arg)) {
            return make_error("accepted a service that is not buildable");
        }
    }
    return {};
}

}  // namespace hb::exec
