// A small long-option parser shared by the subcommands: `--name value`,
// `--name=value`, flags, repeatable options, positionals, `--help`/`-h`.
// Anything it does not know is a usage error (exit 2).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"

namespace hb::admin {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct OptionSpec {
    std::string_view name;  // without the leading "--"
    bool takes_value = false;
    bool repeatable = false;
};

struct ParsedArgs {
    bool help = false;
    std::map<std::string, std::vector<std::string>> values;  // a flag holds one ""
    std::vector<std::string> positional;

    [[nodiscard]] bool has(std::string_view name) const;
    [[nodiscard]] std::optional<std::string> get(std::string_view name) const;
    [[nodiscard]] std::vector<std::string> all(std::string_view name) const;
};

// argv[0] is the subcommand itself. `max_positional` bounds the positionals.
Result<ParsedArgs> parse_args(std::span<char* const> argv, std::span<const OptionSpec> specs,
                              std::size_t max_positional = 0);

// "hostbridge <command>: <sentence>" on stderr (stdout flushed first, so
// the two streams read in order on a terminal).
void print_error(std::string_view command, std::string_view sentence);
// "hostbridge <command>: warning: <sentence>" on stderr.
void print_warning(std::string_view command, std::string_view sentence);
// A remediation command, bare on a line of its own (pasteable).
void print_fix(std::string_view command_line, bool to_stderr = false);
// "a", "a and b", "a, b and c": a list of words in a sentence.
std::string and_list(const std::vector<std::string>& words);
// Parses a non-negative decimal integer; nullopt on anything else.
std::optional<long> parse_number(std::string_view text, long max);

}  // namespace hb::admin
