// The snapshot copy's wire: the executor (engines/build_input/build_snapshot.cpp)
// and `hostbridge-snapshot` (snapshot/main.cpp), which copies a build context
// confined to it (docs/BUILDS.md). The executor sends two messages on the
// copy's fd 3, each with one directory fd attached (ipc/fd_passing.hpp): the
// request with the context dir (read beneath it), then the one byte 'D' with
// the snapshot root (write beneath it). No path crosses: the copy opens
// nothing by a name it was given. It answers one message:
//
//   SnapshotRequest (<= kSnapshotRequestMax bytes):
//                       0 u32 magic "HBC2"   4 u64 max_files   12 u64 max_bytes
//                       20 u64 st_dev, 28 u64 st_ino of the directory to leave
//                          out (the bridge's spool; both 0: none)
//                       36 the context as bridge.json names it (0..4096 bytes),
//                          for the sentences only
//   answer, taken:      'o', the tree's hash (64 lowercase hex digits), then
//                       u64 files, bytes, cloned, copied_in_kernel,
//                       copied_by_read: exactly kSnapshotTakenSize bytes
//   answer, refused:    'e' and the sentence (1..kSnapshotErrorMax bytes)
//
// The executor believes nothing it did not check: the size, the hash's
// digits, the counts against the budget it sent; the sentence is shown
// with every byte outside printable ASCII as \xNN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"

namespace hb {

// How much one snapshot may copy; bridge.json's build_budget.
struct SnapshotBudget {
    std::uint64_t max_files = 20000;       // entries of any kind
    std::uint64_t max_bytes = 1ull << 30;  // sum of regular file sizes
};

// What the copy reports of the tree it wrote.
struct SnapshotCounts {
    std::string sha256;       // hash of the whole tree, lowercase hex (docs/BUILDS.md)
    std::uint64_t files = 0;  // entries copied: files, directories and links (not the root)
    std::uint64_t bytes = 0;  // sum of the regular files' sizes
    // How the regular files were copied: ioctl FICLONE (extents shared, copy
    // on write), copy_file_range, or a read/write loop (another filesystem).
    std::uint64_t cloned = 0;
    std::uint64_t copied_in_kernel = 0;
    std::uint64_t copied_by_read = 0;
};

struct SnapshotRequest {
    SnapshotBudget budget;
    std::string context;
    // A directory the copy leaves out wherever it meets it, by identity (no
    // path crosses): the bridge's spool, so requests and answers never
    // reach an image and an unchanged tree hashes the same (docs/BUILDS.md).
    std::uint64_t skip_dev = 0;
    std::uint64_t skip_ino = 0;
};

// Directories below the context root a snapshot descends into; deeper is an
// error.
inline constexpr int kSnapshotMaxDepth = 64;

inline constexpr std::size_t kSnapshotContextMax = 4096;
inline constexpr std::size_t kSnapshotRequestMax = 36 + kSnapshotContextMax;
inline constexpr std::size_t kSnapshotTakenSize = 1 + 64 + 5 * 8;
// An error names a path, each of its bytes shown as up to four.
inline constexpr std::size_t kSnapshotErrorMax = 32u << 10;
inline constexpr std::size_t kSnapshotAnswerMax = 1 + kSnapshotErrorMax;
inline constexpr std::uint8_t kSnapshotRootTag = 'D';
inline constexpr std::uint8_t kSnapshotMagic[4] = {'H', 'B', 'C', '2'};

// The copy's half (ipc/snapshot_wire_copy.cpp): the request read, the
// answer written; a refusal's sentence longer than kSnapshotErrorMax is cut
// to it.
Result<SnapshotRequest> decode_snapshot_request(std::span<const std::uint8_t> bytes);
std::vector<std::uint8_t> encode_snapshot_answer(const Result<SnapshotCounts>& answer);

// The executor's half (ipc/snapshot_wire.cpp): the request written, the
// answer read.
std::vector<std::uint8_t> encode_snapshot_request(const SnapshotRequest& request);

// The copy's answer checked against the budget that was sent: the counts,
// or an error: the copy's sentence (shown as above), or why the answer is
// out of shape ("the snapshot copy answered out of shape: ...").
Result<SnapshotCounts> decode_snapshot_answer(std::span<const std::uint8_t> bytes,
                                              const SnapshotBudget& budget);

}  // namespace hb
