// `hostbridge allow --for DURATION VERB [SERVICE]` and `hostbridge revoke`:
// a person's grants for a working session (common/grant.hpp), and how
// `pending` and `list` show the live ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/commands/subcommand.hpp"
#include "admin/util/args.hpp"

namespace hb::admin {

// "30m", "2h", "90s": seconds, from 1 minute to common::kMaxGrantSeconds;
// else an error that says what is wrong with `text`.
Result<std::int64_t> parse_grant_duration(std::string_view text);

// allow's usage checks and run when --for is given.
std::optional<int> check_grant(const ParsedArgs& args);
int run_grant(Invocation& in);

// One line per live grant of the install (expired and spent ones removed
// on the way), then one per file in grants/ that grants nothing because
// it was refused; empty when there is none.
std::vector<std::string> grant_lines(const std::string& state_dir);

}  // namespace hb::admin
