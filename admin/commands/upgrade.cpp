// `hostbridge upgrade`: brings every install (or one) up to this hostbridge.
// Each is installed again with the options it was installed with
// (install.json), so its executor and parser copies are replaced (a temp
// file renamed over each: a running drain keeps the inode it runs), and its
// units, AGENT.md and the spool's `request` client are rendered anew, and
// bin/hostbridge-agent with its manifest replaced (docs/MCP.md).
#include <algorithm>
#include <iostream>

#include "admin/commands/commands.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/versions.hpp"
#include "admin/util/args.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/slug.hpp"

namespace hb::admin {
namespace {

constexpr std::string_view kCmd = "upgrade";

const char* const kHelp = R"(usage: hostbridge upgrade [--slug SLUG]

Brings every install of this user up to this hostbridge: runs install again
for each, with the options it was installed with, which replaces its copies
of the executor and parser and renders its units and the files it dropped
into the spool anew. A drain that is running keeps the binary it started
with; the next one runs the new copy. `hostbridge list` shows the version
each install runs; `hostbridge doctor` reports an install older than this
hostbridge.

  --slug SLUG   only this install

Exit: 0 every install upgraded, 1 one or more failed, 2 usage error.
)";

const OptionSpec kSpecs[] = {{"slug", true, false}};

// install with the recorded options; its own output says what changed.
int upgrade_one(const HostDirs& dirs, const std::string& slug) {
    InstallPaths paths = install_paths(dirs, slug);
    const std::string fix = self_command() + " install --slug " + slug + " --project-dir DIR ...";
    auto record = load_install_record(paths.record_file);
    if (!record || !record->has_value()) {
        print_error(kCmd,
                    slug + ": " +
                        (record ? paths.record_file + " is missing" : record.error().message) +
                        "; install it again by hand:");
        print_fix(fix, true);
        return kExitFailure;
    }
    const auto& argv_words = (*record)->reinstall_argv;
    if (argv_words.empty() || argv_words.front() != "install") {
        print_error(kCmd, slug + ": " + paths.record_file +
                              " does not hold an install command; install it again by hand:");
        print_fix(fix, true);
        return kExitFailure;
    }
    auto before = binary_version(paths.executor);
    std::cout << "hostbridge upgrade: " << slug << " (" << before.value_or("unknown version")
              << " -> " << own_version() << ")\n";
    std::vector<std::string> words = argv_words;
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);
    std::cout.flush();
    return run_install(static_cast<int>(words.size()), argv.data());
}

}  // namespace

namespace {
int run_upgrade(Invocation& in) {
    const auto& only = in.slug;
    const HostDirs* dirs = &in.dirs;
    std::vector<std::string> slugs = installed_slugs(*dirs);
    if (only) {
        if (std::find(slugs.begin(), slugs.end(), *only) == slugs.end()) {
            print_error(kCmd, "no install named " + *only + "; see hostbridge list");
            return kExitFailure;
        }
        slugs = {*only};
    }
    if (slugs.empty()) {
        std::cout << "no installs\n";
        return kExitOk;
    }
    std::vector<std::string> failed;
    for (const auto& slug : slugs) {
        if (upgrade_one(*dirs, slug) != kExitOk) failed.push_back(slug);
    }
    if (!failed.empty()) {
        std::string names;
        for (const auto& slug : failed) names += (names.empty() ? "" : ", ") + slug;
        print_error(kCmd, std::to_string(failed.size()) + " of " + std::to_string(slugs.size()) +
                              " install(s) not upgraded: " + names);
        return kExitFailure;
    }
    std::cout << "hostbridge upgrade: " << slugs.size() << " install(s) at " << own_version()
              << "\n";
    return kExitOk;
}

}  // namespace

const Subcommand kUpgrade = {kCmd, kHelp, kSpecs, Subcommand::Needs::Dirs, nullptr, run_upgrade};

}  // namespace hb::admin
