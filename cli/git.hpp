// The few git questions install asks: is this the top of a work tree, is a
// path ignored, where is info/exclude. Run as `git -C DIR ...` with an argv.
#pragma once

#include <string>

#include "ipc/result.hpp"

namespace hb::cli {

// The canonical top of the work tree holding `dir`; an error when `dir` is
// not in a git work tree or git is missing.
Result<std::string> git_toplevel(const std::string& dir);

// Whether git ignores `rel` (relative to `top`).
Result<bool> git_is_ignored(const std::string& top, const std::string& rel);

// Appends "/<rel>/" to the repository's info/exclude (what `git rev-parse
// --git-path info/exclude` names), creating it if needed.
Result<std::string> git_exclude(const std::string& top, const std::string& rel);

// Whether git tracks any file under `rel`.
Result<bool> git_tracks_under(const std::string& top, const std::string& rel);

}  // namespace hb::cli
