// The spool, pinned: one directory fd per spool subdirectory, opened once
// without following any symlink, then every open, rename, unlink and prune
// goes through those fds. No path string is ever built from spool input;
// a name read from a directory is only ever used relative to its pinned fd.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {

enum class SpoolDir { Tmp, Requests, Processing, Responses, Archive, Quarantine, Diagnostics };
inline constexpr std::array<SpoolDir, 7> kAllSpoolDirs = {
    SpoolDir::Tmp,     SpoolDir::Requests,   SpoolDir::Processing, SpoolDir::Responses,
    SpoolDir::Archive, SpoolDir::Quarantine, SpoolDir::Diagnostics};
std::string_view spool_dir_name(SpoolDir dir);  // "requests"

// A spool entry seen through an O_PATH|O_NOFOLLOW fd: looking at it never
// reads it, never blocks (a FIFO), never opens a device, never follows.
struct Inspected {
    UniqueFd path_fd;
    struct stat st {};
};

// How the host's published files look to the agent (bridge.json).
struct FileMode {
    mode_t mode = 0644;
    std::optional<gid_t> gid;  // agent_gid: chgrp'd to it when set
};

// Sets the group (when set) and then the mode of an open file: fchown may
// clear set-id bits, and the umask must never decide what the agent can
// read. Nothing on success; on failure what could not be set ("group" or
// "mode"), with errno kept.
const char* apply_file_mode(int fd, const FileMode& mode);

enum class Publish { Replace, NoReplace };

// The names the executor's own temporary files get in tmp/.
inline constexpr std::string_view kTempPrefix = ".hb-";

class Spool {
  public:
    // Auto: openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS,
    // falling back to the walk where the kernel lacks openat2. ComponentWalk
    // forces the fallback (tests run it on kernels that have openat2).
    enum class Resolve { Auto, ComponentWalk };

    // Opens project_dir (O_DIRECTORY|O_NOFOLLOW), the spool beneath it, and
    // each subdirectory beneath the spool; each must be a directory on the
    // spool's device. Any symlink on the way is an error: nothing is touched.
    static Result<Spool> open(const std::string& project_dir, const std::string& spool_dir,
                              Resolve resolve = Resolve::Auto);

    [[nodiscard]] int fd(SpoolDir dir) const;
    [[nodiscard]] const std::string& path() const { return path_; }  // for messages only

    // Entry names of `dir`, "." and ".." left out, sorted bytewise (for
    // requests/ that is oldest timestamp first).
    [[nodiscard]] Result<std::vector<std::string>> list(SpoolDir dir) const;
    // True when `dir` holds an entry `name` of any type (never followed).
    [[nodiscard]] bool contains(SpoolDir dir, const std::string& name) const;

    // Renames `name` from one subdirectory to another under the same name.
    // Returns 0 or the errno (ENOENT: it is gone; EEXIST: taken, no_replace).
    [[nodiscard]] int move(SpoolDir from, SpoolDir to, const std::string& name,
                           bool no_replace) const;

    // Moves `name` from `from` into quarantine/ without ever overwriting:
    // its own name, else `.1` … `.99`, else (or where a suffix would not fit
    // in NAME_MAX) a random suffix on a shortened name. Returns the name it
    // got there. Never opens, follows or deletes anything.
    [[nodiscard]] Result<std::string> quarantine(SpoolDir from, const std::string& name) const;

    // Renames requests/<name> to requests/.stuck-<name> (never overwriting)
    // for an entry that cannot leave requests/.
    [[nodiscard]] Result<std::string> mark_stuck(const std::string& name) const;

    // Looks at dir/name through O_PATH|O_NOFOLLOW and fstat.
    [[nodiscard]] Result<Inspected> inspect(SpoolDir dir, const std::string& name) const;
    // Opens an inspected regular file for reading: through /proc/self/fd/N
    // (the very inode inspected), falling back to openat with
    // O_NOFOLLOW|O_NONBLOCK|O_NOCTTY. A second fstat must match dev and ino.
    [[nodiscard]] Result<UniqueFd> open_for_reading(SpoolDir dir, const std::string& name,
                                                    const Inspected& inspected) const;

    // Publishes `bytes` as dir/name atomically: written to a file created in
    // tmp/ under a random name (O_CREAT|O_EXCL|O_NOFOLLOW), fchmod'ed to the
    // mode whatever the umask, chgrp'ed when a gid is set, then renamed into
    // place. NoReplace returns false, leaving nothing behind, when dir/name
    // already exists (RENAME_NOREPLACE: a late `queued` never overwrites).
    // Replace replaces a link standing there without following it; over a
    // directory it fails.
    [[nodiscard]] Result<bool> publish(SpoolDir dir, const std::string& name,
                                       std::string_view bytes, Publish how,
                                       const FileMode& mode) const;

    // Unlinks the regular files and symlinks of `dir` whose name starts
    // with `prefix`, last modified before `cutoff` (never a directory, never
    // recursing, never following). Returns how many it removed.
    [[nodiscard]] Result<std::size_t> prune(SpoolDir dir, std::time_t cutoff,
                                            std::string_view prefix = {}) const;

  private:
    Spool() = default;
    std::string path_;
    UniqueFd root_;
    std::array<UniqueFd, kAllSpoolDirs.size()> dirs_;
};

// `bytes` random bytes from getrandom(2), as lowercase hex.
std::string random_hex(std::size_t bytes);

}  // namespace hb::exec
