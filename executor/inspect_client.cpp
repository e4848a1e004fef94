#include "executor/inspect_client.hpp"

#include "executor/parser_client.hpp"
#include "ipc/fd_passing.hpp"

namespace hb::exec {
namespace {

// A few MiB of JSON is read in milliseconds; the bound only keeps a hung
// reader from holding the drain (as executor/screen_client.cpp).
#ifdef HB_SANITIZED
constexpr int kInspectTimeoutMs = 60000;
#else
constexpr int kInspectTimeoutMs = 10000;
#endif

}  // namespace

Result<std::vector<ContainerFacts>> inspect_in_sandbox(const std::string& parser_path, int fd,
                                                       const std::string& project,
                                                       const std::vector<std::string>& services) {
    constexpr std::uint32_t kSeq = 1;
    auto request = encode_inspect_request(InspectRequest{kSeq, project, services});
    if (!request) return request.error();
    auto spawned = spawn_parser(parser_path, "--inspect");
    if (!spawned) return make_error("cannot start the inspect reader: " + spawned.error().message);
    // The child is killed and reaped when `spawned` goes out of scope.
    if (auto sent = send_message_with_fd(spawned->sock.get(), *request, fd); !sent) {
        return make_error("cannot send the engine's answer to the reader: " + sent.error().message);
    }
    auto received = recv_message_timeout(spawned->sock.get(), kInspectAnswerSize, FdPolicy::None,
                                         kInspectTimeoutMs);
    if (!received)
        return make_error("bad answer from the inspect reader: " + received.error().message);
    switch (received->kind) {
        case Received::Kind::Timeout:
            return make_error("the inspect reader did not answer within " +
                              std::to_string(kInspectTimeoutMs / 1000) + " s");
        case Received::Kind::Eof:
            return make_error("the inspect reader exited without an answer");
        case Received::Kind::Message:
            break;
    }
    auto answer = decode_inspect_answer(received->bytes, services.size());
    if (!answer) return make_error("garbage from the inspect reader: " + answer.error().message);
    if (answer->seq != kSeq) return make_error("the inspect reader answered another request");
    if (answer->status != InspectStatus::Ok) {
        return make_error(std::string(inspect_status_text(answer->status)));
    }
    if (answer->total > kMaxInspectContainers) {
        return make_error("the engine named " + std::to_string(answer->total) +
                          " containers; the bridge reads at most " +
                          std::to_string(kMaxInspectContainers));
    }
    return std::move(answer->containers);
}

}  // namespace hb::exec
