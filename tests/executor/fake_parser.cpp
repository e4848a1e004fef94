// Stand-ins for a broken or compromised hostbridge-parser, so the
// executor's supervision can be tested. One binary; its behaviour is the
// name it is executed by, fake-parser-<behaviour> (links to it made by
// tests/executor/CMakeLists.txt): the executor gives its parser a fixed
// argv (executor/parser_client.cpp), so the path a test puts in
// bridge.json's "parser" is the one argument a test has. The kernel hands
// that path over as AT_EXECFN, whatever argv[0] says.
//   garbage   answers 24 bytes of 0xFF
//   short     answers 5 bytes
//   wrongseq  answers a well-formed verdict for another seq
//   wrongverb accepts every request as `down`
//   crash     exits as soon as a request arrives
//   hang      never answers
//   nonce     a correct parser for `ping`, except: a name whose nonce starts
//             with "dead" crashes it, one starting with "5eed" makes it hang
// Run as `--log-lines` (the log-line reader, engines/podman/log_lines_client.cpp):
//   garbage   answers an answer's size of 0xFF
//   logpast   a well-formed answer whose range ends past the file
//   logback   a well-formed answer whose cursor moves back
// It speaks the real wire format (ipc/), so only the behaviour is fake.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

#include "ipc/fd_passing.hpp"
#include "ipc/log_lines_wire.hpp"
#include "ipc/wire.hpp"
#include "tests/support/stand_in.hpp"

namespace {

constexpr int kSocket = 3;
constexpr std::string_view kPrefix = "fake-parser-";

// The behaviour: what follows "fake-parser-" in the executed path's last
// component; empty when it was executed by another name.
std::string_view mode_from_name() {
    return hb::test::behaviour_from_name(kPrefix);
}

void send(const std::uint8_t* bytes, std::size_t size) {
    (void)hb::send_message(kSocket, std::span<const std::uint8_t>(bytes, size));
}

std::string_view nonce_of(std::string_view name) {
    // <stamp>-<verb>-<nonce:16>.json
    return name.size() >= 21 ? name.substr(name.size() - 21, 16) : std::string_view{};
}

// One hostile answer to one log-line request.
int hostile_log_lines(std::string_view mode) {
    auto msg = hb::recv_message(kSocket, hb::kLogLinesRequestSize, hb::FdPolicy::ExactlyOne);
    if (!msg || msg->kind != hb::Received::Kind::Message) return 2;
    auto request = hb::decode_log_lines_request(msg->bytes);
    if (!request) return 2;
    hb::LogLinesAnswer answer;
    answer.seq = request->seq;
    answer.cursor = hb::LogCursor{request->window.since_ns, request->window.since_seen};
    if (mode == "logpast") answer.text.push_back(hb::LogRange{0, request->size + 100});
    if (mode == "logback") answer.cursor.ns -= 1;
    auto bytes = hb::encode_log_lines_answer(answer);
    if (mode == "garbage") bytes.fill(0xFF);
    send(bytes.data(), bytes.size());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string_view mode = mode_from_name();
    if (argc == 2 && std::string_view(argv[1]) == "--log-lines") return hostile_log_lines(mode);
    if (mode != "garbage" && mode != "short" && mode != "wrongseq" && mode != "wrongverb" &&
        mode != "crash" && mode != "hang" && mode != "nonce") {
        return 64;  // no such stand-in: the test that named it fails on "parser failure"
    }
    auto first = hb::recv_message(kSocket, hb::kStartupSize, hb::FdPolicy::None);
    if (!first || first->kind != hb::Received::Kind::Message) return 2;
    for (;;) {
        auto msg = hb::recv_message(kSocket, hb::kRequestSize, hb::FdPolicy::ExactlyOne);
        if (!msg || msg->kind != hb::Received::Kind::Message) return 0;
        auto request = hb::decode_request(msg->bytes);
        if (!request) return 2;
        const std::string_view nonce = nonce_of(request->basename);
        hb::Verdict verdict;
        verdict.seq = request->seq;
        verdict.outcome = hb::Outcome::Accept;
        verdict.verb = hb::Verb::Ping;
        verdict.requested_at = std::time(nullptr);
        if (mode == "garbage") {
            std::uint8_t junk[hb::kVerdictSize];
            for (auto& b : junk) b = 0xFF;
            send(junk, sizeof junk);
            continue;
        }
        if (mode == "short") {
            const std::uint8_t junk[5] = {1, 2, 3, 4, 5};
            send(junk, sizeof junk);
            continue;
        }
        if (mode == "crash" || (mode == "nonce" && nonce.starts_with("dead")))
            ::kill(::getpid(), SIGKILL);  // a crash, without a core file
        if (mode == "hang" || (mode == "nonce" && nonce.starts_with("5eed"))) {
            for (;;) ::pause();
        }
        if (mode == "wrongseq") verdict.seq += 1;
        if (mode == "wrongverb") verdict.verb = hb::Verb::Down;
        const auto bytes = hb::encode_verdict(verdict);
        send(bytes.data(), bytes.size());
    }
}
