// The few git questions install and doctor ask about the agent's checkout:
// is this the top of a work tree, is the spool ignored, is anything under
// it tracked; and the exclude entry install adds.
//
// The agent owns the checkout, `.git/` included, so nothing here lets git
// read the checkout's repository: its config can name programs
// (core.fsmonitor, core.hooksPath, filters, include.path, ...) that git
// would run as the person running hostbridge. The top is found with lstat;
// git runs only against a private, empty repository in a temp dir, with
// the work tree's .gitignore files as data and copies of info/exclude and
// the index read from the checkout with a no-follow walk. The checkout's
// git directory is reached one component at a time with O_NOFOLLOW, and
// only inside the checkout: nothing is read or written through a symlink or
// a `gitdir:` file that leads elsewhere.
#pragma once

#include <string>

#include "ipc/result.hpp"

namespace hb::admin {

// Succeeds when `dir` (canonical) holds a `.git` entry. Otherwise the error
// names the top of the work tree holding `dir`, or says there is none.
Result<void> git_check_top(const std::string& dir);

// Whether git ignores the directory `rel` of the work tree `top` by the
// checkout's own rules: its .gitignore files and its info/exclude. An error
// when that cannot be told without reading outside the checkout or through
// a symlink (and no .gitignore settles it), or when git fails.
Result<bool> git_is_ignored(const std::string& top, const std::string& rel);

// Appends "/<rel>/" to the checkout's info/exclude, written through a
// no-follow walk from `top` (refusing a symlinked `.git` or `.git/info` and a
// `gitdir:` leading outside the checkout). Returns the file's path.
Result<std::string> git_exclude(const std::string& top, const std::string& rel);

// Whether the checkout's index holds any file under `rel`.
Result<bool> git_tracks_under(const std::string& top, const std::string& rel);

}  // namespace hb::admin
