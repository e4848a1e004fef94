// The build snapshot's copy: one service's build context copied into a
// host-owned tree, so the image builder never reads the checkout. It runs
// in `hostbridge-snapshot` (snapshot/main.cpp), confined before it reads
// anything (sandbox/confine.hpp) to reading beneath the context and writing
// beneath the snapshot root, both directory fds the executor opened and
// passed (ipc/snapshot_wire.hpp): a bug here cannot write the person's files.
// The executor checks every link of the finished tree and the answer
// (engines/build_input/build_snapshot.hpp, which says what a snapshot is).
//
// The agent owns the checkout: it can plant links, FIFOs and sockets, swap
// directories at any moment, grow a directory while it is read and rewrite a
// file while it is copied. The walk never follows a link:
//   - a regular file is copied (FICLONE, else copy_file_range, else
//     read/write; never a hard link) with its permission bits & 0777; a
//     sparse file is refused;
//   - a directory is created with its bits & 0777, plus u+rwx;
//   - a symlink is recreated as it is (the executor checks where it leads);
//   - a FIFO, socket or device is refused.
// It stops with an error past kSnapshotMaxDepth, past budget.max_files
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
// Errors name the checkout path (the request's context, then the path below
// it, with every byte outside printable ASCII shown as \xNN) and why, e.g.
// "build context web/app/f: a FIFO (named pipe); ...".
#pragma once

#include <sys/stat.h>

#include <string>

#include "ipc/result.hpp"
#include "ipc/snapshot_wire.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::snapshot {

// Copies the tree beneath `context_fd` (a directory fd, O_PATH is enough)
// into the empty directory `root_fd`, within request.budget.
Result<SnapshotCounts> copy_context(int context_fd, int root_fd, const SnapshotRequest& request);

// Opens `name` beneath `dir_fd` to be copied, as copy_context opens every
// regular file: O_RDONLY|O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, then fstat of the fd
// must say regular file. The type can change between the listing and the
// open: a FIFO swapped in must not block the open (O_NONBLOCK), nor must a
// file under another process's write lease. `st` gets the fstat. Errors say
// why without the path ("a FIFO (named pipe)"). Exposed for the tests.
Result<UniqueFd> open_source_file(int dir_fd, const std::string& name, struct stat& st);

}  // namespace hb::snapshot
