// One row of `hostbridge`'s dispatch table (admin/commands/main.cpp): what a
// subcommand needs done before it runs. run_subcommand parses its options,
// answers --help, checks --slug, finds the host directories and, when asked,
// locates the install, once for every subcommand, each failure with the
// same message and exit code.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "admin/util/args.hpp"
#include "admin/util/paths.hpp"

namespace hb::admin {

// What a subcommand gets once the common steps succeeded.
struct Invocation {
    ParsedArgs args;
    std::optional<std::string> slug;  // --slug, valid when given
    HostDirs dirs;
    InstallPaths paths;  // located (Needs::Install only)
};

struct Subcommand {
    enum class Needs { Dirs, Install };
    std::string_view name;
    const char* help;
    std::span<const OptionSpec> options;
    Needs needs;
    // The command's own usage checks, before anything is looked up: an exit
    // code to stop with, or nothing. May be null.
    std::optional<int> (*check)(const ParsedArgs& args);
    int (*run)(Invocation& invocation);
    // How many positional arguments it takes (`policy suggest`: one); a
    // further one is a usage error. `check` says which are valid.
    std::size_t max_positional = 0;
};

// argv[0] is the subcommand's name.
int run_subcommand(const Subcommand& command, int argc, char** argv);

}  // namespace hb::admin
