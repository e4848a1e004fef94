// `hostbridge install`: puts the bridge in front of a project, or brings an
// existing install up to date. Everything is validated before the first
// write; every item reports "no change" when it already is as it should be.
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <map>
#include <set>

#include "admin/commands/adopt_containers.hpp"
#include "admin/commands/commands.hpp"
#include "admin/commands/stale_containers.hpp"
#include "admin/compose/build_plan.hpp"
#include "admin/compose/compose_reader.hpp"
#include "admin/compose/compose_render.hpp"
#include "admin/compose/unpinned_binds.hpp"
#include "admin/install/agent_doc.hpp"
#include "admin/install/agent_manifest.hpp"
#include "admin/install/base_images.hpp"
#include "admin/install/config_write.hpp"
#include "admin/install/engine_user.hpp"
#include "admin/install/git.hpp"
#include "admin/install/install_options.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/policy_engine_guard.hpp"
#include "admin/install/spool_setup.hpp"
#include "admin/install/systemd_user.hpp"
#include "admin/install/tcb.hpp"
#include "admin/install/units.hpp"
#include "admin/install/versions.hpp"
#include "admin/util/args.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/paths.hpp"
#include "admin/util/process.hpp"
#include "admin/util/resolve_binary.hpp"
#include "admin/util/slug.hpp"
#include "client/embedded_client.hpp"
#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "common/policy.hpp"
#include "common/sha256.hpp"
#include "display/visible.hpp"
#include "engines/podman_compose/install.hpp"
#include "engines/registry_admin.hpp"
#include "engines/stack/install.hpp"
#include "ipc/inspect_wire.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr std::string_view kCmd = "install";
constexpr std::array<std::string_view, 4> kComposeNames = {
    "compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"};

// One line per item ("  bridge.json: no change"), counting real changes.
class Report {
  public:
    void item(std::string_view what, std::string_view status) {
        std::cout << "  " << visible(what) << ": " << visible(status) << "\n";
        if (status != "no change") ++changes_;
    }
    void note(std::string_view text) { std::cout << visible(text) << "\n"; }
    [[nodiscard]] int changes() const { return changes_; }

  private:
    int changes_ = 0;
};

// An error that ends the install with this exit code (2 only for usage).
struct Stop {
    int code;
    std::string sentence;
    std::vector<std::string> fixes;
};

Stop fail(std::string sentence, std::vector<std::string> fixes = {}) {
    return Stop{kExitFailure, std::move(sentence), std::move(fixes)};
}

bool has_control_chars(std::string_view s) {
    return std::any_of(s.begin(), s.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

class Installer {
  public:
    explicit Installer(InstallOptions options) : o_(std::move(options)) {}

    int run() {
        auto stop = run_steps();
        std::cout.flush();
        if (stop) {
            print_error(kCmd, stop->sentence);
            for (const auto& fix : stop->fixes) print_fix(fix, /*to_stderr=*/true);
            return stop->code;
        }
        return kExitOk;
    }

  private:
    using Step = std::optional<Stop> (Installer::*)();

    // The first step that stops the install stops the rest.
    std::optional<Stop> run_in_order(std::initializer_list<Step> steps) {
        for (Step step : steps) {
            if (auto s = (this->*step)()) return s;
        }
        return std::nullopt;
    }

    std::optional<Stop> run_steps() {
        // Everything is checked before anything is written.
        if (auto s = run_in_order({&Installer::check_project, &Installer::check_existing,
                                   &Installer::check_spool_links, &Installer::resolve_binaries,
                                   &Installer::read_services, &Installer::collect_tcb,
                                   &Installer::build_config}))
            return s;
        // --- writes ---
        std::cout << "hostbridge install: " << slug_ << " for " << visible(project_dir_) << "\n";
        if (compose_backend(backend_.kind)) {
            std::cout << "compose flavour: " << compose_flavour_name(backend_.flavour) << " ("
                      << flavour_how_ << ")\n";
            if (docker_compose(backend_) && engine_)
                std::cout << "docker: through " << engine_->user
                          << "'s rootless dockerd, status, health, logs, up, down and restart "
                             "run; rebuild and join-network are refused (docs/DOCKER.md)\n";
            else if (docker_compose(backend_))
                print_warning(kCmd,
                              "docker compose runs only through a docker engine user "
                              "(--engine-user): here every verb but ping is denied "
                              "(docs/DOCKER.md)");
        }
        if (o_.allow_root) {
            print_warning(kCmd,
                          "--allow-root lets the drain run as root; use it only on "
                          "throwaway machines and CI");
        } else if (::geteuid() == 0) {
            print_warning(kCmd,
                          "you are root, and the drain refuses to run as root unless "
                          "installed with --allow-root");
        }
        if (auto s = run_in_order({&Installer::write_dirs_and_spool, &Installer::write_pins,
                                   &Installer::write_rendered, &Installer::write_binaries,
                                   &Installer::write_config_files, &Installer::write_spool_files,
                                   &Installer::write_units, &Installer::write_record_and_audit,
                                   &Installer::enable_units, &Installer::adopt_containers}))
            return s;
        // Containers made before this install pinned their binds: named as
        // doctor names them (admin/commands/stale_containers.hpp).
        for (const ContainerFinding& found : stale_containers(config_, paths_)) {
            print_warning(kCmd, found.what);
            if (found.problem) print_fix(found.fix, /*to_stderr=*/true);
        }
        std::cout << (report_.changes() == 0
                          ? "hostbridge install: nothing changed\n"
                          : "hostbridge install: " + std::to_string(report_.changes()) +
                                " item(s) changed\n");
        return std::nullopt;
    }

    // --- checks ---

    std::optional<Stop> check_project() {
        auto dirs = host_dirs_from_env();
        if (!dirs) return fail(dirs.error().message);
        dirs_ = *dirs;
        auto canonical = canonical_path(o_.project_dir);
        if (!canonical) return fail("the project directory " + o_.project_dir + " does not exist");
        project_dir_ = *canonical;
        if (has_control_chars(project_dir_) || has_control_chars(dirs_.home)) {
            return fail("the project path " + project_dir_ +
                        " contains control characters, which systemd units cannot carry");
        }
        if (auto top = git_check_top(project_dir_); !top) return fail(top.error().message);
        // Asked before any write: an exclude entry that would have to go
        // outside the checkout or through a symlink stops the install here.
        auto ignored = git_is_ignored(project_dir_, o_.spool_rel);
        if (!ignored) return fail(ignored.error().message);
        spool_ignored_ = *ignored;
        slug_ = o_.slug.value_or(derive_slug(project_dir_));
        if (!is_valid_slug(slug_)) {
            return Stop{kExitUsage,
                        "the slug derived from " + project_dir_ + " is '" + slug_ +
                            "', which is not valid (^[a-z0-9][a-z0-9-]{0,62}$); pass --slug",
                        {}};
        }
        paths_ = install_paths(dirs_, slug_);
        spool_dir_ = project_dir_ + "/" + o_.spool_rel;
        return std::nullopt;
    }

    // A link planted on the way to the spool or as one of its directories
    // stops the install before its first write.
    std::optional<Stop> check_spool_links() {
        auto pinned = open_spool(project_dir_, o_.spool_rel);
        if (!pinned) return fail(spool_refusal(pinned.error().message));
        return std::nullopt;
    }

    std::optional<Stop> check_existing() {
        // One project, one bridge: two on the same spool would race for it
        // under two locks.
        for (const auto& other : installed_slugs(dirs_)) {
            if (other == slug_) continue;
            auto config = load_config(install_paths(dirs_, other).config_file);
            if (config && config->project_dir == project_dir_) {
                return fail("the project " + project_dir_ + " already has a bridge, " + other +
                                "; re-run install with --slug " + other +
                                ", or uninstall that one first",
                            {self_command() + " uninstall --slug " + other});
            }
        }
        auto existing = read_file_if_exists(paths_.config_file);
        if (!existing) return fail(existing.error().message);
        if (!existing->has_value()) return std::nullopt;
        auto old = parse_config(**existing);
        if (!old) {
            if (!o_.force) {
                return fail("the existing install " + slug_ + " cannot be read (" +
                            old.error().message + "); pass --force to replace it");
            }
            taking_over_ = true;
            return std::nullopt;
        }
        if (old->project_dir != project_dir_) {
            if (!o_.force) {
                return fail("the slug " + slug_ + " is already installed for " + old->project_dir +
                            "; a second project must not take over its bridge: pass another "
                            "--slug, or --force to move the bridge to " +
                            project_dir_);
            }
            taking_over_ = true;
            print_warning(kCmd, "--force: the bridge " + slug_ + " moves from " + old->project_dir +
                                    " to " + project_dir_);
            return std::nullopt;
        }
        previous_ = std::move(*old);
        return std::nullopt;
    }

    std::optional<Stop> resolve_binaries() {
        const ResolveEnv env = resolve_env_from_process();
        backend_.kind =
            o_.backend.value_or(*backend_kind_named(o_.stack_bin ? "stack" : "compose"));
        if (stack_backend(backend_.kind)) {
            auto stack = resolve_binary(*o_.stack_bin, env);
            if (!stack) return fail("--stack-bin: " + stack.error().message);
            backend_.argv = {*stack};
        } else {
            std::vector<std::string> words;
            if (o_.compose_cmd) {
                words = *o_.compose_cmd;
            } else if (auto found = exec::default_compose_command(compose_host(env))) {
                words = *found;
            } else {
                return fail(
                    "no compose command found: neither `docker compose` nor podman-compose "
                    "works here; pass --compose-cmd");
            }
            auto first = resolve_binary(words[0], env);
            if (!first) return fail("--compose-cmd: " + first.error().message);
            words[0] = *first;
            backend_.argv = words;
            // The executor picks rows by the flavour recorded in bridge.json.
            const exec::ComposeFlavourRead read = exec::read_compose_flavour(
                words, static_cast<bool>(project_relative(project_dir_, words[0])),
                compose_host(env));
            if (read.compose_v1)
                return fail(
                    visible(command_line(words)) +
                        " is compose v1 (docker-compose 1.x, such as Debian 12's 1.29), "
                        "which hostbridge does not support: its commands and output are "
                        "not compose v2's. Supported: podman-compose, and docker compose v2 "
                        "(Debian 13's docker-compose 2.26.1, as `docker compose`, through a "
                        "docker engine user: docs/DOCKER.md)",
                    {"hostbridge install ... --compose-cmd podman-compose"});
            backend_.flavour =
                *compose_flavour_named(read.podman_compose ? "podman-compose" : "docker");
            flavour_how_ = read.how;
        }
        if (o_.network) {
            std::optional<std::string> engine;
            if (o_.engine) {
                auto resolved = resolve_binary(*o_.engine, env);
                if (!resolved) return fail("--engine: " + resolved.error().message);
                engine = *resolved;
            } else {
                for (const char* name : {"podman", "docker"}) {
                    if (auto found = find_on_path(name, env.path_var)) {
                        engine = *found;
                        break;
                    }
                }
                if (!engine)
                    return fail("no container engine found for join-network; pass --engine");
            }
            join_network_ = JoinNetwork{*engine, *o_.network, *o_.agent_container};
        }
        if (o_.engine_user) {
            // docker compose's is a docker engine user's socket (docs/DOCKER.md).
            auto engine = engine_identity_of(*o_.engine_user, docker_compose(backend_));
            if (!engine) return fail("--engine-user: " + engine.error().message);
            engine_ = std::move(*engine);
            engine_->relay = paths_.engine_relay;
            struct stat st {};
            if (::stat(engine_->socket.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
                std::cout << "note: " << engine_->user << "'s engine socket " << engine_->socket
                          << " is not there for you yet: every verb fails until its service "
                             "runs (`hostbridge engine setup` as root; docs/ENGINE-USER.md)\n";
        }
        // A helper binary on PATH, never one inside the checkout: the agent
        // wrote that (bridge.json refuses it too). Empty when there is none.
        const auto outside_project = [&](const char* name) {
            auto found = find_on_path(name, env.path_var);
            return found && !path_is_within(*found, project_dir_) ? *found : std::string();
        };
        // The engine the build step runs (engines/podman_compose/rows.cpp): the one
        // the compose CLI drives.
        if (compose_backend(backend_.kind)) {
            const bool podman = podman_compose(backend_);
            build_engine_ = outside_project(podman ? "podman" : "docker");
            if (podman) buildah_ = outside_project("buildah");
        }
        if (stack_backend(backend_.kind) && o_.stack_project)
            stack_engine_ = outside_project("podman");
        if (auto run = find_on_path("systemd-run", env.path_var)) systemd_run_ = *run;
        notify_send_ = outside_project("notify-send");
        for (const auto& name :
             {std::string("hostbridge-executor"), std::string("hostbridge-parser"),
              std::string("hostbridge-engine-relay"), std::string("hostbridge-snapshot"),
              std::string("hostbridge-pin")}) {
            auto source = bundled_binary(name);
            if (!source) {
                auto where = bundled_binary_dirs();
                return fail("cannot find " + name + " in " + where[0] + " or " + where[1] +
                            "; build it or reinstall hostbridge");
            }
            built_binaries_[name] = *source;
        }
        if (embedded::kClientScript.empty()) {
            return fail(
                "this hostbridge was built without the agent client "
                "(client/hostbridge-request.sh)");
        }
        return std::nullopt;
    }

    // What the compose room's install-time reading asks of this host
    // (engines/podman_compose/install.hpp): PATH, and a command's words
    // within 15 s.
    static exec::InstallHost compose_host(const ResolveEnv& env) {
        return {[path = env.path_var](std::string_view name) { return find_on_path(name, path); },
                [](const std::vector<std::string>& argv) -> std::optional<std::string> {
                    RunOptions options;
                    options.timeout = std::chrono::seconds(15);
                    auto ran = run_process(argv, options);
                    if (!ran || !ran->ok()) return std::nullopt;
                    return ran->out + ran->err;
                }};
    }

    // The pin a path had in the previous install of this project.
    const TcbPin* previous_pin(const std::string& rel) const {
        if (!previous_) return nullptr;
        for (const auto& pin : previous_->tcb) {
            if (pin.path == rel) return &pin;
        }
        return nullptr;
    }

    std::optional<Stop> read_services() {
        // The compose file.
        if (o_.compose_file) {
            auto rel = project_relative(project_dir_, *o_.compose_file);
            if (!rel) return fail("--compose-file: " + rel.error().message);
            compose_rel_ = *rel;
        } else {
            for (auto name : kComposeNames) {
                struct stat st {};
                if (::lstat((project_dir_ + "/" + std::string(name)).c_str(), &st) == 0) {
                    compose_rel_ = std::string(name);
                    break;
                }
            }
        }
        if (compose_rel_.empty()) {
            if (compose_backend(backend_.kind) || !o_.services) {
                return fail("no compose file in " + project_dir_ +
                            " (looked for compose.yaml, compose.yml, docker-compose.yaml, "
                            "docker-compose.yml); pass --compose-file" +
                            std::string(stack_backend(backend_.kind) ? " or --services" : ""));
            }
        }
        ComposeModel model;
        if (!compose_rel_.empty()) {
            const std::string compose_abs = project_dir_ + "/" + compose_rel_;
            // An unapproved edit must not steer what install pins or bridges:
            // read a changed, pinned file through its approved copy.
            FileSource source =
                [this](const std::string& abs) -> Result<std::optional<std::string>> {
                auto rel = project_relative(project_dir_, abs);
                if (!rel) return read_file_if_exists(abs, 16u << 20);
                auto snap = snapshot_tcb_file(project_dir_, *rel);
                if (!snap) return snap.error();
                // collect_tcb pins this very snapshot: what is rendered is
                // what is pinned, even if the file changes in between.
                read_snapshots_.emplace(*rel, *snap);
                const TcbPin* pin = previous_pin(*rel);
                if (pin != nullptr && pin->sha256 != snap->sha256) {
                    read_from_approved_.insert(*rel);
                    return read_approved_copy(paths_, *rel);
                }
                return snap->content;
            };
            // Each service of the rendered copy carries the install's label.
            const std::string labelled =
                compose_backend(backend_.kind) ? compose_project_for(compose_abs) : std::string();
            auto read = read_compose(compose_abs, source, project_dir_, pin_run_dir(), labelled);
            if (!read) return fail(read.error().message);
            model = std::move(*read);
            if (auto s = check_docker_files(model)) return s;
            if (auto s = check_unpinned(model)) return s;
            if (compose_backend(backend_.kind)) backend_.file = compose_abs;
        }
        for (const auto& rel : read_from_approved_) {
            std::cout << "note: " << visible(rel)
                      << " changed since it was pinned: read from its approved "
                      << "copy, not as it is now\n";
        }
        for (const auto& warning : model.warnings) {
            print_warning(kCmd, warning);
        }
        services_ = o_.services.value_or(model.services);
        if (o_.buildable) {
            buildable_ = *o_.buildable;
        } else {
            for (const auto& b : model.buildable) {
                if (std::binary_search(services_.begin(), services_.end(), b))
                    buildable_.push_back(b);
            }
        }
        for (const auto& b : buildable_) {
            if (!std::binary_search(services_.begin(), services_.end(), b)) {
                return fail("--buildable names " + b + ", which is not one of the services (" +
                            std::to_string(services_.size()) + " found)");
            }
        }
        referenced_ = model.referenced_files;
        render_ = plan_render(project_dir_, model);
        compose_builds_ = model.builds;
        return std::nullopt;
    }

    // docker through its engine user: builds from snapshots screened as
    // BuildKit reads (docs/DOCKER.md), but no bind source (nothing pins one
    // in rootless dockerd's namespace) and no other file of the checkout.
    std::optional<Stop> check_docker_files(const ComposeModel& model) {
        if (!docker_compose(backend_) || !engine_) return std::nullopt;
        std::string other;  // a file compose reads that is no build's context
        for (const auto& file : model.referenced_files) {
            const bool context =
                std::any_of(model.builds.begin(), model.builds.end(), [&](const ComposeBuild& b) {
                    return file ==
                           (b.context == "." ? project_dir_ : project_dir_ + "/" + b.context);
                });
            if (!context && other.empty()) other = file;
        }
        if (!model.checkout_binds.empty() || !other.empty()) {
            return fail(
                "on docker, hostbridge runs services from images and builds, with no other "
                "file of the checkout: this compose file has a bind mount or another file it "
                "names (" +
                visible(other.empty() ? std::string("a bind mount") : other) +
                "). Not yet supported on docker: bind mounts (pinning their sources in rootless "
                "dockerd's namespace); docs/DOCKER.md");
        }
        // BuildKit reads BUILDKIT_* build arguments as its own options:
        // BUILDKIT_SYNTAX runs an image as the frontend (docs/DOCKER.md).
        for (const auto& build : model.builds) {
            for (const auto& arg : build.args) {
                std::string head = arg.substr(0, 9);
                for (char& c : head)
                    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                if (head == "buildkit_") {
                    return fail(build.service + "'s build.args names " + visible(arg) +
                                ": BuildKit reads BUILDKIT_ arguments as its own options "
                                "(BUILDKIT_SYNTAX runs an image as the frontend); "
                                "docs/DOCKER.md");
                }
            }
        }
        return std::nullopt;
    }

    // Compose bind sources below the checkout root that nothing pins are
    // refused unless accepted by name (admin/compose/unpinned_binds.hpp): by this
    // install's --unpinned-bind, or in bridge.json by an earlier one.
    std::optional<Stop> check_unpinned(const ComposeModel& model) {
        if (!compose_backend(backend_.kind)) return std::nullopt;
        if (!pin_run_dir().empty()) {
            if (!o_.unpinned_binds.empty())
                std::cout << "note: --unpinned-bind is not needed here: rootless podman's bind "
                             "sources are pinned\n";
            return std::nullopt;
        }
        std::vector<std::string> accepted = o_.unpinned_binds;
        if (previous_ && previous_->project_dir == project_dir_) {
            accepted.insert(accepted.end(), previous_->unpinned_binds.begin(),
                            previous_->unpinned_binds.end());
        }
        auto checked = check_unpinned_binds(model.checkout_binds, accepted, backend_);
        if (!checked) return fail(checked.error().message);
        unpinned_binds_ = checked->accepted;
        for (const auto& source : unpinned_binds_) {
            std::cout << "note: bind source " << visible(source)
                      << " is accepted unpinned: the engine resolves it at every start, where the "
                         "agent can swap it for a link (docs/COMPOSE.md)\n";
        }
        return std::nullopt;
    }

    std::optional<Stop> collect_tcb() {
        std::set<std::string> rels;
        // A binary the bridge runs from inside the project is trusted code.
        // Pinned by the path that runs (canonical dir, own last component):
        // pinning a symlink's target would let the agent repoint the link.
        std::vector<std::string> binaries = {backend_.argv[0]};
        if (join_network_) binaries.push_back(join_network_->engine);
        for (const auto& binary : binaries) {
            if (path_is_within(binary, project_dir_)) {
                rels.insert(binary.substr(project_dir_.size() + 1));
            }
        }
        const std::string compose_dir = compose_rel_.find('/') == std::string::npos
                                            ? ""
                                            : compose_rel_.substr(0, compose_rel_.rfind('/') + 1);
        if (!compose_rel_.empty()) rels.insert(compose_rel_);
        if (stack_backend(backend_.kind)) {
            // A stack script may run compose without -f: every file a compose
            // tool reads by default is pinned, as absent when missing.
            for (const std::string& dir : {std::string(), compose_dir}) {
                for (auto name : kComposeDefaultFiles) rels.insert(dir + std::string(name));
            }
        }
        if (!compose_dir.empty()) rels.insert(compose_dir + ".env");
        for (const auto& abs : referenced_) {
            auto rel = project_relative(project_dir_, abs);
            if (rel) {
                rels.insert(*rel);
            } else {
                std::cout
                    << "note: " << visible(abs)
                    << " lies outside the project, where the agent cannot write; not pinned\n";
            }
        }
        rels.insert(".env");
        for (const auto& extra : o_.tcb) {
            auto rel = project_relative(project_dir_, extra);
            if (!rel) return fail("--tcb: " + rel.error().message);
            rels.insert(*rel);
            explicit_tcb_.insert(*rel);
        }
        for (const auto& rel : rels) {
            auto cached = read_snapshots_.find(rel);
            auto snap = cached != read_snapshots_.end() ? Result<TcbSnapshot>(cached->second)
                                                        : snapshot_tcb_file(project_dir_, rel);
            if (!snap) {
                return fail("trusted file " + snap.error().message +
                            "; the integrity gate refuses it: replace it with a regular file");
            }
            if (!snap->content && explicit_tcb_.count(rel) > 0) {
                print_warning(kCmd, "--tcb " + rel + " does not exist; it is pinned as absent");
            }
            snapshots_.push_back(std::move(*snap));
        }
        warn_unpinned_stack_reads(rels);
        return std::nullopt;
    }

    // Commands run from the run tree, which holds pinned files only: a file
    // of the project that the stack script names but nobody pinned is either
    // missing there or, read from the checkout, the agent's.
    void warn_unpinned_stack_reads(const std::set<std::string>& pinned) const {
        if (!stack_backend(backend_.kind)) return;
        const std::string& script = backend_.argv.front();
        if (!path_is_within(script, project_dir_)) return;
        const std::string rel = script.substr(project_dir_.size() + 1);
        for (const auto& snap : snapshots_) {
            if (snap.rel != rel || !snap.content) continue;
            for (const std::string& name :
                 exec::unpinned_files_named(project_dir_, *snap.content, pinned)) {
                print_warning(kCmd, "the stack script names " + name +
                                        ", a file of the project that is not pinned (a " +
                                        "best-effort scan); commands run from the approved " +
                                        "copies, so pin it with --tcb " + name +
                                        " if the stack reads it");
            }
        }
    }

    // The compose project name (admin/compose/build_plan.hpp,
    // install_project_name). An install that recorded another one keeps it:
    // its containers, named volumes ({project}_{vol}) and default network
    // carry it, and a new name would leave them behind silently. It moves
    // only with --rename-project, after the steps printed here.
    std::string kept_compose_project(const std::string& compose_file) const {
        if (!previous_ || !compose_backend(previous_->backend.kind)) return {};
        if (previous_->build && !previous_->build->project.empty())
            return previous_->build->project;
        if (previous_->settle) return previous_->settle->project;
        // Such an install ran compose without -p: podman-compose named the
        // project after the rendered file's directory, which is named like
        // the checkout's (executor/run_tree.hpp).
        const std::string dir = compose_file.substr(0, compose_file.rfind('/'));
        return compose_project_name(dir.substr(dir.rfind('/') + 1));
    }

    // The name choose_compose_project() settles on, known before the
    // compose file is read.
    std::string compose_project_for(const std::string& compose_file) const {
        const std::string kept = kept_compose_project(compose_file);
        if (kept.empty() || o_.rename_project)
            return install_project_name(project_dir_, compose_file);
        return kept;
    }

    std::optional<Stop> choose_compose_project() {
        const std::string own = install_project_name(project_dir_, backend_.file);
        const std::string kept = kept_compose_project(backend_.file);
        compose_project_ = own;
        if (kept.empty() || kept == own) {
            note_hand_run_stack(own);
            // "no change" once recorded: a re-install that changes nothing says so.
            report_.item("compose project " + own + " (run compose by hand with -p " + own + ")",
                         kept == own ? "no change" : "named");
            return refuse_foreign_containers(own, false);
        }
        std::string compose;
        for (const std::string& word : backend_.argv)
            compose += (compose.empty() ? "" : " ") + shell_quote(word);
        const std::string file = shell_quote(backend_.file);
        if (o_.rename_project) {
            report_.item("compose project " + own, "renamed from " + kept + " (--rename-project)");
            print_warning(kCmd, "the containers, named volumes and network of the project " + kept +
                                    " are left as they are; remove them once moved: " + compose +
                                    " -p " + kept + " -f " + file + " down");
            return refuse_foreign_containers(own, false);
        }
        compose_project_ = kept;
        report_.item("compose project " + kept, "kept from the previous install");
        print_warning(
            kCmd,
            "this install keeps the compose project name " + kept +
                ", which podman-compose run by hand without -p in another checkout with the same "
                "directory name also derives: the agent's rebuild would replace that project's "
                "image and container (issue 44). To move it to " +
                own + " (docs/COMPOSE.md, \"The project's name\"):");
        std::cout << "    " << compose << " -p " << kept << " -f " << file << " down\n"
                  << "    # copy each named volume that holds data: podman volume export " << kept
                  << "_VOL | podman volume import " << own << "_VOL (create it first)\n"
                  << "    " << self_command() << " install --slug " << slug_
                  << " --rename-project ...the options it was installed with...\n"
                  << "    # then --network " << own << "_default for join-network, if it named "
                  << kept << "_default\n";
        return refuse_foreign_containers(kept, true);
    }

    // Containers of the project `name` that compose created from another
    // directory than the checkout's compose dir or its run tree copy
    // (podman-compose 1.0.3 labels each com.docker.compose.project.working_dir):
    // another checkout's, run by hand. The agent's rebuild would remove them
    // and its logs read them (issue 44 item 3). Refused for a new name; a kept
    // one is only warned about, so an upgrade still lands. The label is no
    // boundary (the agent's image can carry it): this catches the person's
    // own clash, not an attack.
    // The containers of the compose project `name` as (name, the directory
    // podman-compose made each from: its com.docker.compose.project.working_dir
    // label); nullopt when they cannot be listed, or there is no podman-compose
    // on the person's own engine to ask.
    struct ListedContainer {
        std::string name;
        std::string from;           // its working_dir label
        std::string install_label;  // its kInstallLabel, or empty
    };
    using Listed = std::vector<ListedContainer>;
    std::optional<Listed> list_compose_project(const std::string& name) const {
        if (build_engine_.empty() || engine_ || !podman_compose(backend_)) return std::nullopt;
        RunOptions options;
        options.timeout = std::chrono::seconds(20);
        // HOME from the password database, as the executor's rows get it
        // (executor/runner.cpp, child_environment): rootless podman finds its
        // store there, whatever HOME install was run with.
        if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr)
            options.env_set.push_back(std::string("HOME=") + pw->pw_dir);
        auto listed = run_process({build_engine_, "ps", "-a", "--filter",
                                   "label=com.docker.compose.project=" + name, "--format",
                                   "{{.Names}}\t{{index .Labels "
                                   "\"com.docker.compose.project.working_dir\"}}\t{{index "
                                   ".Labels \"" +
                                       std::string(kInstallLabel) + "\"}}"},
                                  options);
        if (!listed || !listed->ok()) {
            print_warning(kCmd, "cannot list the containers of the compose project " + name);
            return std::nullopt;
        }
        Listed out;
        std::size_t at = 0;
        while (at < listed->out.size()) {
            std::size_t end = listed->out.find('\n', at);
            if (end == std::string::npos) end = listed->out.size();
            const std::string line = listed->out.substr(at, end - at);
            at = end + 1;
            const std::size_t tab = line.find('\t');
            const std::size_t tab2 = tab == std::string::npos ? tab : line.find('\t', tab + 1);
            if (tab2 != std::string::npos)
                out.push_back({line.substr(0, tab), line.substr(tab + 1, tab2 - tab - 1),
                               line.substr(tab2 + 1)});
        }
        return out;
    }

    // A stack the person started by hand in the checkout, without -p, runs
    // as the basename's project, not the bridge's: say how to move it, or
    // the bridge's verbs would find no container.
    void note_hand_run_stack(const std::string& own) const {
        const std::string dir = backend_.file.substr(0, backend_.file.rfind('/'));
        const std::string plain = compose_project_name(dir.substr(dir.rfind('/') + 1));
        if (plain.empty() || plain == own) return;
        auto listed = list_compose_project(plain);
        if (!listed) return;
        std::string names;
        for (const auto& c : *listed)
            if (c.from == dir) names += (names.empty() ? "" : ", ") + visible(c.name);
        if (names.empty()) return;
        std::cout << "note: the stack runs by hand as the compose project " << plain << " ("
                  << names << "), not as the bridge's " << own
                  << " (docs/COMPOSE.md, \"The project's name\"): bring it down, then up "
                     "through the bridge, which labels what it makes:\n    podman-compose -f "
                  << shell_quote(backend_.file) << " down\n";
    }

    std::optional<Stop> refuse_foreign_containers(const std::string& name, bool kept) {
        auto listed = list_compose_project(name);
        if (!listed) return std::nullopt;
        const std::string dir = backend_.file.substr(0, backend_.file.rfind('/'));
        const std::string base = project_dir_.substr(project_dir_.rfind('/') + 1);
        std::string tree = paths_.run_dir + "/" + base + dir.substr(project_dir_.size());
        // podman-compose records the realpath() of the file's directory.
        if (char* real = ::realpath(tree.c_str(), nullptr); real != nullptr) {
            tree = real;
            std::free(real);
        }
        std::vector<std::string> foreign;
        std::string unlabelled;
        for (const auto& c : *listed) {
            if (c.from != dir && c.from != tree)
                foreign.push_back(visible(c.name) + " (from " + visible(c.from) + ")");
            else if (c.install_label != name)
                unlabelled += " " + shell_quote(c.name);
        }
        // Made before the rendered file labelled them (an upgrade), or by
        // hand with -p: the bridge no longer reads them, and podman-compose
        // 1.0.3's up starts a container whose name is taken as it is.
        if (!unlabelled.empty()) {
            print_warning(kCmd,
                          "containers of the compose project " + name + " lack the label " +
                              std::string(kInstallLabel) + "=" + name +
                              " the bridge's compose runs set (docs/COMPOSE.md, \"The project's "
                              "name\"): its status, logs and settle step do not see them, and "
                              "up keeps them as they are. Remove them once; the next up makes "
                              "them again, labelled:");
            std::cout << "    " << shell_quote(build_engine_) << " rm -f" << unlabelled << "\n";
        }
        if (foreign.empty()) return std::nullopt;
        std::string names;
        for (const auto& f : foreign) names += (names.empty() ? "" : ", ") + f;
        const std::string what =
            "the compose project " + name +
            " already has containers this checkout did not make: " + names +
            ". The agent's rebuild would replace them and its logs read them. Run that other "
            "project by hand with its own name (podman-compose -p OTHER-NAME ...), after "
            "podman-compose -p " +
            name + " down in its directory";
        if (kept) {
            print_warning(kCmd, what);
            return std::nullopt;
        }
        return fail(what);
    }

    std::optional<Stop> build_config() {
        Config& c = config_;
        c.slug = slug_;
        c.project_dir = project_dir_;
        c.spool_dir = spool_dir_;
        c.state_dir = paths_.state_dir;
        c.run_dir = paths_.run_dir;
        c.policy_file = paths_.policy_file;
        c.parser = paths_.parser;
        c.snapshot = paths_.snapshot;
        c.allow_root = o_.allow_root;
        c.accept_uncontained_engine = o_.accept_uncontained_engine;
        c.file_mode = o_.file_mode;
        c.agent_gid = o_.agent_gid;
        c.backend = backend_;
        c.services = services_;
        c.buildable = buildable_;
        for (const auto& snap : snapshots_) {
            const TcbPin* pin = previous_pin(snap.rel);
            // Never re-pin a file that changed: only `approve`, after a diff, does.
            c.tcb.push_back(pin != nullptr ? *pin : TcbPin{snap.rel, snap.sha256});
        }
        for (const auto& file : render_.files) c.rendered.push_back({file.rel, file.sha256});
        c.checkout_paths = render_.checkout_paths;
        c.unpinned_binds = unpinned_binds_;
        c.engine = engine_;
        if (!pin_run_dir().empty()) {
            c.pins = BindPins{build_engine_, paths_.pin, render_.pinned_sources};
            if (!c.pins->sources.empty() && previous_ && !previous_->pins) {
                std::cout << "note: bind sources of the checkout are pinned from now on "
                             "(docs/COMPOSE.md); a container created before still names the "
                             "checkout path and is resolved by it at each start: `hostbridge "
                             "doctor --slug "
                          << slug_ << "` lists each to remove\n";
            }
        }
        c.limits.mutating = o_.rate_limit;
        c.limits.read_only = o_.read_rate_limit;
        c.limits.ttl_seconds = o_.ttl_seconds;
        c.limits.max_held = o_.max_held;
        c.drain.linger_seconds = o_.linger_seconds;
        // No option sets these: a re-install keeps what the person wrote by hand.
        if (previous_) {
            c.audit_budget = previous_->audit_budget;
            c.notify_command = previous_->notify_command;
        }
        int longest = 0;
        for (const auto& [verb, seconds] : o_.verb_timeouts) {
            if (verb == "default") {
                c.timeouts.default_seconds = seconds;
            } else if (verb == "rebuild") {
                c.timeouts.rebuild_seconds = seconds;
            } else {
                Verb v = *verb_from_name(verb);
                auto& per = c.timeouts.per_verb;
                per.erase(std::remove_if(per.begin(), per.end(),
                                         [&](const auto& p) { return p.first == v; }),
                          per.end());
                per.emplace_back(v, seconds);
            }
        }
        std::sort(c.timeouts.per_verb.begin(), c.timeouts.per_verb.end());
        longest = std::max(c.timeouts.default_seconds, c.timeouts.rebuild_seconds);
        for (const auto& p : c.timeouts.per_verb) longest = std::max(longest, p.second);
        // The unit's start timeout must leave room for the longest verb, or
        // the drain would never take that verb up (docs/ARCHITECTURE.md, drain step 7).
        c.drain.time_budget_seconds = std::max(1800, longest + c.drain.linger_seconds + 60);
        c.systemd.enabled = !o_.no_systemd;
        c.systemd.systemd_run = systemd_run_;
        c.systemd.notify_send = notify_send_;
        c.join_network = join_network_;
        if (compose_backend(backend_.kind)) {
            if (!o_.build_contexts.empty())
                return fail(
                    "--build-context is for the stack backend: with compose, each "
                    "service's context comes from the compose file");
            if (auto stop = choose_compose_project()) return stop;
            std::vector<std::string> notes;
            c.build =
                plan_builds({project_dir_, backend_.file, podman_compose(backend_), build_engine_,
                             &compose_builds_, &buildable_, previous_ ? &previous_->build : nullptr,
                             buildah_, compose_project_},
                            notes);
            for (const auto& note : notes) print_warning(kCmd, note);
        } else if (!o_.build_contexts.empty()) {
            auto builds = plan_stack_builds(o_.build_contexts, o_.containerfiles, buildable_,
                                            previous_ ? &previous_->build : nullptr);
            if (!builds) return fail(builds.error().message);
            c.build = std::move(*builds);
        }
        if (c.build) {
            // What a build's FROM and COPY --from may name (admin/install/base_images.hpp).
            BaseImagePlan bases =
                plan_base_images(project_dir_, *c.build, previous_ ? &previous_->build : nullptr,
                                 o_.base_images, o_.dropped_base_images);
            c.build->base_images = bases.images;
            for (const auto& note : bases.notes) print_warning(kCmd, note);
            for (const auto& image : bases.dropped)
                std::cout << "base image taken off the list: " << visible(image) << "\n";
            if (bases.older_install) {
                std::cout << "base images: this install is older than the list, and none is "
                             "taken from its Containerfiles (the agent writes them); list each "
                             "a build may name with --base-image, with the options it was "
                             "installed with (docs/BUILDS.md, \"What a build may name\")\n";
            }
            std::cout << "base images a build may name:";
            if (bases.images.empty())
                std::cout << " none (only its stages, scratch and the "
                             "services' images)";
            for (const auto& image : bases.images) std::cout << " " << visible(image);
            std::cout << "\n";
        }
        // docker's, only through its engine user (docs/DOCKER.md; e2e_bridge_docker).
        if ((podman_compose(backend_) || (docker_compose(backend_) && engine_)) &&
            !build_engine_.empty()) {
            // Verified outcomes (engines/podman/settle.hpp): the engine that runs
            // the project's containers is asked about them after each start.
            // Only where it was tried on the real engine (tests/e2e/settle.sh:
            // podman); docker's answers stay the exit code alone.
            c.settle = SettleSettings{build_engine_, compose_project_, 30};
            c.settle->definitions = bridged_definitions(render_, c.services);
        }
        // A stack that labels its containers as compose does (docs/COMPOSE.md,
        // "A stack's services"): the same rows find them, on podman.
        if (stack_backend(backend_.kind) && o_.stack_project) {
            if (stack_engine_.empty())
                return fail(
                    "--stack-project needs podman on PATH, outside the project: the "
                    "executor asks it about the stack's containers");
            c.settle = SettleSettings{stack_engine_, *o_.stack_project, 30};
        }
        if (c.settle && previous_ && previous_->settle)
            c.settle->seconds = previous_->settle->seconds;
        config_text_ = serialize_config(c);
        // The executor reads bridge.json strictly; never write one it refuses.
        auto reparsed = parse_config(config_text_);
        if (!reparsed)
            return fail("the configuration would be invalid: " + reparsed.error().message);
        return std::nullopt;
    }

    // --- writes ---

    std::optional<Stop> write_dirs_and_spool() {
        for (const auto& [dir, mode] : {std::pair{paths_.config_dir, 0700},
                                        {paths_.state_dir, 0700},
                                        {paths_.lib_dir, 0755},
                                        {paths_.unit_dir, 0755}}) {
            if (auto made = make_dirs(dir, static_cast<mode_t>(mode)); !made) {
                return fail(made.error().message);
            }
        }
        auto changes = ensure_spool(project_dir_, o_.spool_rel, o_.agent_gid);
        if (!changes) return fail(changes.error().message);
        report_.item("spool " + spool_dir_, changes->empty() ? "no change"
                                                             : std::to_string(changes->size()) +
                                                                   " dir(s) created or fixed");
        for (const auto& change : *changes)
            std::cout << "    " << visible(change.path) << ": " << visible(change.what) << "\n";
        if (spool_ignored_) {
            report_.item("spool ignored by git", "no change");
        } else {
            auto exclude = git_exclude(project_dir_, o_.spool_rel);
            if (!exclude) return fail(exclude.error().message);
            auto again = git_is_ignored(project_dir_, o_.spool_rel);
            if (!again || !*again) {
                return fail("git still does not ignore " + o_.spool_rel + " after adding it to " +
                            *exclude + " (does a .gitignore rule re-include it?)");
            }
            report_.item("spool ignored by git", "added to " + *exclude);
        }
        if (auto tracked = git_tracks_under(project_dir_, o_.spool_rel); tracked && *tracked) {
            print_warning(
                kCmd, "git tracks files under " + o_.spool_rel + "; remove them from the index:");
            print_fix("git -C " + shell_quote(project_dir_) + " rm -r --cached -- " +
                          shell_quote(o_.spool_rel),
                      true);
        }
        return std::nullopt;
    }

    std::optional<Stop> write_pins() {
        if (taking_over_) {
            if (auto removed = remove_tree(paths_.approved_dir); removed && *removed) {
                report_.item("approved copies of the previous project", "removed");
            }
        }
        for (const auto& snap : snapshots_) {
            const TcbPin* pin = previous_pin(snap.rel);
            const std::string label = "pin " + snap.rel;
            if (pin != nullptr && pin->sha256 != snap.sha256) {
                report_.item(label,
                             "CHANGED since it was pinned; not re-pinned (review and "
                             "approve it with `hostbridge approve`)");
                needs_approval_ = true;
                continue;
            }
            // Self-heal a lost approved copy of an unchanged file.
            auto copy = read_approved_copy(paths_, snap.rel);
            bool copy_ok = copy && copy->has_value() == snap.content.has_value() &&
                           (!snap.content || **copy == *snap.content);
            if (!copy_ok) {
                if (auto stored = store_approved_copy(paths_, snap); !stored) {
                    return fail(stored.error().message);
                }
            }
            if (pin == nullptr) {
                report_.item(label, snap.content ? "pinned" : "pinned as absent");
            } else {
                report_.item(label, copy_ok ? "no change" : "approved copy restored");
            }
        }
        if (previous_) {
            for (const auto& pin : previous_->tcb) {
                bool kept = std::any_of(snapshots_.begin(), snapshots_.end(),
                                        [&](const auto& s) { return s.rel == pin.path; });
                if (kept) continue;
                (void)remove_file(approved_copy_path(paths_, pin.path));
                report_.item("pin " + pin.path, "no longer pinned");
            }
        }
        if (needs_approval_) {
            std::cout
                << "Trusted files changed since they were pinned; review and approve them with:\n";
            print_fix(self_command() + " approve --slug " + slug_);
        }
        return std::nullopt;
    }

    // The rendered compose files the run tree holds instead of the approved
    // copies (admin/compose/compose_render.hpp).
    std::optional<Stop> write_rendered() {
        std::vector<std::string> stale;
        if (previous_) {
            for (const auto& pin : previous_->rendered) stale.push_back(pin.path);
        }
        auto stored = store_rendered(paths_, render_, stale);
        if (!stored) return fail(stored.error().message);
        std::string names;
        for (const auto& file : render_.files) names += (names.empty() ? "" : ", ") + file.rel;
        if (!render_.files.empty() || *stored != 0) {
            report_.item("rendered " + (names.empty() ? std::string("compose files") : names),
                         *stored == 0 ? "no change" : "written for the run tree");
        }
        return std::nullopt;
    }

    std::optional<Stop> write_binaries() {
        for (const auto& [name, source] : built_binaries_) {
            auto content = read_file_if_exists(source, 256u << 20);
            if (!content || !content->has_value()) return fail("cannot read " + source);
            auto wrote = write_file_if_changed(paths_.lib_dir + "/" + name, **content, 0755);
            if (!wrote) return fail(wrote.error().message);
            record_.binaries[name] = common::sha256_hex(**content);
            report_.item(paths_.lib_dir + "/" + name, outcome_word(*wrote));
        }
        return std::nullopt;
    }

    std::optional<Stop> write_config_files() {
        auto wrote = write_file_if_changed(paths_.config_file, config_text_, 0644);
        if (!wrote) return fail(wrote.error().message);
        report_.item(paths_.config_file, outcome_word(*wrote));
        auto policy = read_file_if_exists(paths_.policy_file);
        if (!policy)
            return fail("cannot check " + paths_.policy_file + ": " + policy.error().message);
        // Accepted by the person (--accept-uncontained-engine): nothing is
        // held or rewritten, and install says what that means each time.
        const EngineHold risk = engine_hold(config_);
        const EngineHold hold = config_.accept_uncontained_engine ? EngineHold{} : risk;
        // The contained posture is one root command away: say which.
        if (compose_backend(config_.backend.kind) && !config_.engine &&
            !config_.accept_uncontained_engine && risk.any()) {
            const passwd* me = ::getpwuid(::geteuid());
            report_.note(
                "  to let them run unattended, contain the engine first (as root, "
                "once; docs/ENGINE-USER.md):\n    sudo hostbridge engine setup --slug " +
                config_.slug + " --user " + (me != nullptr ? me->pw_name : "YOU"));
        }
        if (config_.accept_uncontained_engine && risk.any()) {
            report_.note(
                "  WARNING: --accept-uncontained-engine: up and rebuild run unattended "
                "where policy.conf says auto, although " +
                engine_hold_reason(risk));
        }
        if (!policy->has_value()) {
            // A held restart (binds accepted unpinned) is seeded ask as well.
            auto seeded = write_file_atomic(
                paths_.policy_file,
                hold_engine_verbs(admin::default_policy_text(hold.up.empty(), hold.rebuild.empty()),
                                  hold)
                    .text,
                0644);
            if (!seeded) return fail(seeded.error().message);
            std::string asked;
            for (Verb verb : kEngineVerbs)
                if (!hold.of(verb).empty()) asked += std::string(verb_name(verb)) + ", ";
            report_.item(paths_.policy_file,
                         "seeded (every verb auto but " + asked + "down and init: ask)");
            if (hold.any()) report_.note("  " + engine_hold_reason(hold));
            return std::nullopt;
        }
        // An existing file (a re-install, `upgrade`): the person's choices
        // stay, but for `auto` on the engine verbs this install holds for a
        // person (admin/install/policy_engine_guard.hpp).
        const EngineGuarded guarded = hold_engine_verbs(**policy, hold);
        if (guarded.changed.empty()) {
            report_.item(paths_.policy_file, "no change");
            return std::nullopt;
        }
        auto kept = write_file_atomic(paths_.policy_file, guarded.text, 0644);
        if (!kept) return fail(kept.error().message);
        std::string keys;
        for (const std::string& key : guarded.changed) keys += (keys.empty() ? "" : ", ") + key;
        report_.item(paths_.policy_file, keys + " changed from auto to ask");
        report_.note("  " + engine_hold_reason(hold));
        return std::nullopt;
    }

    std::optional<Stop> write_spool_files() {
        // Through the spool's pinned fd: a name swapped for a link since
        // ensure_spool is refused, never written through.
        auto spool = open_spool(project_dir_, o_.spool_rel);
        if (!spool) return fail(spool_refusal(spool.error().message));
        if (!spool->root) return fail("the spool " + spool_dir_ + " vanished during the install");
        const int dir = spool->root.get();
        auto client = write_file_at_if_changed(dir, "request", embedded::kClientScript, 0755,
                                               spool_dir_ + "/request");
        if (!client) return fail(client.error().message);
        report_.item(spool_dir_ + "/request", outcome_word(*client));
        const auto policy = common::load_policy(paths_.policy_file, config_.services);
        auto doc = write_file_at_if_changed(dir, "AGENT.md",
                                            render_agent_doc(config_, policy, o_.spool_rel),
                                            o_.file_mode, spool_dir_ + "/AGENT.md");
        if (!doc) return fail(doc.error().message);
        report_.item(spool_dir_ + "/AGENT.md", outcome_word(*doc));
        return write_agent(dir);
    }

    // hostbridge-agent and its manifest in the spool's bin/ (docs/MCP.md).
    // A hostbridge built without the static agent drops the manifest only.
    std::optional<Stop> write_agent(int spool_fd) {
        std::optional<std::string> binary;
        if (auto source = bundled_binary(kAgentBinary)) {
            // The default cap: a sanitized build's agent is over 20 MiB.
            auto content = read_file_if_exists(*source);
            if (!content) return fail(content.error().message);
            if (!content->has_value()) return fail("cannot read " + *source + ": it is gone");
            binary = std::move(**content);
        } else {
            std::cout << "note: this hostbridge has no " << kAgentBinary
                      << " beside it; agents use the `request` client\n";
        }
        const auto policy = common::load_policy(paths_.policy_file, config_.services);
        auto dropped = drop_agent(spool_fd, spool_dir_, binary,
                                  render_agent_manifest(config_, policy, o_.spool_rel));
        if (!dropped) return fail(spool_refusal(dropped.error().message));
        for (const auto& [path, what] : *dropped) report_.item(path, what);
        return std::nullopt;
    }

    std::optional<Stop> write_units() {
        RenderedUnits units = render_units(config_, paths_);
        auto path_unit = write_file_if_changed(paths_.path_unit, units.path_unit, 0644);
        if (!path_unit) return fail(path_unit.error().message);
        report_.item(paths_.path_unit, outcome_word(*path_unit));
        auto service = write_file_if_changed(paths_.service_unit, units.service_unit, 0644);
        if (!service) return fail(service.error().message);
        report_.item(paths_.service_unit, outcome_word(*service));
        path_unit_changed_ = *path_unit != WriteOutcome::Unchanged;
        units_changed_ = path_unit_changed_ || *service != WriteOutcome::Unchanged;
        return std::nullopt;
    }

    std::optional<Stop> write_record_and_audit() {
        record_.reinstall_argv = {"install"};
        const std::vector<std::string> options = reinstall_args(o_);
        record_.reinstall_argv.insert(record_.reinstall_argv.end(), options.begin(), options.end());
        record_.reinstall_argv.insert(record_.reinstall_argv.end(), {"--slug", slug_});
        record_.no_systemd = o_.no_systemd;
        record_.compose_file = compose_rel_;
        auto saved = save_install_record(paths_.record_file, record_);
        if (!saved) return fail(saved.error().message);
        report_.item(paths_.record_file, outcome_word(*saved));

        // A run that changed nothing (a no-op re-install or `upgrade`) writes
        // no event: it would hide what the agent did last (`list`).
        if (report_.changes() == 0) {
            std::cout << "nothing changed: no `installed` event written\n";
            return std::nullopt;
        }
        auto log = common::AuditLog::open(paths_.state_dir);
        if (!log) return fail("cannot open the audit log: " + log.error().message);
        common::AuditRecord event;
        event.event = common::AuditEvent::Installed;
        event.reason = "project " + project_dir_ + ", " + std::to_string(services_.size()) +
                       " services, " + std::to_string(config_.tcb.size()) + " trusted files, " +
                       std::to_string(report_.changes()) + " changes";
        if (auto appended = log->append(event, /*sync=*/true); !appended) {
            return fail("cannot write the audit log: " + appended.error().message);
        }
        std::cout << "recorded an `installed` event in " << paths_.state_dir << "/audit.jsonl\n";
        return std::nullopt;
    }

    std::optional<Stop> enable_units() {
        if (o_.no_systemd) {
            // A unit enabled by an earlier install would keep firing drains
            // that now run without scopes: turn it off.
            auto systemctl = SystemctlUser::find();
            if (systemctl && systemctl->manager_reachable() &&
                systemctl->query("is-enabled", paths_.path_unit_name) == "enabled") {
                auto ran = systemctl->run({"disable", "--now", paths_.path_unit_name});
                if (!ran || !ran->ok()) {
                    return fail("cannot disable " + paths_.path_unit_name + " for --no-systemd",
                                {"systemctl --user disable --now " + paths_.path_unit_name});
                }
                report_.item(paths_.path_unit_name, "disabled (--no-systemd)");
            }
            std::cout << "--no-systemd: the units are written but not enabled; to enable them "
                         "later, run:\n";
            print_fix("systemctl --user daemon-reload");
            print_fix("systemctl --user enable --now " + paths_.path_unit_name);
            std::cout << "or, without systemd, run the drain with:\n";
            std::vector<std::string> watch = {paths_.executor, "watch", "--config",
                                              paths_.config_file};
            if (o_.allow_root) watch.push_back("--allow-root");
            print_fix(command_line(watch));
            return std::nullopt;
        }
        auto systemctl = SystemctlUser::find();
        if (!systemctl || !systemctl->manager_reachable()) {
            std::cout << "no systemd user manager is reachable; once one is, run:\n";
            print_fix("systemctl --user daemon-reload");
            print_fix("systemctl --user enable --now " + paths_.path_unit_name);
            return std::nullopt;
        }
        auto call = [&](const std::vector<std::string>& args) -> std::optional<Stop> {
            auto ran = systemctl->run(args);
            if (!ran || !ran->ok()) {
                std::string why =
                    ran ? ran->err.substr(0, ran->err.find('\n')) : ran.error().message;
                return fail("systemctl --user " + command_line(args) + " failed: " + why,
                            {"systemctl --user " + command_line(args)});
            }
            return std::nullopt;
        };
        if (units_changed_) {
            if (auto s = call({"daemon-reload"})) return s;
        }
        const std::string enabled = systemctl->query("is-enabled", paths_.path_unit_name);
        const std::string active = systemctl->query("is-active", paths_.path_unit_name);
        if (active == "failed") {
            if (auto s = call({"reset-failed", paths_.path_unit_name, paths_.service_unit_name}))
                return s;
        }
        if (enabled != "enabled" || active != "active") {
            if (auto s = call({"enable", "--now", paths_.path_unit_name})) return s;
            report_.item(paths_.path_unit_name, "enabled and started");
        } else if (path_unit_changed_) {
            if (auto s = call({"restart", paths_.path_unit_name})) return s;
            report_.item(paths_.path_unit_name, "restarted");
        } else {
            report_.item(paths_.path_unit_name, "no change");
        }
        return std::nullopt;
    }

    // The project's containers made before the bridge's up (by hand, or
    // unpinned): listed, and with the person's yes removed and made again
    // by the bridge's own rows (admin/commands/adopt_containers.hpp). No
    // yes: nothing changes, and the lines that do it are printed.
    std::optional<Stop> adopt_containers() {
        if (!adopts_containers(config_)) return std::nullopt;
        auto found = adoptable_containers(config_);
        if (!found) {
            print_warning(
                kCmd, "cannot list the project's containers to adopt: " + found.error().message);
            return std::nullopt;
        }
        if (found->empty()) return std::nullopt;
        std::cout << "containers of this project made before the bridge's up, which the bridge "
                     "would adopt (removed, then made again by its up, labelled and with the bind "
                     "sources pinned; named volumes keep their data):\n";
        for (const Adoptee& a : *found)
            std::cout << "  " << visible(a.name) << " (service " << visible(a.service) << ", "
                      << a.id.substr(0, 12) << "): " << visible(a.why) << "\n";
        const auto by_hand = [&](const std::string& why) {
            print_warning(kCmd, why +
                                    "; the containers above are left as they are. To adopt "
                                    "them, remove them, then ask the bridge for up:");
            print_fix(remove_line(config_, *found), true);
            print_warning(kCmd, "or run install again with --adopt-containers, which does both:");
            print_fix(
                self_command() + " " + command_line(record_.reinstall_argv) + " --adopt-containers",
                true);
            return std::nullopt;
        };
        if (!o_.adopt_containers) {
            if (::isatty(STDIN_FILENO) == 0 || ::isatty(STDOUT_FILENO) == 0)
                return by_hand("no terminal to confirm on (and no --adopt-containers)");
            std::cout << "Adopt them now? [y/N] " << std::flush;
            std::string answer;
            if (!std::getline(std::cin, answer) || (answer != "y" && answer != "yes"))
                return by_hand("not confirmed");
        }
        const Adoption done = adopt(config_, *found);
        if (done.error.empty() && done.down.empty()) {
            std::cout << "adopted " << found->size()
                      << " container(s): the bridge's up made them again, labelled "
                      << config_.settle->project << ", their bind sources pinned\n";
            report_.item("containers made before the bridge", "adopted");
            return std::nullopt;
        }
        if (!done.changed) return by_hand("nothing was adopted: " + done.error);
        std::string sentence = "adopting the containers failed";
        if (!done.error.empty()) sentence += ": " + done.error;
        if (!done.down.empty())
            sentence += "; down now: " + and_list(done.down) +
                        ". Start them with the bridge's rows, once the cause is gone";
        return fail(sentence, done.restart);
    }

    InstallOptions o_;
    HostDirs dirs_;
    InstallPaths paths_;
    std::string project_dir_;
    std::string slug_;
    std::string spool_dir_;
    bool spool_ignored_ = false;  // by the checkout's own git rules, before any write
    std::optional<Config> previous_;
    std::vector<ComposeBuild> compose_builds_;  // from the compose reader
    std::string build_engine_;                  // podman or docker, or empty
    std::string buildah_;                       // with podman-compose, or empty
    std::string stack_engine_;                  // podman, with --stack-project
    std::optional<EngineIdentity> engine_;      // --engine-user (admin/install/engine_user.hpp)
    std::vector<std::string>
        unpinned_binds_;  // accepted and still bound (admin/compose/unpinned_binds.hpp)

    // Bind sources are pinned where the engine is the person's rootless
    // podman, whose namespaces `podman unshare` enters (engines/podman/bind_pin.hpp);
    // "" renders them as checkout paths (rootful, docker: SECURITY.md, "What
    // is not defended"; an engine user's, which no remote client can enter:
    // docs/ENGINE-USER.md).
    std::string pin_run_dir() const {
        const bool rootless_podman = podman_compose(backend_) && !build_engine_.empty() &&
                                     ::geteuid() != 0 && !o_.engine_user;
        return rootless_podman ? paths_.run_dir : std::string();
    }
    bool taking_over_ = false;
    Backend backend_;
    std::string flavour_how_;  // how install told the compose flavour
    std::optional<JoinNetwork> join_network_;
    std::string compose_project_;  // choose_compose_project()
    std::string systemd_run_;
    std::string notify_send_;
    std::map<std::string, std::string> built_binaries_;
    std::string compose_rel_;
    std::vector<std::string> services_;
    std::vector<std::string> buildable_;
    std::vector<std::string> referenced_;
    std::set<std::string> read_from_approved_;
    std::map<std::string, TcbSnapshot> read_snapshots_;
    RenderPlan render_;
    std::set<std::string> explicit_tcb_;
    std::vector<TcbSnapshot> snapshots_;
    Config config_;
    std::string config_text_;
    InstallRecord record_;
    Report report_;
    bool needs_approval_ = false;
    bool units_changed_ = false;
    bool path_unit_changed_ = false;
};

}  // namespace

int run_install(int argc, char** argv) {
    auto options = parse_install_options(argc, argv);
    if (!options) {
        print_error(kCmd, options.error().message + " (see hostbridge install --help)");
        return kExitUsage;
    }
    if (options->help) {
        std::cout << kInstallHelp;
        return kExitOk;
    }
    return Installer(std::move(*options)).run();
}

}  // namespace hb::admin
