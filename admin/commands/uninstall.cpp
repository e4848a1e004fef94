// `hostbridge uninstall`: stops and removes one install's units, binaries and
// config, and the client it dropped into the spool. The state dir (audit log,
// approved copies) stays unless --purge, which also removes the spool.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>

#include "admin/commands/commands.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/spool_setup.hpp"
#include "admin/install/systemd_user.hpp"
#include "admin/util/args.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/slug.hpp"
#include "common/config.hpp"
#include "display/visible.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr std::string_view kCmd = "uninstall";

const char* const kHelp = R"(usage: hostbridge uninstall [--slug SLUG] [--purge]

Disables and removes the install's systemd units, its installed executor and
parser, its config (bridge.json, policy.conf) and the client and AGENT.md it
dropped into the spool. The state dir (the audit log, approved copies of the
trusted files, service.log) is kept as a record.

  --slug SLUG   the install (default: the one whose project holds the cwd)
  --purge       also remove the state dir and the spool (requests, responses,
                archive and quarantine included)

Exit: 0 removed, 1 failed, 2 usage error.
)";

const OptionSpec kSpecs[] = {{"slug", true, false}, {"purge", false, false}};

}  // namespace

namespace {
int run_uninstall(Invocation& in) {
    const InstallPaths& p = in.paths;
    const HostDirs* dirs = &in.dirs;
    const bool purge = in.args.has("purge");
    // The config names the spool and the state dir; without it, only the
    // host-side paths derived from the slug are removed.
    auto config = load_config(p.config_file);
    if (!config) {
        print_warning(kCmd, "cannot read " + p.config_file + " (" + config.error().message +
                                "); the spool is left alone");
    }

    // The spool is pinned before anything is removed: a link planted on the
    // way to it, or as one of its directories, stops the uninstall here.
    std::optional<PinnedSpool> spool;
    if (config) {
        const std::string& project = config->project_dir;
        if (!path_is_within(config->spool_dir, project) || config->spool_dir == project) {
            print_error(kCmd, "the spool " + config->spool_dir + " is not inside the project " +
                                  project + "; nothing was removed");
            return kExitFailure;
        }
        auto pinned = open_spool(project, config->spool_dir.substr(project.size() + 1));
        if (!pinned) {
            print_error(kCmd, spool_refusal(pinned.error().message));
            return kExitFailure;
        }
        spool = std::move(*pinned);
    }

    int failures = 0;
    auto removed = [&](const std::string& what, const Result<bool>& result) {
        if (!result) {
            print_error(kCmd, result.error().message);
            ++failures;
        } else if (*result) {
            std::cout << "  removed " << visible(what) << "\n";
        }
    };

    auto systemctl = SystemctlUser::find();
    const bool manager = systemctl && systemctl->manager_reachable();
    if (manager) {
        (void)systemctl->run({"disable", "--now", p.path_unit_name});
        (void)systemctl->run({"stop", p.service_unit_name});
    }
    // `enable` made this link; remove it ourselves when no manager is there.
    removed(p.wants_link, remove_file(p.wants_link));
    removed(p.path_unit, remove_file(p.path_unit));
    removed(p.service_unit, remove_file(p.service_unit));
    if (manager) {
        (void)systemctl->run({"daemon-reload"});
        (void)systemctl->run({"reset-failed", p.path_unit_name, p.service_unit_name});
    }
    removed(p.lib_dir, remove_tree(p.lib_dir));
    // The run tree holds copies only (executor/run_tree.hpp): rebuilt per command.
    const std::string run_dir = config && !config->run_dir.empty() ? config->run_dir : p.run_dir;
    removed(run_dir, remove_tree(run_dir));
    removed(p.config_dir, remove_tree(p.config_dir));
    if (spool && spool->root) {
        for (const char* name : {"request", "AGENT.md"}) {
            const std::string shown = spool->path + "/" + name;
            removed(shown, remove_file_at(spool->root.get(), name, shown));
        }
        const std::string bin = spool->path + "/bin";  // hostbridge-agent and its manifest
        removed(bin, remove_tree_at(spool->root.get(), "bin", bin));
    }
    if (purge) {
        const std::string state_dir = config ? config->state_dir : p.state_dir;
        removed(state_dir, remove_tree(state_dir));
        if (spool && spool->root) {
            removed(spool->path, remove_tree_at(spool->parent.get(), spool->name, spool->path));
        }
    } else {
        std::cout << "kept the state dir (audit log, approved copies): " << visible(p.state_dir)
                  << "\n";
    }
    // The per-user roots go too once the last install is gone (rmdir only
    // removes an empty directory).
    for (const std::string& root :
         {dirs->config_home + "/hostbridge", dirs->lib_home + "/hostbridge",
          dirs->state_home + "/hostbridge"}) {
        ::rmdir(root.c_str());
    }
    // Only root removes a user (docs/ENGINE-USER.md, "Turning it off").
    if (config && config->engine) {
        const passwd* me = ::getpwuid(::geteuid());
        std::cout << "kept the engine user " << visible(config->engine->user)
                  << " with the project's images, containers and volumes; remove it:\n";
        print_fix(
            "sudo " + self_command() + " engine remove --slug " + p.slug + " --user " +
            (me != nullptr && me->pw_name != nullptr ? std::string(me->pw_name) : "YOU") +
            (config->engine->user == "hb-" + p.slug ? "" : " --name " + config->engine->user));
    }
    if (failures > 0) return kExitFailure;
    std::cout << "hostbridge uninstall: " << p.slug << " removed\n";
    return kExitOk;
}

}  // namespace

const Subcommand kUninstall = {kCmd,    kHelp,        kSpecs, Subcommand::Needs::Install,
                               nullptr, run_uninstall};

}  // namespace hb::admin
