// The run tree: the only files a command reads from the project. Before each
// command the executor rebuilds <run_dir>/<basename of project_dir>/ from the
// approved copies in <state_dir>/approved/ (and the rendered files in
// <state_dir>/rendered/), hashing the bytes it writes against their pins. The
// agent can write the checkout but not this tree, so a file swapped in the
// checkout after the gate read it is never what runs (SECURITY.md, "The bytes
// hashed are the bytes run").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {

// <run_dir>/<basename of project_dir>: named like the checkout, so a compose
// CLI that derives the project name from its file's directory keeps the name.
std::string run_tree_dir(const Config& config);

// The absolute path in the run tree of `path`, when `path` lies inside the
// project dir; empty otherwise.
std::string in_run_tree(const Config& config, std::string_view path);

// mkdir -p of run_dir; the last component must be ours and is made 0700.
Result<UniqueFd> open_run_dir(const std::string& run_dir);

// Rebuilds the run tree (mode 0700, owned by us, never following a link):
// every file pinned with a hash, its bytes read from the approved copy (or
// the rendered file) and checked against the pin before they are written.
// The stack backend's script is written executable. An error names the file
// and why; nothing may run then.
Result<void> build_run_tree(const Config& config);

// Walks every checkout path the rendered files name (bind sources, build
// contexts) from the project dir with no symlink allowed. An error names the
// first path that is a symlink or lies under one.
Result<void> check_checkout_paths(const Config& config);

// The variables every command gets besides child_environment(): where the
// checkout is and where the verified copies are (docs/DECIDE-AND-RUN.md).
std::vector<std::string> run_tree_environment(const Config& config);

// Removes `name` beneath `parent_fd` and everything under it, never following
// a link (a link is unlinked, its target untouched); a directory of ours that
// lacks u+rwx gets it first. Absent is success. Used on our own trees
// only: a directory that another process keeps filling is an error.
Result<void> remove_tree(int parent_fd, const std::string& name);

}  // namespace hb::exec
