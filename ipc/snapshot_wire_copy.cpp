// The copy's half of ipc/snapshot_wire.hpp (hostbridge-snapshot links it;
// the executor, which links the other half, does not).
#include <algorithm>
#include <iterator>

#include "ipc/le_bytes.hpp"
#include "ipc/snapshot_wire.hpp"

namespace hb {

Result<SnapshotRequest> decode_snapshot_request(std::span<const std::uint8_t> bytes) {
    if (bytes.size() < 36 || bytes.size() > kSnapshotRequestMax ||
        !std::equal(std::begin(kSnapshotMagic), std::end(kSnapshotMagic), bytes.begin())) {
        return make_error("a snapshot request out of shape");
    }
    SnapshotRequest request;
    request.budget.max_files = le::get_u64(&bytes[4]);
    request.budget.max_bytes = le::get_u64(&bytes[12]);
    request.skip_dev = le::get_u64(&bytes[20]);
    request.skip_ino = le::get_u64(&bytes[28]);
    request.context.assign(bytes.begin() + 36, bytes.end());
    return request;
}

std::vector<std::uint8_t> encode_snapshot_answer(const Result<SnapshotCounts>& answer) {
    if (!answer) {
        const std::string& text = answer.error().message;
        std::vector<std::uint8_t> out{'e'};
        out.insert(
            out.end(), text.begin(),
            text.begin() + static_cast<std::ptrdiff_t>(std::min(text.size(), kSnapshotErrorMax)));
        return out;
    }
    std::vector<std::uint8_t> out(kSnapshotTakenSize);
    out[0] = 'o';
    std::copy_n(answer->sha256.begin(), std::min<std::size_t>(answer->sha256.size(), 64),
                out.begin() + 1);
    std::uint8_t* at = &out[65];
    for (const std::uint64_t v : {answer->files, answer->bytes, answer->cloned,
                                  answer->copied_in_kernel, answer->copied_by_read}) {
        le::put_u64(at, v);
        at += 8;
    }
    return out;
}

}  // namespace hb
