#include "executor/screen_client.hpp"

#include <chrono>

#include "executor/parser_client.hpp"
#include "ipc/fd_passing.hpp"

namespace hb::exec {
namespace {

// A 1 MiB Containerfile is screened in milliseconds; the bound only keeps a
// hung screen from holding the drain. Sanitized builds run several times
// slower (as ParserClient::kRoundTripTimeout, executor/parser_client.hpp).
#ifdef HB_SANITIZED
constexpr int kScreenTimeoutMs = 60000;
#else
constexpr int kScreenTimeoutMs = 10000;
#endif

}  // namespace

Result<ScreenVerdict> screen_in_sandbox(const std::string& parser_path, int fd) {
    auto spawned = spawn_parser(parser_path, "--screen");
    if (!spawned) return make_error("cannot start the screen: " + spawned.error().message);
    // The child is killed and reaped when `spawned` goes out of scope.
    constexpr std::uint32_t kSeq = 1;
    const auto request = encode_screen_request(kSeq);
    if (auto sent = send_message_with_fd(spawned->sock.get(), request, fd); !sent) {
        return make_error("cannot send the file to the screen: " + sent.error().message);
    }
    auto received = recv_message_timeout(spawned->sock.get(), kScreenAnswerSize, FdPolicy::None,
                                         kScreenTimeoutMs);
    if (!received) return make_error("bad answer from the screen: " + received.error().message);
    switch (received->kind) {
        case Received::Kind::Timeout:
            return make_error("the screen did not answer within " +
                              std::to_string(kScreenTimeoutMs / 1000) + " s");
        case Received::Kind::Eof:
            return make_error("the screen exited without an answer");
        case Received::Kind::Message:
            break;
    }
    auto answer = decode_screen_answer(received->bytes);
    if (!answer) return make_error("garbage from the screen: " + answer.error().message);
    if (answer->seq != kSeq) return make_error("the screen answered another request");
    return answer->verdict;
}

}  // namespace hb::exec
