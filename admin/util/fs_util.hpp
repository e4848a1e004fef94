// Small file helpers for the host-side files the admin tool owns (config,
// state, lib and unit dirs). Spool files are handled with the same care as
// the executor: no symlink is ever followed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace hb::admin {

// Reads a whole regular file, refusing a symlink as the last component.
// nullopt when it does not exist.
Result<std::optional<std::string>> read_file_if_exists(const std::string& path,
                                                       std::size_t max_bytes = 64u << 20);

// Writes `content` to a fresh temp file beside `path` (O_EXCL|O_NOFOLLOW),
// fsyncs, sets `mode` and renames it over `path`: readers see the old or the
// new file, never a partial one.
Result<void> write_file_atomic(const std::string& path, std::string_view content, mode_t mode);

enum class WriteOutcome { Unchanged, Created, Updated };
// write_file_atomic, skipped when the file already holds exactly `content`
// with `mode` (what makes install idempotent).
Result<WriteOutcome> write_file_if_changed(const std::string& path, std::string_view content,
                                           mode_t mode);
std::string_view outcome_word(WriteOutcome outcome);  // "no change", "created", "updated"

// mkdir -p for host-side dirs (config, state, lib, units), new dirs get `mode`.
Result<void> make_dirs(const std::string& path, mode_t mode);

// Removes a file; a missing one is fine. Returns whether something was removed.
Result<bool> remove_file(const std::string& path);

// Removes a tree without following any symlink (openat/unlinkat with
// O_NOFOLLOW all the way down): safe on a tree another party can write.
Result<bool> remove_tree(const std::string& path);

// The same three beneath a pinned directory fd (one opened without
// following links, see admin/install/spool_setup.hpp): `name` is a single component,
// never followed; `shown` names it in messages. The write goes to a temp
// file in the same directory, then renameat over `name`.
Result<WriteOutcome> write_file_at_if_changed(int dirfd, const std::string& name,
                                              std::string_view content, mode_t mode,
                                              const std::string& shown);
Result<bool> remove_file_at(int dirfd, const std::string& name, const std::string& shown);
// A directory is emptied without following any link, then removed; any
// other entry is unlinked.
Result<bool> remove_tree_at(int dirfd, const std::string& name, const std::string& shown);

// "/a/b/../c" -> "/a/c"; no filesystem access.
std::string lexically_normal(const std::string& path);
// "a/b" from "./a//b/", "" for "." (the top itself); nullopt when it is
// absolute, climbs (`..`) or holds a control character: a path that must
// stay inside a directory (a build context, a Containerfile).
std::optional<std::string> normal_inside(const std::string& raw);
// Whether `path` is `root` or lies beneath it (both absolute and normal).
bool path_is_within(const std::string& path, const std::string& root);
// realpath(3); error names the path.
Result<std::string> canonical_path(const std::string& path);
// Absolute (relative to cwd) and lexically normal; no symlink resolved.
std::string absolute_path(const std::string& path);

// Quotes a word for a POSIX shell when it needs it, so a printed fix
// command can be pasted as is.
std::string shell_quote(std::string_view word);

}  // namespace hb::admin
