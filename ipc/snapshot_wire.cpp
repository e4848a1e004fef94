#include "ipc/snapshot_wire.hpp"

#include <algorithm>
#include <iterator>

#include "ipc/le_bytes.hpp"
#include "ipc/sys.hpp"

namespace hb {
namespace {

Error out_of_shape(const std::string& why) {
    return make_error("the snapshot copy answered out of shape: " + why);
}

// Printable ASCII as it is; anything else as \xNN (sys::escape_unprintable
// would double the backslashes an honest sentence already escaped with).
std::string shown_as_sent(std::string_view text) {
    const bool printable =
        std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
    return printable ? std::string(text) : sys::escape_unprintable(text);
}

}  // namespace

std::vector<std::uint8_t> encode_snapshot_request(const SnapshotRequest& request) {
    const std::size_t n = std::min(request.context.size(), kSnapshotContextMax);
    std::vector<std::uint8_t> out(36 + n);
    std::copy(std::begin(kSnapshotMagic), std::end(kSnapshotMagic), out.begin());
    le::put_u64(&out[4], request.budget.max_files);
    le::put_u64(&out[12], request.budget.max_bytes);
    le::put_u64(&out[20], request.skip_dev);
    le::put_u64(&out[28], request.skip_ino);
    std::copy_n(request.context.begin(), n, out.begin() + 36);
    return out;
}

Result<SnapshotCounts> decode_snapshot_answer(std::span<const std::uint8_t> bytes,
                                              const SnapshotBudget& budget) {
    if (bytes.empty()) return out_of_shape("nothing");
    if (bytes[0] == 'e') {
        if (bytes.size() < 2) return out_of_shape("an empty refusal");
        return make_error(shown_as_sent(
            std::string_view(reinterpret_cast<const char*>(bytes.data()) + 1, bytes.size() - 1)));
    }
    if (bytes[0] != 'o') return out_of_shape("neither a snapshot nor a refusal");
    if (bytes.size() != kSnapshotTakenSize) {
        return out_of_shape(std::to_string(bytes.size()) + " bytes where a snapshot is " +
                            std::to_string(kSnapshotTakenSize));
    }
    SnapshotCounts counts;
    counts.sha256.assign(bytes.begin() + 1, bytes.begin() + 65);
    if (!sys::is_lower_hex(counts.sha256, 64)) return out_of_shape("a hash that is not hex");
    counts.files = le::get_u64(&bytes[65]);
    counts.bytes = le::get_u64(&bytes[73]);
    counts.cloned = le::get_u64(&bytes[81]);
    counts.copied_in_kernel = le::get_u64(&bytes[89]);
    counts.copied_by_read = le::get_u64(&bytes[97]);
    // Each of the three ways at most `files`: their sum cannot wrap.
    if (counts.files > budget.max_files || counts.bytes > budget.max_bytes ||
        counts.cloned > counts.files || counts.copied_in_kernel > counts.files ||
        counts.copied_by_read > counts.files ||
        counts.cloned + counts.copied_in_kernel + counts.copied_by_read > counts.files) {
        return out_of_shape("counts past the budget it was given");
    }
    return counts;
}

}  // namespace hb
