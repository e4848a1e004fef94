// The argv table enumerated and shown as text, for docs/ARGV-TABLE.md,
// property tests and benchmarks; the drain only calls argv_for().
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "engines/argv_table.hpp"

namespace hb::admin {

// One line of the complete table, for docs and for property tests.
struct ArgvTableRow {
    Verb verb;
    std::optional<std::size_t> arg;  // index into config.services
    exec::ArgvOutcome outcome;
};
// Every verb, with every service for the verbs that take one (rebuild also
// with the services it refuses), in kAllVerbs order then service order.
std::vector<ArgvTableRow> enumerate_argv_table(const Config& config);

// "restart api -> /p/stack restart api", "init -> denied: not supported by
// the compose backend", "ping -> (answered by the executor, nothing runs)".
// For display only: empty words and words with blanks, quotes or backslashes
// are shown in '...'; nothing ever executes this text.
std::string describe_row(const ArgvTableRow& row, const Config& config);
std::string describe_outcome(const exec::ArgvOutcome& outcome);  // the part after "->"
std::string display_argv(const exec::Argv& argv);
// The steps' argvs joined by " && " (the next runs only when one succeeds).
std::string display_plan(const exec::Plan& plan);

}  // namespace hb::admin
