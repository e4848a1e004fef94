#include "engines/podman/inspect_client.hpp"

#include "executor/oneshot_reader.hpp"

namespace hb::exec {
namespace {

// A few MiB of JSON is read in milliseconds; the bound only keeps a hung
// reader from holding the drain (as engines/build_input/screen_client.cpp).
constexpr int kInspectTimeoutMs = reader_timeout_ms(10000, 60000);

}  // namespace

Result<std::vector<ContainerFacts>> inspect_in_sandbox(
    const std::string& parser_path, int fd, const std::string& project,
    const std::vector<std::string>& services, bool install_label,
    std::vector<std::array<std::uint8_t, 32>> definitions) {
    constexpr std::uint32_t kSeq = 1;
    auto request = encode_inspect_request(
        InspectRequest{kSeq, project, services, install_label, std::move(definitions)});
    if (!request) return request.error();
    auto bytes = ask_oneshot_reader(
        parser_path, {"--inspect", "the inspect reader", kInspectAnswerSize, kInspectTimeoutMs},
        *request, fd);
    if (!bytes) return bytes.error();
    auto answer = decode_inspect_answer(*bytes, services.size());
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
