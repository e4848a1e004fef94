// Private mount namespaces for the tests that mount (the bind pins of
// engines/podman/bind_pin.cpp, the small full filesystems of tests/faults): what
// a test mounts is never visible to the rest of the machine and goes away
// with its process.
#pragma once

#include <optional>
#include <string>

namespace hb::test {

// For a child the test forked (in_child, tests/support/process.hpp): a
// private mount namespace, as root directly, otherwise inside a new user
// namespace mapping this uid to 0, as `podman unshare` gives rootless
// podman. Empty on success, else why not.
std::string enter_private_mounts();

// For the test process itself, once (the executors it spawns inherit the
// namespace): root only. Empty on success, else why the test must skip.
std::string enter_private_mount_namespace();

// Mounts a tmpfs of `options` (e.g. "size=256k") over `dir`; empty on success.
std::string mount_tmpfs(const std::string& dir, const std::string& options);
bool remount(const std::string& dir, unsigned long flags, const std::string& options);

// Fills the filesystem of `dir` to the last byte with `dir`/<name>: writes
// in shrinking chunks until even one byte is refused (ENOSPC). Files that
// already exist keep the slack of their last page, as on a real full disk.
bool fill_filesystem(const std::string& dir, const std::string& name = "filler");

// Uses up every inode of the filesystem of `dir` with empty files in
// `dir`/<subdir>/. Returns how many it created, or nullopt on another error.
std::optional<int> exhaust_inodes(const std::string& dir, const std::string& subdir);

}  // namespace hb::test
