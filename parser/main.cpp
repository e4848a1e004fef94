// hostbridge-parser: the sandboxed, untrusted-input half of the bridge.
//
// Spawned by the executor with the socketpair on fd 3 (SOCK_SEQPACKET). It
// locks itself down before it reads a byte, takes one Startup message (the
// enumerations), then for each Request message reads the attached request
// fd (opened by the executor: the parser never opens anything), validates
// and answers with one Verdict. It never writes anything but verdicts and,
// on failure, one line on stderr.
//
// Started as `hostbridge-parser --screen`, it is the build-input screen
// instead: the same lockdown, then for each ScreenRequest the attached
// Containerfile is read whole (at most kMaxContainerfileBytes + 1 bytes)
// and answered with one ScreenAnswer (ipc/screen_wire.hpp).
//
// Started as `hostbridge-parser --inspect`, it reads the engine's
// `container inspect` JSON instead: for each InspectRequest (the project and
// service names to match) the attached output is read whole (at most
// kMaxInspectBytes + 1 bytes) and answered with fixed records
// (ipc/inspect_wire.hpp); the agent's labels and output never leave it.
//
// Started as `hostbridge-parser --image-config`, it walks a base image saved
// as a docker-archive tar (an engine user's store, docs/ENGINE-USER.md) to
// its config and answers how many ONBUILD triggers it holds
// (ipc/image_config_wire.hpp).
//
// Started as `hostbridge-parser --log-lines`, it chooses a windowed `logs`'
// lines in the engine's `logs --timestamps` output (parser/log_lines.hpp):
// for each LogLinesRequest the attached file is read (its `size` bytes) and
// answered with byte ranges and a cursor (ipc/log_lines_wire.hpp); what the
// agent's container wrote is never read for meaning outside it.
//
// Exit status: 0 the executor closed the socket (at a message boundary);
// 1 lockdown failed; 2 the executor broke the protocol (bad message, wrong
// fd count); 3 an I/O error; 4 an internal error. The executor treats any
// exit other than after its own close as a parser failure.
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/fd_passing.hpp"
#include "ipc/image_config_wire.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/log_lines_wire.hpp"
#include "ipc/screen_wire.hpp"
#include "ipc/wire.hpp"
#include "packaging/version.hpp"
#include "parser/container_inspect.hpp"
#include "parser/containerfile_screen.hpp"
#include "parser/image_config.hpp"
#include "parser/log_lines.hpp"
#include "parser/validate.hpp"
#include "sandbox/lockdown.hpp"

namespace {

constexpr int kSocket = 3;
constexpr int kExitLockdown = 1;
constexpr int kExitProtocol = 2;
constexpr int kExitIo = 3;
constexpr int kExitInternal = 4;

// One line on stderr in one write(2): no stdio after lockdown.
void say(std::string_view what) {
    std::string line = "hostbridge-parser: ";
    line.append(what);
    line.push_back('\n');
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, line.data(), line.size());
}

// Reads at most `limit` + 1 bytes: one more than allowed is enough to know
// the input is too large, and no more is ever buffered.
hb::Result<std::vector<std::uint8_t>> read_body(int fd, std::size_t limit = hb::kMaxBody) {
    std::vector<std::uint8_t> buf(limit + 1);
    std::size_t got = 0;
    while (got < buf.size()) {
        ssize_t n = ::read(fd, buf.data() + got, buf.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return hb::make_error(std::string("read request: ") + std::strerror(errno));
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    buf.resize(got);
    return buf;
}

// Says why the parser stops and gives the exit status.
template <typename T>
int stop(const hb::Result<T>& failed, int status) {
    say(failed.error().message);
    return status;
}

// The one receive loop every mode runs, until the executor closes the
// socket (exit 0): a message of at most `max_size` bytes with exactly one
// fd, decoded by `decode` (a bad one is the executor breaking the
// protocol), then `answer` reads the fd and gives the bytes sent back (a
// read that fails is an I/O error). The fd is closed before the answer goes.
template <typename Decode, typename Answer>
int serve(std::size_t max_size, Decode decode, Answer answer) {
    for (;;) {
        auto msg = hb::recv_message(kSocket, max_size, hb::FdPolicy::ExactlyOne);
        if (!msg) return stop(msg, kExitProtocol);
        if (msg->kind == hb::Received::Kind::Eof) return 0;
        auto request = decode(msg->bytes);
        if (!request) return stop(request, kExitProtocol);
        auto out = answer(*request, msg->fd.get());
        msg->fd.reset();
        if (!out) return stop(out, kExitIo);
        if (auto sent = hb::send_message(kSocket, *out); !sent) return stop(sent, kExitIo);
    }
}

// The request validator: the Startup message (the enumerations), then one
// request file per message.
int run() {
    auto first = hb::recv_message(kSocket, hb::kStartupSize, hb::FdPolicy::None);
    if (!first) return stop(first, kExitProtocol);
    if (first->kind == hb::Received::Kind::Eof) return 0;
    auto startup = hb::decode_startup(first->bytes);
    if (!startup) return stop(startup, kExitProtocol);
    return serve(
        hb::kRequestSize, [](const auto& bytes) { return hb::decode_request(bytes); },
        [&](const hb::Request& request,
            int fd) -> hb::Result<std::array<std::uint8_t, hb::kVerdictSize>> {
            auto body = read_body(fd);
            if (!body) return body.error();
            hb::Verdict verdict = hb::parser::validate(request.basename, *body, *startup);
            verdict.seq = request.seq;
            return hb::encode_verdict(verdict);
        });
}

// The build-input screen: one Containerfile per message, read as `builder`
// reads it.
int run_screen(hb::parser::Builder builder) {
    return serve(
        hb::kScreenRequestMax, [](const auto& bytes) { return hb::decode_screen_request(bytes); },
        [builder](const hb::ScreenRequest& request,
                  int fd) -> hb::Result<std::array<std::uint8_t, hb::kScreenAnswerSize>> {
            auto bytes = read_body(fd, hb::kMaxContainerfileBytes);
            if (!bytes) return bytes.error();
            hb::ScreenAnswer answer;
            answer.seq = request.seq;
            answer.verdict = hb::parser::screen_containerfile(*bytes, request.images, builder);
            return hb::encode_screen_answer(answer);
        });
}

// The container-facts reader: one inspect output per message.
int run_inspect() {
    return serve(
        hb::kInspectRequestMax, [](const auto& bytes) { return hb::decode_inspect_request(bytes); },
        [](const hb::InspectRequest& request,
           int fd) -> hb::Result<std::array<std::uint8_t, hb::kInspectAnswerSize>> {
            auto bytes = read_body(fd, hb::kMaxInspectBytes);
            if (!bytes) return bytes.error();
            return hb::encode_inspect_answer(hb::parser::read_container_inspect(*bytes, request));
        });
}

// The log-line reader: one engine log view per message, its `size` bytes
// read from the offset the executor left at 0.
int run_log_lines() {
    return serve(
        hb::kLogLinesRequestSize,
        [](const auto& bytes) { return hb::decode_log_lines_request(bytes); },
        [](const hb::LogLinesRequest& request,
           int fd) -> hb::Result<std::array<std::uint8_t, hb::kLogLinesAnswerSize>> {
            auto bytes = read_body(fd, request.size);
            if (!bytes) return bytes.error();
            if (bytes->size() < request.size) return hb::make_error("the log is shorter than said");
            const std::string_view file(reinterpret_cast<const char*>(bytes->data()), request.size);
            hb::LogLinesAnswer answer = hb::parser::answer_log_lines(file, request);
            answer.seq = request.seq;
            return hb::encode_log_lines_answer(answer);
        });
}

// The image-config reader: one saved image (a tar) per message, read as it
// streams (parser/image_config.hpp), never whole.
int run_image_config() {
    return serve(
        hb::kImageConfigRequestSize,
        [](const auto& bytes) { return hb::decode_image_config_request(bytes); },
        [](std::uint32_t seq,
           int fd) -> hb::Result<std::array<std::uint8_t, hb::kImageConfigAnswerSize>> {
            return hb::encode_image_config_answer(hb::parser::read_image_archive(
                [fd](std::uint8_t* buf, std::size_t size) {
                    ssize_t got;
                    do {
                        got = ::read(fd, buf, size);
                    } while (got < 0 && errno == EINTR);
                    return got;
                },
                seq));
        });
}

}  // namespace

int main(int argc, char** argv) {
    // The executor starts it with argv[0] only; --version is for people and
    // `hostbridge doctor`, answered before any lockdown.
    if (argc == 2 && std::string_view(argv[1]) == "--version") {
        std::string line = "hostbridge-parser ";
        line.append(hb::kVersion);
        line.push_back('\n');
        return ::write(STDOUT_FILENO, line.data(), line.size()) == static_cast<ssize_t>(line.size())
                   ? 0
                   : kExitIo;
    }
    // Exceptions never cross the process exit: anything unexpected is a
    // nonzero exit, which the executor reports as a parser failure.
    const bool screen = argc == 2 && std::string_view(argv[1]) == "--screen";
    const bool screen_buildkit = argc == 2 && std::string_view(argv[1]) == "--screen-buildkit";
    const bool inspect = argc == 2 && std::string_view(argv[1]) == "--inspect";
    const bool image_config = argc == 2 && std::string_view(argv[1]) == "--image-config";
    const bool log_lines = argc == 2 && std::string_view(argv[1]) == "--log-lines";
    if (argc > 1 && !screen && !screen_buildkit && !inspect && !image_config && !log_lines) {
        say("unknown argument");
        return kExitProtocol;
    }
    try {
        // Before a byte is read, whichever input this process reads.
        if (auto locked = hb::sandbox::lock_down(kSocket); !locked) {
            say("lockdown failed: " + locked.error().message);
            return kExitLockdown;
        }
        if (inspect) return run_inspect();
        if (image_config) return run_image_config();
        if (log_lines) return run_log_lines();
        if (screen_buildkit) return run_screen(hb::parser::Builder::BuildKit);
        return screen ? run_screen(hb::parser::Builder::Buildah) : run();
    } catch (const std::exception& e) {
        say(std::string("internal error: ") + e.what());
    } catch (...) {
        say("internal error");
    }
    return kExitInternal;
}
