// Stand-ins for a broken or compromised hostbridge-parser, one binary per
// behaviour (HB_FAKE_MODE), so the executor's supervision can be tested:
//   garbage   answers 24 bytes of 0xFF
//   short     answers 5 bytes
//   wrongseq  answers a well-formed verdict for another seq
//   wrongverb accepts every request as `down`
//   crash     exits as soon as a request arrives
//   hang      never answers
//   nonce     a correct parser for `ping`, except: a name whose nonce starts
//             with "dead" crashes it, one starting with "5eed" makes it hang
// It speaks the real wire format (ipc/), so only the behaviour is fake.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

#include "ipc/fd_passing.hpp"
#include "ipc/wire.hpp"

namespace {

constexpr int kSocket = 3;
constexpr std::string_view kMode = HB_FAKE_MODE;

void send(const std::uint8_t* bytes, std::size_t size) {
    (void)hb::send_message(kSocket, std::span<const std::uint8_t>(bytes, size));
}

std::string_view nonce_of(std::string_view name) {
    // <stamp>-<verb>-<nonce:16>.json
    return name.size() >= 21 ? name.substr(name.size() - 21, 16) : std::string_view{};
}

}  // namespace

int main() {
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
        if (kMode == "garbage") {
            std::uint8_t junk[hb::kVerdictSize];
            for (auto& b : junk) b = 0xFF;
            send(junk, sizeof junk);
            continue;
        }
        if (kMode == "short") {
            const std::uint8_t junk[5] = {1, 2, 3, 4, 5};
            send(junk, sizeof junk);
            continue;
        }
        if (kMode == "crash" || (kMode == "nonce" && nonce.starts_with("dead")))
            ::kill(::getpid(), SIGKILL);  // a crash, without a core file
        if (kMode == "hang" || (kMode == "nonce" && nonce.starts_with("5eed"))) {
            for (;;) ::pause();
        }
        if (kMode == "wrongseq") verdict.seq += 1;
        if (kMode == "wrongverb") verdict.verb = hb::Verb::Down;
        const auto bytes = hb::encode_verdict(verdict);
        send(bytes.data(), bytes.size());
    }
}
