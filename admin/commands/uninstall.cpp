// `hostbridge uninstall`: stops and removes one install's units, binaries and
// config, and the client it dropped into the spool. The state dir (audit log,
// approved copies) stays unless --purge, which also removes the spool. The
// package's prerm runs it for every install it finds (packaging/debian/prerm).
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <iostream>

#include "admin/commands/commands.hpp"
#include "admin/commands/stale_containers.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/spool_setup.hpp"
#include "admin/install/systemd_user.hpp"
#include "admin/util/args.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/process.hpp"
#include "admin/util/slug.hpp"
#include "common/config.hpp"
#include "display/visible.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr std::string_view kCmd = "uninstall";

const char* const kHelp = R"(usage: hostbridge uninstall [--slug SLUG] [--purge]

Stops, disables and removes the install's systemd units (so the agent's
requests are no longer answered), brings down the containers whose bind
sources are the install's pins (stopped and removed, as compose down does;
it names each and prints the command that starts the stack again), then
removes its installed executor and parser, its run tree, its config
(bridge.json, policy.conf) and the client and AGENT.md it dropped into the
spool. The state dir (the audit log, approved copies of the trusted files,
service.log) is kept as a record.

  --slug SLUG   the install (default: the one whose project holds the cwd)
  --purge       also remove the state dir and the spool (requests, responses,
                archive and quarantine included)

Exit: 0 removed, 1 failed, 2 usage error.
)";

const OptionSpec kSpecs[] = {{"slug", true, false}, {"purge", false, false}};

// A container that bind-mounts the install's pins cannot start once the
// run tree is gone ("no such file or directory"; docs/COMPOSE.md, "Bind
// sources are pinned"), and nothing pins again after this: each is
// brought down as `podman-compose down` does (images and named volumes
// stay) and the command that makes them anew from the checkout's compose
// file is printed. True when none is left, so the run tree may go; the
// caller keeps it otherwise.
bool bring_down_pinned(const Config& c, const std::string& run_dir) {
    auto on_pins = containers_on_pins(c);
    if (!on_pins) {
        print_error(kCmd, "cannot ask the engine which containers bind-mount the pins under " +
                              run_dir + " (" + on_pins.error().message +
                              "); kept it, as such a container cannot start without it");
        return false;
    }
    if (on_pins->empty()) return true;
    std::cout << "these containers bind-mount the install's pins under " << visible(run_dir)
              << " and could not start again without them; brought down as `podman-compose "
                 "down` does (their images and named volumes are kept):\n";
    RunOptions options;
    options.timeout = std::chrono::seconds(60);
    for (const PinnedContainer& container : *on_pins) {
        auto rm = run_process({c.pins->engine, "rm", "-f", container.name}, options);
        if (rm && rm->ok()) {
            std::cout << "  " << (container.running ? "stopped and removed " : "removed ")
                      << visible(container.name) << "\n";
        }
    }
    std::string compose;
    for (const std::string& word : c.backend.argv) compose += shell_quote(word) + " ";
    std::cout << "start the stack again from the checkout's compose file (the agent could have "
                 "edited it: read it first):\n";
    print_fix("cd " + shell_quote(c.project_dir) + " && " + compose + "-p " +
              shell_quote(compose_project_of(c)) + " -f " + shell_quote(c.backend.file) + " up -d");
    auto left = containers_on_pins(c);
    if (left && left->empty()) return true;
    std::string names;
    for (const PinnedContainer& container : left ? *left : *on_pins) {
        names += " " + container.name;
    }
    print_error(kCmd, "container(s)" + names + " still bind-mount the pins under " + run_dir +
                          ", which is kept: remove them first");
    print_fix(c.pins->engine + " rm -f" + names);
    return false;
}

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
        auto disabled = systemctl->run({"disable", "--now", p.path_unit_name});
        auto stopped = systemctl->run({"stop", p.service_unit_name});
        if (disabled && disabled->ok() && stopped && stopped->ok()) {
            std::cout << "  stopped " << p.path_unit_name << " and " << p.service_unit_name
                      << ": the agent's requests are no longer answered\n";
        }
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
    // The run tree holds copies only (executor/run_tree.hpp): rebuilt per
    // command; and the pins' mount points, which go only once no container
    // names them.
    const std::string run_dir = config && !config->run_dir.empty() ? config->run_dir : p.run_dir;
    if (!config || !config->pins || config->pins->sources.empty() ||
        bring_down_pinned(*config, run_dir)) {
        removed(run_dir, remove_tree(run_dir));
        removed(p.config_dir, remove_tree(p.config_dir));
    } else {
        // The config too, so that this uninstall can run again and finish.
        std::cout << "kept the run tree and the config; once the engine answers and those "
                     "containers can go, run again:\n";
        print_fix(self_command() + " uninstall --slug " + p.slug);
        ++failures;
    }
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
