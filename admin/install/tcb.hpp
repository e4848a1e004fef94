// The trusted computing base of a project as the admin tool sees it: files
// read without following any symlink (as the integrity gate reads them),
// their SHA-256 pins, and the approved copies kept in the state dir so that
// `approve` and `doctor` can show a diff of what changed.
#pragma once

#include <optional>
#include <string>

#include "admin/util/paths.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

struct TcbSnapshot {
    std::string rel;                     // relative to the project dir
    std::optional<std::string> content;  // nullopt: the file is absent
    std::optional<std::string> sha256;   // lowercase hex of content
};

// Reads <project_dir>/<rel> one component at a time with O_NOFOLLOW: a
// symlink anywhere below the project dir, or a non-regular file, is an error
// (the gate would refuse it too). An absent file is a snapshot without
// content.
Result<TcbSnapshot> snapshot_tcb_file(const std::string& project_dir, const std::string& rel);

// `path` (absolute or relative to the project dir) as a normal relative
// path inside the project; an error names it when it lies outside.
Result<std::string> project_relative(const std::string& project_dir, const std::string& path);

// <state_dir>/approved/<rel>
std::string approved_copy_path(const InstallPaths& paths, const std::string& rel);
Result<std::optional<std::string>> read_approved_copy(const InstallPaths& paths,
                                                      const std::string& rel);
// Stores the snapshot's content as the approved copy (mode 0600); an absent
// snapshot removes any old copy.
Result<void> store_approved_copy(const InstallPaths& paths, const TcbSnapshot& snapshot);

}  // namespace hb::admin
