// The build snapshot: a host-owned copy of one service's build context, so
// the image builder never reads the checkout. podman's builder follows
// symlinks in a build context on the host as the host user (`RUN
// --mount=type=bind,source=h` with `h` a link to /home/u: docs/BUILDS.md,
// "Why"), and the agent owns the checkout. The copy itself runs in
// `hostbridge-snapshot`, confined to reading beneath the context and
// writing beneath the snapshot (snapshot/copy.hpp says how it walks and
// what it hashes); here the executor opens both directories, starts it,
// and believes nothing of its answer or its tree that it did not check.
#pragma once

#include <string>

#include "ipc/result.hpp"
#include "ipc/snapshot_wire.hpp"

namespace hb::exec {

using hb::SnapshotBudget;

struct Snapshot : SnapshotCounts {
    std::string dir;  // absolute path of the snapshot root (== dest)
};

// Copies <project_dir>/<context> into `dest` (an absolute path whose parent
// exists and is ours, not writable by group or others; `dest` itself is
// removed first if present, without following any link, then created 0700)
// by running `copier` (bridge.json's `snapshot`, an installed
// hostbridge-snapshot) with the two directories' fds. `context` is "." or a
// relative normal path (no "..", no ".", no leading "/", no empty
// component); each of its components is opened with O_NOFOLLOW, so a
// context reached through a symlink is refused.
//
// The copy's answer is checked against the budget (ipc/snapshot_wire.hpp);
// then every entry of the finished tree is listed here (the copy is not
// trusted to): anything but a directory, a regular file or a symlink is
// refused, and so is a link whose target is absolute or whose text climbs
// above the root (read from the link's directory, each ".." taking one name
// off), and one that does not resolve beneath the snapshot root as the
// kernel resolves it (openat2 RESOLVE_BENEATH: sub/d -> .. with
// sub/a -> d/../x reads as inside but is not); a dangling link is allowed.
//
// Errors name the checkout path (relative to project_dir, with every byte
// outside printable ASCII shown as \xNN) and why, e.g. "build context
// web/app/h: a symlink to /home/u, outside the context"; a copier that is
// missing, dies, hangs past its time or answers out of shape is an error
// that says so. On any error past the checks of `context` and `dest`,
// nothing is left at `dest`: neither the old snapshot nor a partial one.
// The directory `left_out` names (the bridge's spool, from bridge.json) is
// not copied wherever the context holds it.
Result<Snapshot> take_snapshot(const std::string& copier, const std::string& project_dir,
                               const std::string& context, const std::string& dest,
                               const SnapshotBudget& budget, const std::string& left_out = {});

}  // namespace hb::exec
