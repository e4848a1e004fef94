// The integrity gate: before any command runs, every pinned file of the
// project's trusted computing base must still hash to its pin. It trusts
// nothing but the bytes on disk (not git: a commit or --skip-worktree hides
// nothing from it). Files are opened beneath project_dir with no symlink
// anywhere in the path.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::common {

// How a path beneath the project dir is resolved. Openat2 uses openat2(2)
// with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS and falls back to ComponentWise
// (each component opened with O_NOFOLLOW) where the kernel lacks it.
enum class Resolver { Openat2, ComponentWise };

enum class FileState {
    Regular,     // a regular file; sha256 is set
    Absent,      // no such file (or a parent directory is missing)
    Symlink,     // the file or a directory on its path is a symlink
    NotRegular,  // a directory, FIFO, device, socket; or a path component is not a directory
    BadPath,     // empty, absolute, or with "." / ".." components
    Unreadable,  // anything else; error says why
    TooLarge,    // a regular file over kMaxPinnedBytes, not read; error says its size
    Sparse,      // a regular file with a hole (SEEK_HOLE), not read; error says where
};

// The most a pinned file may hold. install and `approve` read no more
// (admin/install/tcb.cpp); the gate reads no more either, so a file the
// agent grew (or made sparse: `truncate -s 4G` costs it nothing) is
// refused from its fstat, not hashed for as long as it is long.
inline constexpr std::uint64_t kMaxPinnedBytes = 16u << 20;

struct Observed {
    FileState state = FileState::Unreadable;
    std::string sha256;  // lowercase hex, Regular when hashed
    std::string error;   // Unreadable, TooLarge and Sparse
};

// Whether observe_pinned reads a regular file it finds: a file pinned as
// absent is wrong whatever it holds, so the gate only looks at its type.
enum class Contents { Hash, TypeOnly };

// Looks at one file `rel_path` beneath the directory `project_dirfd` and,
// with Contents::Hash, hashes it if it is a regular file of at most
// kMaxPinnedBytes without a hole (anything else is TooLarge or Sparse,
// unread). Never follows a symlink, never blocks on a FIFO. The drain's
// gate and `hostbridge doctor` (through check_tcb) use this; install and
// `approve` hash what they pin in admin/install/tcb.cpp.
Observed observe_pinned(int project_dirfd, std::string_view rel_path,
                        Resolver resolver = Resolver::Openat2, Contents contents = Contents::Hash);

// Whether the regular file `fd` (whose fstat is `st`) may be read as a
// pinned file: Regular, or TooLarge or Sparse with why, found without
// reading it; its offset is left at 0. observe_pinned asks it, and so
// does admin/install/tcb.cpp before install, approve or doctor read one.
Observed check_extent(int fd, const struct stat& st);

// Opens `rel_path` beneath `dirfd` exactly as observe_pinned does (no
// symlink anywhere, O_NONBLOCK, no ctty): a descriptor, or the FileState
// that says why not. `directory` opens a directory instead of a file.
struct Opened {
    UniqueFd fd;
    FileState state = FileState::Unreadable;  // Regular when fd is valid
    std::string error;
};
Opened open_pinned(int dirfd, std::string_view rel_path, bool directory = false,
                   Resolver resolver = Resolver::Openat2);

struct TcbProblem {
    std::string path;     // as pinned (relative to project_dir)
    std::string problem;  // "changed since it was approved (...)", "is missing", ...
};

struct GateReport {
    std::vector<TcbProblem> problems;  // empty: the gate passes
    [[nodiscard]] bool passed() const { return problems.empty(); }
    // The refusal's detail: every file and what is wrong, then the fix, e.g.
    // "compose.yaml changed since it was approved (...); .env exists but was
    // pinned as absent; fix: check the change, then run `hostbridge approve`".
    [[nodiscard]] std::string detail() const;
};

// Checks every pin. A project dir that cannot be opened fails every pin.
GateReport check_tcb(const std::string& project_dir, const std::vector<TcbPin>& pins,
                     Resolver resolver = Resolver::Openat2);

}  // namespace hb::common
