#include "admin/commands/subcommand.hpp"

#include <iostream>

#include "admin/util/locate.hpp"
#include "admin/util/slug.hpp"

namespace hb::admin {

int run_subcommand(const Subcommand& command, int argc, char** argv) {
    auto args = parse_args(std::span<char* const>(argv, static_cast<std::size_t>(argc)),
                           command.options, command.max_positional);
    if (!args) {
        print_error(command.name, args.error().message);
        return kExitUsage;
    }
    if (args->help) {
        std::cout << command.help;
        return kExitOk;
    }
    Invocation in;
    in.slug = args->get("slug");
    if (in.slug && !is_valid_slug(*in.slug)) {
        print_error(command.name, "--slug " + *in.slug + " is not a valid slug");
        return kExitUsage;
    }
    if (command.check) {
        if (auto stop = command.check(*args)) return *stop;
    }
    in.args = std::move(*args);
    auto dirs = host_dirs_from_env();
    if (!dirs) {
        print_error(command.name, dirs.error().message);
        return kExitFailure;
    }
    in.dirs = std::move(*dirs);
    if (command.needs == Subcommand::Needs::Install) {
        auto paths = locate_install(in.dirs, in.slug);
        if (!paths) {
            print_error(command.name, paths.error().message);
            return kExitFailure;
        }
        in.paths = std::move(*paths);
    }
    return command.run(in);
}

}  // namespace hb::admin
