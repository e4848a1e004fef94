#include "engines/build_input/screen_client.hpp"

#include "executor/oneshot_reader.hpp"

namespace hb::exec {
namespace {

// A 1 MiB Containerfile is screened in milliseconds; the bound only keeps a
// hung screen from holding the drain.
constexpr int kScreenTimeoutMs = reader_timeout_ms(10000, 60000);

}  // namespace

Result<ScreenVerdict> screen_in_sandbox(const std::string& parser_path,
                                        const std::vector<std::string>& allowed, int fd,
                                        bool buildkit) {
    constexpr std::uint32_t kSeq = 1;
    auto request = encode_screen_request({kSeq, allowed});
    if (!request) return make_error("the images a build may name: " + request.error().message);
    const char* mode = buildkit ? "--screen-buildkit" : "--screen";
    auto bytes = ask_oneshot_reader(
        parser_path, {mode, "the screen", kScreenAnswerSize, kScreenTimeoutMs}, *request, fd);
    if (!bytes) return bytes.error();
    auto answer = decode_screen_answer(*bytes);
    if (!answer) return make_error("garbage from the screen: " + answer.error().message);
    if (answer->seq != kSeq) return make_error("the screen answered another request");
    return answer->verdict;
}

}  // namespace hb::exec
