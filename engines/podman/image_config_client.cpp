#include "engines/podman/image_config_client.hpp"

#include "executor/oneshot_reader.hpp"
#include "ipc/image_config_wire.hpp"

namespace hb::exec {
namespace {

// The reader walks every layer of the saved tar to find its config (podman
// writes the config after the layers): a GiB is read in about a second; the
// bound keeps a hung reader from holding the drain (engines/podman/inspect_client.cpp).
constexpr int kReadTimeoutMs = reader_timeout_ms(60000, 300000);

}  // namespace

Result<std::size_t> image_triggers_in_sandbox(const std::string& parser_path, int fd) {
    constexpr std::uint32_t kSeq = 1;
    auto bytes = ask_oneshot_reader(
        parser_path,
        {"--image-config", "the image config reader", kImageConfigAnswerSize, kReadTimeoutMs},
        encode_image_config_request(kSeq), fd);
    if (!bytes) return bytes.error();
    auto answer = decode_image_config_answer(*bytes);
    if (!answer)
        return make_error("garbage from the image config reader: " + answer.error().message);
    if (answer->seq != kSeq) return make_error("the image config reader answered another request");
    if (answer->status != ImageConfigStatus::Ok)
        return make_error(std::string(image_config_status_text(answer->status)));
    return static_cast<std::size_t>(answer->triggers);
}

}  // namespace hb::exec
