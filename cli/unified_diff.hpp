// A unified diff between two versions of a file, by /usr/bin/diff -u (the
// admin tool may run diff; the executor never does). Used by approve and
// doctor to show what changed in a trusted file since it was approved.
#pragma once

#include <optional>
#include <string>

#include "ipc/result.hpp"

namespace hb::cli {

// nullopt content stands for an absent file (diffed as /dev/null). The
// labels name the two sides in the header lines. --text: every file is
// diffed line by line, never "Binary files differ". The result is raw bytes:
// show it through render_change (cli/change_view.hpp).
Result<std::string> unified_diff(const std::string& old_label,
                                 const std::optional<std::string>& old_content,
                                 const std::string& new_label,
                                 const std::optional<std::string>& new_content);

}  // namespace hb::cli
