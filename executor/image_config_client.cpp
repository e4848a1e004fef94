#include "executor/image_config_client.hpp"

#include "executor/parser_client.hpp"
#include "ipc/fd_passing.hpp"
#include "ipc/image_config_wire.hpp"

namespace hb::exec {
namespace {

// The reader walks every layer of the saved tar to find its config (podman
// writes the config after the layers): a GiB is read in about a second; the
// bound keeps a hung reader from holding the drain (executor/inspect_client.cpp).
#ifdef HB_SANITIZED
constexpr int kReadTimeoutMs = 300000;
#else
constexpr int kReadTimeoutMs = 60000;
#endif

}  // namespace

Result<std::size_t> image_triggers_in_sandbox(const std::string& parser_path, int fd) {
    constexpr std::uint32_t kSeq = 1;
    auto spawned = spawn_parser(parser_path, "--image-config");
    if (!spawned)
        return make_error("cannot start the image config reader: " + spawned.error().message);
    // The child is killed and reaped when `spawned` goes out of scope.
    if (auto sent =
            send_message_with_fd(spawned->sock.get(), encode_image_config_request(kSeq), fd);
        !sent) {
        return make_error("cannot send the image config to the reader: " + sent.error().message);
    }
    auto received = recv_message_timeout(spawned->sock.get(), kImageConfigAnswerSize,
                                         FdPolicy::None, kReadTimeoutMs);
    if (!received)
        return make_error("bad answer from the image config reader: " + received.error().message);
    switch (received->kind) {
        case Received::Kind::Timeout:
            return make_error("the image config reader did not answer within " +
                              std::to_string(kReadTimeoutMs / 1000) + " s");
        case Received::Kind::Eof:
            return make_error("the image config reader exited without an answer");
        case Received::Kind::Message:
            break;
    }
    auto answer = decode_image_config_answer(received->bytes);
    if (!answer)
        return make_error("garbage from the image config reader: " + answer.error().message);
    if (answer->seq != kSeq) return make_error("the image config reader answered another request");
    if (answer->status != ImageConfigStatus::Ok)
        return make_error(std::string(image_config_status_text(answer->status)));
    return static_cast<std::size_t>(answer->triggers);
}

}  // namespace hb::exec
