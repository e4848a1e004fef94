// The build snapshot: a host-owned copy of one service's build context, so the
// image builder never reads the checkout. podman's builder follows symlinks in
// a build context on the host as the host user (`RUN --mount=type=bind,
// source=h` with `h` a link to /home/u: docs/BUILDS.md, "Why"), and the
// agent owns the checkout: it can
// plant links, FIFOs and sockets, swap directories at any moment, grow a
// directory while it is read and rewrite a file while it is copied. The copy
// is walked from pinned directory fds with no link ever followed, holds only
// regular files, directories and symlinks that resolve inside it, and is
// bounded in entries and bytes.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <string>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"
#include "sandbox/confine.hpp"

namespace hb::exec {

// How much one snapshot may copy; bridge.json's build_budget.
struct SnapshotBudget {
    std::uint64_t max_files = 20000;       // entries of any kind
    std::uint64_t max_bytes = 1ull << 30;  // sum of regular file sizes
};

struct Snapshot {
    std::string dir;          // absolute path of the snapshot root (== dest)
    std::string sha256;       // hash of the whole tree (see take_snapshot), lowercase hex
    std::uint64_t files = 0;  // entries copied: files, directories and links (not the root)
    std::uint64_t bytes = 0;  // sum of the regular files' sizes
    // How the regular files were copied: ioctl FICLONE (extents shared, copy
    // on write), copy_file_range, or a read/write loop (another filesystem).
    std::uint64_t cloned = 0;
    std::uint64_t copied_in_kernel = 0;
    std::uint64_t copied_by_read = 0;
};

// Directories below the context root a snapshot descends into; deeper is an
// error.
inline constexpr int kMaxSnapshotDepth = 64;

// Copies <project_dir>/<context> into `dest` (an absolute path whose parent
// exists and is ours, not writable by group or others; `dest` itself is
// removed first if present, without following any link, then created 0700).
// `context` is "." or a relative normal path (no "..", no ".", no leading
// "/", no empty component); each of its components is opened with
// O_NOFOLLOW, so a context reached through a symlink is refused. Then:
//   - a regular file is copied (FICLONE, else copy_file_range, else
//     read/write; never a hard link) with its permission bits & 0777;
//   - a directory is created with its bits & 0777, plus u+rwx;
//   - a symlink is recreated as it is. An absolute target is refused, and so
//     is one whose text climbs above the root (read from the link's
//     directory, each ".." taking one name off). After the copy every link
//     must resolve beneath the snapshot root as the kernel resolves it
//     (openat2 RESOLVE_BENEATH: sub/d -> .. with sub/a -> d/../x reads as
//     inside but is not) or not at all (a dangling link is allowed);
//   - a FIFO, socket or device is refused.
// The walk stops with an error past kMaxSnapshotDepth, past budget.max_files
// entries (counted as they are listed, so a directory that grows while it is
// read cannot run away) or past budget.max_bytes (counted as the bytes are
// copied, each file bounded by what is left of the budget + 1 byte, so a
// file that grows during its copy is caught).
//
// sha256 is the hash of "hostbridge build snapshot v1\n" followed by one
// record per entry but the root, in bytewise order of the relative path:
//   "<type> <mode> <len>:<path> <payload>\n"
// with type d, f or l, mode the entry's permission bits in the snapshot as
// four octal digits (0777 for a link), len the byte length of the path in
// decimal, and payload "-" for a directory, the lowercase hex sha256 of the
// content for a file (hashed from the copy once it is written, so it is
// exactly what the builder reads), "<len>:<target>" for a link.
//
// The copy and the hash run in a child that can read only beneath the
// context and write only beneath `dest` (sandbox/confine.hpp); the link
// checks run here, on a listing of the finished tree of our own.
//
// Errors name the checkout path (relative to project_dir, with every byte
// outside printable ASCII shown as \xNN) and why, e.g. "build context
// web/app/h: a symlink to /home/u, outside the context". On any error past
// the checks of `context` and `dest`, nothing is left at `dest`: neither the
// old snapshot nor a partial one.
Result<Snapshot> take_snapshot(const std::string& project_dir, const std::string& context,
                               const std::string& dest, const SnapshotBudget& budget);

// For the tests only (tests/executor/test_build_snapshot.cpp); the executor
// never changes them. The copy runs in a confined child (fill_confined,
// build_snapshot.cpp): `max_abi` is the Landlock ABI it is confined at
// (sandbox/confine.hpp), and `in_child_after_copy`, when set, runs in that
// child after the copy with the snapshot root's fd, to try what a bug could.
struct SnapshotTestHooks {
    int max_abi = sandbox::kLandlockAbi;
    std::function<void(int root_fd)> in_child_after_copy;
};
SnapshotTestHooks& snapshot_test_hooks();

// Opens `name` beneath `dir_fd` to be copied, as take_snapshot opens every
// regular file: O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, then fstat of the fd
// must say regular file. The type can change between the listing and the
// open: a FIFO swapped in must not block the open (O_NONBLOCK), nor must a
// file under another process's write lease. `st` gets the fstat. Errors say
// why without the path ("a FIFO (named pipe)"). Exposed for the tests.
Result<UniqueFd> open_source_file(int dir_fd, const std::string& name, struct stat& st);

}  // namespace hb::exec
