// `hostbridge doctor`: checks one install end to end and prints each problem
// with the bare command that fixes it (docs/COMMANDS.md, "doctor").
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "admin/audit/audit_verify.hpp"
#include "admin/commands/commands.hpp"
#include "admin/commands/stale_containers.hpp"
#include "admin/compose/build_plan.hpp"
#include "admin/compose/compose_reader.hpp"
#include "admin/compose/compose_render.hpp"
#include "admin/install/agent_doc.hpp"
#include "admin/install/agent_manifest.hpp"
#include "admin/install/builder_check.hpp"
#include "admin/install/engine_reach.hpp"
#include "admin/install/engine_user.hpp"
#include "admin/install/git.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/policy_engine_guard.hpp"
#include "admin/install/spool_setup.hpp"
#include "admin/install/systemd_user.hpp"
#include "admin/install/tcb.hpp"
#include "admin/install/units.hpp"
#include "admin/install/versions.hpp"
#include "admin/util/args.hpp"
#include "admin/util/change_view.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/process.hpp"
#include "admin/util/slug.hpp"
#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "common/engine_socket.hpp"
#include "common/held.hpp"
#include "common/integrity_gate.hpp"
#include "common/policy.hpp"
#include "common/sha256.hpp"
#include "display/visible.hpp"
#include "engines/argv_table.hpp"
#include "executor/rate_limiter.hpp"
#include "ipc/request_name.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr std::string_view kCmd = "doctor";

const char* const kHelp = R"(usage: hostbridge doctor [--slug SLUG]

Checks one install end to end and prints each problem with the command that
fixes it, on a line of its own: the units (present, as install writes them,
enabled, the path unit not failed), the installed executor and parser
(present, identical to what was installed, not older than this hostbridge:
else `upgrade`), the spool (real directories,
not symlinks, with the expected modes, ignored by git), the trusted files
(matching their pins; a diff of what changed), the policy file (unknown keys
and modes), who runs the engine (as you: what its escape would reach), a
stale drain lock, the rate budget left (what the current windows
of the rate limit hold, read as the executor reads them), the audit chain, a growing quarantine/ and
requests the drain could not move. An install made with --no-systemd is
healthy without enabled units.

  --slug SLUG   the install (default: the one whose project holds the cwd)

Exit: 0 healthy, 1 problems found, 2 usage error.
)";

const OptionSpec kSpecs[] = {{"slug", true, false}};

// Quarantine entries newer than this make it "growing".
constexpr std::time_t kQuarantineWindow = 24 * 3600;
// .stuck-* names reported one by one; the rest as a count.
constexpr std::size_t kStuckShown = 10;

class Doctor {
  public:
    Doctor(InstallPaths paths, const HostDirs& dirs)
        : paths_(std::move(paths)), home_(dirs.home), installs_root_(installs_root(dirs)) {}

    int run() {
        std::cout << "hostbridge doctor: " << visible(paths_.slug) << "\n";
        record_ = load_record();
        auto config = load_config(paths_.config_file);
        if (!config) {
            problem("cannot read " + paths_.config_file + ": " + config.error().message,
                    {reinstall()});
            return finish();
        }
        c_ = std::move(*config);
        report_posture();
        ok("config " + paths_.config_file + " (project " + c_.project_dir + ")");
        check_units();
        check_binaries();
        check_notify_command();
        check_version();
        check_spool_dirs();
        check_tcb();
        check_compose();
        check_project_name();
        check_unpinned_containers();
        check_builder();
        check_engine_identity();
        check_policy();
        check_lock();
        check_rate_budget();
        check_audit();
        check_quarantine_and_stuck();
        return finish();
    }

  private:
    // First, before any check: whose files an escape through the engine
    // reaches, and so which engine verbs wait for a person (SECURITY.md,
    // "Two postures"; common/engine_hold.hpp).
    void report_posture() {
        const EngineHold hold = engine_hold(c_);
        std::vector<std::string> verbs;
        for (Verb verb : kEngineVerbs) {
            if (!hold.of(verb).empty()) verbs.emplace_back(verb_name(verb));
        }
        // "up and rebuild", "up, rebuild and restart".
        const std::string held = and_list(verbs);
        std::string line = c_.engine ? "posture: engine user " + c_.engine->user +
                                           ": an escape through the engine reaches that user's "
                                           "files, not yours"
                                     : "posture: the engine runs as you: an escape through the "
                                       "engine reaches your files";
        if (held.empty()) {
            line += "; up and rebuild run unattended where the policy says auto";
        } else if (c_.accept_uncontained_engine) {
            line += "; " + held + " run unattended where the policy says auto, as accepted";
        } else {
            line += "; " + held + " wait for a person whatever the policy says";
        }
        std::cout << visible(line) << "\n";
    }

    // Every line quotes names and paths the agent may have chosen.
    // What the current windows hold, read by the executor's own limiter
    // (executor/rate_limiter.hpp), so the count is the one it refuses by.
    void check_rate_budget() {
        const exec::RateLimiter limiter(c_);
        const std::string file = c_.state_dir + "/" + exec::RateLimiter::kStateFile;
        const UniqueFd dir(::open(c_.state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        auto windows = dir ? limiter.windows_at(dir.get(), exec::RateLimiter::boottime_ms())
                           : Result<exec::RateState>(make_error(sys::errno_text("no state dir")));
        if (!windows) {
            problem("the rate limiter's state " + file + " cannot be read (" +
                        windows.error().message + "): every request but ping is refused",
                    {"rm " + file});
            return;
        }
        for (const RateClass rate : {RateClass::Mutating, RateClass::ReadOnly}) {
            const bool mutating = rate == RateClass::Mutating;
            const Window& w = mutating ? c_.limits.mutating : c_.limits.read_only;
            const int used =
                static_cast<int>((mutating ? windows->mutating : windows->read_only).size());
            ok("rate budget, " + std::string(rate_class_name(rate)) + ": " + std::to_string(used) +
               " of " + std::to_string(w.count) + " used in the last " + std::to_string(w.seconds) +
               " s, " + std::to_string(std::max(0, w.count - used)) + " left");
        }
    }

    void ok(const std::string& what) { std::cout << "ok:      " << visible(what) << "\n"; }
    void info(const std::string& what) { std::cout << "info:    " << visible(what) << "\n"; }
    void warn(const std::string& what) { std::cout << "WARNING: " << visible(what) << "\n"; }
    // `detail` (render_change's text, already made visible) goes between
    // the problem and its fixes.
    void problem(const std::string& what, const std::vector<std::string>& fixes,
                 const std::string& detail = "") {
        ++problems_;
        std::cout << "PROBLEM: " << visible(what) << "\n" << detail;
        if (!detail.empty() && detail.back() != '\n') std::cout << "\n";
        for (const auto& fix : fixes) print_fix(fix);
    }
    int finish() {
        if (problems_ == 0) {
            std::cout << "healthy\n";
            return kExitOk;
        }
        std::cout << problems_ << " problem(s) found\n";
        return kExitFailure;
    }

    std::optional<InstallRecord> load_record() {
        auto record = load_install_record(paths_.record_file);
        if (record && record->has_value()) return **record;
        return std::nullopt;
    }

    // The install command that re-creates this install (from install.json).
    std::string reinstall() const {
        std::vector<std::string> argv = {self_command()};
        if (record_) {
            argv.insert(argv.end(), record_->reinstall_argv.begin(), record_->reinstall_argv.end());
        } else {
            argv.insert(argv.end(), {"install", "--slug", paths_.slug});
            if (!c_.project_dir.empty()) argv.insert(argv.end(), {"--project-dir", c_.project_dir});
        }
        return command_line(argv);
    }

    void check_units() {
        RenderedUnits want = render_units(c_, paths_);
        bool files_ok = true;
        for (const auto& [file, text] : {std::pair{paths_.path_unit, want.path_unit},
                                         std::pair{paths_.service_unit, want.service_unit}}) {
            auto have = read_file_if_exists(file);
            if (!have || !have->has_value()) {
                problem("unit " + file + " is missing", {reinstall()});
                files_ok = false;
            } else if (**have != text) {
                problem("unit " + file + " differs from what install writes for this config",
                        {reinstall()});
                files_ok = false;
            }
        }
        if (files_ok) ok("units " + paths_.path_unit_name + " and " + paths_.service_unit_name);
        for (const auto& unit : {paths_.path_unit, paths_.service_unit}) {
            struct stat st {};
            if (::lstat((unit + ".d").c_str(), &st) == 0) {
                info("drop-ins in " + unit +
                     ".d/ change the unit install wrote; doctor does not "
                     "check them");
            }
        }

        const std::string enable_now = "systemctl --user enable --now " + paths_.path_unit_name;
        if (!c_.systemd.enabled) {
            std::vector<std::string> watch = {paths_.executor, "watch", "--config",
                                              paths_.config_file};
            if (c_.allow_root) watch.push_back("--allow-root");
            info(
                "installed with --no-systemd: the units are not meant to be enabled; the drain "
                "runs with: " +
                command_line(watch));
            return;
        }
        auto systemctl = SystemctlUser::find();
        if (!systemctl || !systemctl->manager_reachable()) {
            problem(
                "no systemd user manager is reachable, so nothing fires the drain (once one "
                "is, run these)",
                {"systemctl --user daemon-reload", enable_now});
            return;
        }
        const std::string enabled = systemctl->query("is-enabled", paths_.path_unit_name);
        const std::string active = systemctl->query("is-active", paths_.path_unit_name);
        if (active == "failed") {
            problem("the path unit " + paths_.path_unit_name +
                        " has failed (the drain probably hit its start limit), so requests no "
                        "longer fire the drain",
                    {"systemctl --user reset-failed " + paths_.path_unit_name + " " +
                         paths_.service_unit_name,
                     "systemctl --user start " + paths_.path_unit_name});
        } else if (enabled != "enabled") {
            problem("the path unit " + paths_.path_unit_name + " is not enabled (" + enabled + ")",
                    {"systemctl --user daemon-reload", enable_now});
        } else if (active != "active") {
            problem("the path unit " + paths_.path_unit_name + " is not active (" + active + ")",
                    {"systemctl --user start " + paths_.path_unit_name});
        } else {
            ok("path unit enabled and active");
        }
        if (systemctl->query("is-active", paths_.service_unit_name) == "failed") {
            problem("the last drain (" + paths_.service_unit_name + ") failed; its log is " +
                        c_.state_dir + "/service.log",
                    {"tail -n 20 " + shell_quote(c_.state_dir + "/service.log"),
                     "systemctl --user reset-failed " + paths_.service_unit_name});
        }
    }

    void check_binaries() {
        bool all_ok = true;
        for (const auto& [name, path] :
             {std::pair{std::string("hostbridge-executor"), paths_.executor},
              std::pair{std::string("hostbridge-parser"), paths_.parser},
              std::pair{std::string("hostbridge-engine-relay"), paths_.engine_relay},
              std::pair{std::string("hostbridge-snapshot"), paths_.snapshot},
              std::pair{std::string("hostbridge-pin"), paths_.pin}}) {
            auto content = read_file_if_exists(path, 256u << 20);
            if (!content || !content->has_value()) {
                problem("the installed " + name + " (" + path + ") is missing", {reinstall()});
                all_ok = false;
                continue;
            }
            if (::access(path.c_str(), X_OK) != 0) {
                problem("the installed " + name + " (" + path + ") is not executable",
                        {"chmod 0755 " + shell_quote(path)});
                all_ok = false;
                continue;
            }
            const std::string sum = common::sha256_hex(**content);
            const std::string* recorded = nullptr;
            if (record_) {
                auto it = record_->binaries.find(name);
                if (it != record_->binaries.end()) recorded = &it->second;
            }
            if (recorded == nullptr) {
                problem(
                    "no record of the " + name + " that was installed (" + paths_.record_file + ")",
                    {reinstall()});
                all_ok = false;
            } else if (*recorded != sum) {
                problem("the installed " + name + " (" + path +
                            ") is not the binary that was installed",
                        {reinstall()});
                all_ok = false;
            }
            // A newer build beside this hostbridge is worth knowing about.
            auto bundled = bundled_binary(name);
            auto built = bundled ? read_file_if_exists(*bundled, 256u << 20)
                                 : Result<std::optional<std::string>>(std::nullopt);
            if (built && built->has_value() && common::sha256_hex(**built) != sum) {
                info("the " + name + " of this hostbridge (" + *bundled +
                     ") differs from the installed one; upgrade to update it");
            }
        }
        for (const auto& [key, named, installed] :
             {std::tuple{"parser", c_.parser, paths_.parser},
              std::tuple{"snapshot", c_.snapshot, paths_.snapshot}}) {
            if (named != installed) {
                problem(std::string("bridge.json names the ") + key + " " + named +
                            ", not the installed " + installed,
                        {reinstall()});
                all_ok = false;
            }
        }
        if (c_.engine && c_.engine->relay != paths_.engine_relay) {
            problem("bridge.json names the engine relay " + c_.engine->relay +
                        ", not the installed " + paths_.engine_relay,
                    {reinstall()});
            all_ok = false;
        }
        if (all_ok) {
            ok("executor, parser, snapshot copy and engine relay in " + paths_.lib_dir +
               " are the installed ones");
        }
    }

    // The person's notify_command (docs/CONFIG.md): a program that is not
    // there shows otherwise only in the log line of the next held request.
    void check_notify_command() {
        if (c_.notify_command.empty()) return;
        const std::string& program = c_.notify_command.front();
        const std::string where = "notify_command in " + paths_.config_file + " names " + program;
        struct stat st {};
        if (::stat(program.c_str(), &st) != 0) {
            problem(where + ", which does not exist; install it, or correct or remove the key", {});
        } else if (!S_ISREG(st.st_mode) || ::access(program.c_str(), X_OK) != 0) {
            problem(where + ", which is not an executable file; correct or remove the key", {});
        } else {
            ok(where + ", an executable file");
        }
    }

    // An install older than this admin tool misses its fixes: `upgrade`.
    void check_version() {
        if (::access(paths_.executor.c_str(), X_OK) != 0) return;  // check_binaries said so
        const auto have = binary_version(paths_.executor);
        const std::string want(own_version());
        const std::string upgrade = self_command() + " upgrade --slug " + paths_.slug;
        if (!have) {
            problem(
                "the installed hostbridge-executor prints no version: it is older than this "
                "hostbridge " +
                    want,
                {upgrade});
        } else if (compare_versions(*have, want) < 0) {
            problem("the install runs hostbridge-executor " + *have +
                        ", older than this hostbridge " + want,
                    {upgrade});
        } else if (compare_versions(*have, want) > 0) {
            info("the install runs hostbridge-executor " + *have + ", newer than this hostbridge " +
                 want);
        } else {
            ok("version " + want + ", the same as this hostbridge");
        }
    }

    void check_spool_dirs() {
        auto spool_problems = check_spool(c_.project_dir, c_.spool_dir, c_.agent_gid);
        for (const auto& p : spool_problems) {
            std::vector<std::string> fixes = p.fixes;
            fixes.push_back(reinstall());
            problem("spool: " + p.sentence, fixes);
        }
        if (spool_problems.empty())
            ok("spool " + c_.spool_dir + " (real directories, modes as expected)");
        if (!path_is_within(c_.spool_dir, c_.project_dir) || c_.spool_dir == c_.project_dir) {
            problem("the spool " + c_.spool_dir + " is not inside the project " + c_.project_dir,
                    {reinstall()});
            return;
        }
        const std::string rel = spool_rel();
        // Every later look into the spool goes through these fds: a link
        // planted on the way is reported above and never followed.
        if (auto pinned = open_spool(c_.project_dir, rel); pinned && pinned->root) {
            spool_ = std::move(*pinned);
            struct stat st {};
            if (::fstatat(spool_->root.get(), "request", &st, AT_SYMLINK_NOFOLLOW) != 0 ||
                !S_ISREG(st.st_mode)) {
                problem("the agent client " + c_.spool_dir + "/request is missing", {reinstall()});
            }
        }
        auto ignored = git_is_ignored(c_.project_dir, rel);
        if (!ignored) {
            problem("cannot tell whether git ignores the spool: " + ignored.error().message, {});
        } else if (!*ignored) {
            problem("git does not ignore the spool " + rel + ", so an agent could commit requests",
                    {reinstall()});
        } else {
            ok("spool ignored by git");
        }
    }

    void check_tcb() {
        // The gate's own verdict, then a diff of each change for a person.
        common::GateReport gate = common::check_tcb(c_.project_dir, c_.tcb);
        if (gate.passed()) {
            ok("all " + std::to_string(c_.tcb.size()) + " trusted files match their pins");
            return;
        }
        for (const auto& p : gate.problems) {
            std::string diff;
            if (auto now = snapshot_tcb_file(c_.project_dir, p.path)) {
                auto approved = read_approved_copy(paths_, p.path);
                auto shown =
                    render_change("approved/" + p.path, approved ? *approved : std::nullopt, p.path,
                                  now->content);
                if (shown) diff = *shown;
            }
            problem("trusted file " + p.path + " " + p.problem +
                        "; every verb that runs a command is refused until it is approved",
                    {self_command() + " approve --slug " + c_.slug}, diff);
        }
    }

    // The rendered compose files the executor puts into the run tree, and
    // what the approved compose model bind-mounts from the checkout.
    void check_compose() {
        int bad = 0;
        for (const auto& pin : c_.rendered) {
            auto copy = read_rendered_copy(paths_, pin.path);
            std::string why;
            if (!copy) {
                why = copy.error().message;
            } else if (!copy->has_value()) {
                why = "is missing";
            } else if (common::sha256_hex(**copy) != pin.sha256) {
                why = "does not match its pin";
            }
            if (why.empty()) continue;
            ++bad;
            problem("the rendered copy of " + pin.path + " (" +
                        rendered_copy_path(paths_, pin.path) + ") " + why +
                        "; the executor refuses to run compose from it",
                    {reinstall()});
        }
        if (compose_backend(c_.backend.kind)) {
            auto rel = project_relative(c_.project_dir, c_.backend.file);
            bool rendered = rel && std::any_of(c_.rendered.begin(), c_.rendered.end(),
                                               [&](const TcbPin& p) { return p.path == *rel; });
            if (!rendered) {
                ++bad;
                problem("the compose file " + c_.backend.file +
                            " has no rendered copy, so the executor refuses the compose backend",
                        {reinstall()});
            }
        }
        if (bad == 0 && !c_.rendered.empty()) {
            ok("all " + std::to_string(c_.rendered.size()) +
               " rendered compose files match their pins");
        }
        if (!record_ || record_->compose_file.empty()) return;
        const std::string& project = c_.project_dir;
        FileSource approved = [&](const std::string& abs) -> Result<std::optional<std::string>> {
            auto rel = project_relative(project, abs);
            if (!rel) return read_file_if_exists(abs, kMaxComposeFileBytes + 1);
            return read_approved_copy(paths_, *rel);
        };
        auto model = read_compose(project + "/" + record_->compose_file, approved, project);
        if (!model) {
            problem("the approved compose model cannot be read: " + model.error().message,
                    {self_command() + " approve --slug " + c_.slug});
            return;
        }
        for (const auto& bind : model->checkout_binds) {
            warn("service " + bind.service + " bind-mounts " +
                 (bind.source == "." ? std::string("the whole checkout")
                                     : bind.source + " of the checkout") +
                 " (" + bind.file + " line " + std::to_string(bind.line) +
                 "): the agent decides what the container finds there, and what the container "
                 "writes there the agent reads" +
                 (c_.pins ? std::string()
                          : std::string("; and it is not pinned (only rootless podman's are), so "
                                        "a swap for a link while the engine starts the container "
                                        "mounts whatever the link names")) +
                 ". Safer: a path outside the checkout, a named volume, or a user-namespace "
                 "mapping (userns_mode) under which the host user's files are not writable");
        }
    }

    // With pins, the rendered files name no checkout path as a bind source
    // (docs/COMPOSE.md, "Bind sources are pinned"): a container whose bind
    // source is neither a pin nor a path those files name was created before
    // pinning or by hand (a swap won then is stored for good: podman-compose
    // realpath()s it), and every start resolves that path again.
    // A compose project name a hand-run compose also derives (an install
    // from before install_project_name, admin/compose/build_plan.hpp): a
    // clone with the same directory name shares its images and containers
    // (docs/COMPOSE.md, "The project's name").
    void check_project_name() {
        if (!compose_backend(c_.backend.kind) || (!c_.build && !c_.settle)) return;
        const std::string own = install_project_name(c_.project_dir, c_.backend.file);
        const std::string name = compose_project();
        if (name == own) return;
        warn("the compose project name " + name + " is not this checkout's own (" + own +
             "): podman-compose run by hand without -p in another checkout of the same "
             "directory name shares its images and containers; `hostbridge install --slug " +
             c_.slug + "` prints the steps to move it (--rename-project)");
    }

    void check_unpinned_containers() {
        for (const ContainerFinding& found : stale_containers(c_, paths_)) {
            if (found.problem) {
                problem(found.what, {found.fix});
            } else {
                warn(found.what);
            }
        }
    }

    std::string compose_project() const { return compose_project_of(c_); }

    // Who builds, and what stands between a Containerfile and the host
    // (admin/install/builder_check.hpp, docs/BUILDS.md).
    // Who runs the engine, and what its escape would reach (docs/ENGINE-USER.md).
    void check_engine_identity() {
        if (c_.engine) {
            const std::string& socket = c_.engine->socket;
            struct stat st {};
            if (::stat(socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
                ::access(socket.c_str(), R_OK | W_OK) == 0) {
                // As the drain connects (common/engine_socket.hpp): a link or
                // another owner's socket there is what an escape as the engine
                // user would leave.
                if (auto pinned = common::pin_engine_socket(*c_.engine); !pinned) {
                    problem(pinned.error().message +
                                "; every command fails until it is the engine user's own socket "
                                "again",
                            {"sudo " + self_command() + " engine setup --slug " + paths_.slug +
                             " --user " + self_name()});
                    return;
                }
                ok("the engine runs as " + c_.engine->user + ", through " + socket +
                   ": an engine escape lands as that user (docs/ENGINE-USER.md)");
                check_engine_user_reach(c_.engine->user);
            } else {
                problem("the engine user " + c_.engine->user + "'s socket " + socket +
                            " cannot be opened: every command fails until its service runs",
                        {"sudo " + self_command() + " engine setup --slug " + paths_.slug +
                         " --user " + self_name()});
            }
            return;
        }
        // docker's daemon is root's, not yours: a different story (SECURITY.md).
        if (docker_compose(c_.backend)) return;
        std::string reach;
        for (const auto& what : same_user_reach(home_, installs_root_, paths_.slug))
            reach += (reach.empty() ? "" : ", ") + what;
        info("the engine runs as you, so an engine escape would reach " + reach +
             "; run it as its own user (docs/ENGINE-USER.md):");
        print_fix("sudo " + self_command() + " engine setup --slug " + paths_.slug + " --user " +
                  self_name());
    }

    // What the engine user can read of yours: a home it may pass exposes
    // every readable entry below it; bind sources need the checkout's path
    // (docs/ENGINE-USER.md, "Bind sources" and "Your home").
    void check_engine_user_reach(const std::string& user) {
        const auto engine = other_user(user);
        if (!engine) {
            problem("no user " + user + " on this host, yet bridge.json names it",
                    {"sudo " + self_command() + " engine setup --slug " + paths_.slug + " --user " +
                     self_name()});
            return;
        }
        // The home as the kernel walks it: a linked $HOME is its target.
        const auto canonical_home = canonical_path(home_);
        const std::string home_dir = canonical_home ? *canonical_home : home_;
        const bool binds_below_home =
            !c_.unpinned_binds.empty() && c_.project_dir.rfind(home_dir + "/", 0) == 0;
        const HomeExposure home = home_exposure(home_dir, *engine);
        if (!home.passes) {
            ok(user + " cannot pass your home " + home_dir);
        } else {
            constexpr std::size_t kShown = 12;
            std::string list;
            for (std::size_t i = 0; i < home.entries.size() && i < kShown; ++i)
                list += (i == 0 ? "" : ", ") + home.entries[i];
            if (home.entries.size() > kShown)
                list += ", and " + std::to_string(home.entries.size() - kShown) + " more";
            warn(user + " can pass your home " + home_dir + ", so an engine escape reads " +
                 (list.empty() ? std::string("nothing of it today, and whatever becomes readable")
                               : list) +
                 (binds_below_home
                      ? "; it passes your home to reach the checkout's bind sources: a checkout "
                        "outside your home, then `chmod 0700 " +
                            home_dir + "`, closes it"
                      : "; `chmod 0700 " + home_dir + "` closes it") +
                 " (docs/ENGINE-USER.md, \"Your home\")");
        }
        // Each bind source and the directories above it (x), as the engine
        // user resolves them at every start.
        for (const auto& rel : c_.unpinned_binds) {
            const std::string source = c_.project_dir + "/" + rel;
            struct stat st {};
            const bool dir = ::stat(source.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
            if (const auto closed =
                    first_closed_dir(dir ? source : source.substr(0, source.rfind('/')), *engine)) {
                warn(user + " resolves the bind source " + rel + " but cannot pass " + *closed +
                     ": up fails until it may (docs/ENGINE-USER.md, \"Bind sources\")");
            }
        }
    }

    static std::string self_name() {
        const passwd* pw = ::getpwuid(::geteuid());
        return pw != nullptr && pw->pw_name != nullptr ? pw->pw_name : std::to_string(::geteuid());
    }

    // What a build's FROM and COPY --from may name (docs/BUILDS.md, "What a
    // build may name"): shown so the person sees what their builds can read.
    void show_base_images() {
        if (!c_.build || c_.build->services.empty()) return;
        if (!c_.build->base_images) {
            warn(
                "this install records no base images (older than the list): a build may name "
                "only its stages, scratch and the services' images until `" +
                self_command() + " install` lists others with --base-image");
            return;
        }
        std::string list;
        for (const auto& image : *c_.build->base_images) list += " " + image;
        info(
            "base images a build may name (besides its stages, scratch and the services' "
            "images):" +
            (list.empty() ? std::string(" none") : list));
    }

    void check_builder() {
        show_base_images();
        // Nothing to build: install records no build settings then
        // (admin/compose/build_plan.cpp), and no rebuild is offered to be refused.
        if (!compose_backend(c_.backend.kind) || c_.buildable.empty()) return;
        if (!c_.build) {
            warn(
                "this install records no snapshot builds (older than them): every rebuild is "
                "refused until `" +
                self_command() + " upgrade`");
            return;
        }
        RunOptions options;
        options.timeout = std::chrono::seconds(15);
        // docker's engine is its daemon, which may be another version than the client.
        const bool docker = c_.build->engine.ends_with("/docker");
        auto ran = run_process({c_.build->engine, "version", "--format",
                                docker ? "{{.Server.Version}}" : "{{.Client.Version}}"},
                               options);
        std::string version = ran && ran->ok() ? ran->out : std::string();
        while (!version.empty() && (version.back() == '\n' || version.back() == ' '))
            version.pop_back();
        if (version.empty()) {
            warn("cannot ask " + c_.build->engine +
                 " its version, so nothing is known of the "
                 "builder every rebuild runs");
            return;
        }
        const BuilderReport report = describe_builder(c_.build->engine, version);
        ok(report.line);
        if (report.note) info(*report.note);
    }

    void check_policy() {
        struct stat st {};
        if (::lstat(c_.policy_file.c_str(), &st) != 0) {
            problem("the policy file " + c_.policy_file + " is missing, so every verb is denied",
                    {reinstall()});
            return;
        }
        common::Policy policy = common::load_policy(c_.policy_file, c_.services);
        for (const auto& warning : policy.warnings) {
            problem("policy: " + warning, {self_command() + " policy edit --slug " + paths_.slug});
        }
        check_policy_shadows(policy);
        check_engine_verbs(policy);
        std::string denied;
        std::string dry_run;
        std::string ask;
        for (Verb verb : kAllVerbs) {
            const common::Mode mode = policy.mode(verb);
            if (mode == common::Mode::Auto) continue;
            std::string& list = mode == common::Mode::DryRun ? dry_run
                                : mode == common::Mode::Ask  ? ask
                                                             : denied;
            list += (list.empty() ? "" : ", ") + std::string(verb_name(verb));
        }
        for (const auto& rule : policy.service_rules) {
            info("the policy makes " + std::string(verb_name(rule.verb)) + " " + rule.service +
                 " " + std::string(common::mode_name(policy.mode(rule.verb, rule.service))));
        }
        if (policy.warnings.empty()) ok("policy " + c_.policy_file);
        if (!denied.empty()) info("the policy denies: " + denied);
        if (!dry_run.empty()) info("the policy dry-runs (answers, runs nothing): " + dry_run);
        if (!ask.empty()) info("the policy holds for a person (`hostbridge allow`): " + ask);
        check_held();
        check_agent_manifest(policy);
        check_agent_doc(policy);
    }

    // up or rebuild run unattended where this install holds them for a
    // person (admin/install/policy_engine_guard.hpp): set back by hand since the last
    // install or upgrade.
    void check_engine_verbs(const common::Policy& policy) {
        const EngineHold hold = engine_hold(c_);
        if (c_.accept_uncontained_engine) {
            if (hold.any()) {
                warn(
                    "bridge.json accepts an uncontained engine "
                    "(accept_uncontained_engine, from `install --accept-uncontained-engine`): "
                    "up and rebuild run unattended where the policy says auto, although " +
                    engine_hold_reason(hold));
            }
            return;
        }
        EngineHold named;  // the reasons of the verbs set back only
        std::string automatic;
        for (Verb verb : kEngineVerbs) {
            if (hold.of(verb).empty()) continue;
            const std::string key(verb_info(verb).policy_key);
            const std::size_t before = automatic.size();
            if (policy.mode(verb) == common::Mode::Auto) automatic += " " + key + "=auto";
            for (const auto& rule : policy.service_rules) {
                if (rule.verb == verb && rule.mode.mode == common::Mode::Auto) {
                    automatic += " " + key + "." + rule.service + "=auto";
                }
            }
            if (automatic.size() != before) named.of(verb) = hold.of(verb);
        }
        if (automatic.empty()) return;
        warn(c_.policy_file + " has" + automatic + "; " + engine_hold_reason(named) +
             "; the executor holds them for a person all the same, and `hostbridge install` "
             "and `upgrade` set them to ask");
    }

    // Requests waiting for a person: the agent waits too, until their TTL.
    void check_held() {
        struct stat st {};
        // Doctor creates nothing: no held/ yet, nothing was ever held.
        if (::lstat((c_.state_dir + "/" + std::string(common::kHeldDir)).c_str(), &st) != 0) return;
        auto held_fd = common::open_held_dir(c_.state_dir);
        auto names = held_fd ? common::list_held(held_fd->get())
                             : Result<std::vector<std::string>>(held_fd.error());
        if (!names) return;
        const auto waiting = std::count_if(names->begin(), names->end(),
                                           [](const std::string& n) { return is_request_name(n); });
        if (waiting > 0) {
            info(std::to_string(waiting) + " request(s) wait for a person's approval:");
            print_fix("hostbridge pending --slug " + c_.slug);
        }
    }

    // A per-service rule that allows what the argv table refuses anyway
    // (rebuild of a service that is not buildable) says something the bridge
    // will never do. Verb-level keys are left alone: the seeded policy.conf
    // has `auto` for init and join-network whatever this install offers.
    void check_policy_shadows(const common::Policy& policy) {
        const auto shadowed = [&](Verb verb, std::optional<std::size_t> arg,
                                  const std::string& key) {
            const auto outcome = exec::argv_for(verb, arg, c_);
            const auto* denied = std::get_if<exec::Denied>(&outcome);
            if (denied == nullptr) return;
            warn(key + " in " + c_.policy_file + " has no effect: " +
                 std::string(reason_text(denied->reason)) + ", whatever the policy says");
        };
        for (const auto& rule : policy.service_rules) {
            if (rule.mode.mode == common::Mode::Deny) continue;
            const auto at = std::find(c_.services.begin(), c_.services.end(), rule.service);
            shadowed(rule.verb, static_cast<std::size_t>(at - c_.services.begin()),
                     std::string(verb_info(rule.verb).policy_key) + "." + rule.service + "=" +
                         std::string(common::mode_name(rule.mode.mode)));
        }
    }

    // The MCP tool list is built from the manifest install wrote; an edit of
    // policy.conf since then leaves it offering what is now denied, or
    // missing what is now allowed (admin/install/agent_manifest.hpp). The host still
    // decides every call; this only keeps the agent's tool list honest.
    void check_agent_manifest(const common::Policy& policy) {
        if (!spool_ || !spool_->root) return;  // reported by check_spool_dirs
        const std::string shown = c_.spool_dir + "/" + kAgentBinDir + "/" + kAgentManifest;
        UniqueFd bin(::openat(spool_->root.get(), kAgentBinDir,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        const auto have = read_regular_at(bin.get(), kAgentManifest);
        if (!have) {
            problem("the agent's tool manifest " + shown + " is missing", {reinstall()});
            return;
        }
        if (*have != render_agent_manifest(c_, policy, spool_rel())) {
            problem("the agent's tool manifest " + shown +
                        " does not match this install and policy.conf (edited by hand?)",
                    {policy_refresh()});
        } else {
            ok("the agent's tool manifest matches the policy");
        }
    }

    // AGENT.md lists what the policy refuses or only dry-runs: an edit of
    // policy.conf since install leaves it telling the agent something else.
    void check_agent_doc(const common::Policy& policy) {
        if (!spool_ || !spool_->root) return;  // reported by check_spool_dirs
        const std::string shown = c_.spool_dir + "/AGENT.md";
        const auto have = read_regular_at(spool_->root.get(), "AGENT.md");
        if (!have) {
            problem(shown + " is missing or not a regular file", {reinstall()});
            return;
        }
        if (*have != render_agent_doc(c_, policy, spool_rel())) {
            problem(shown +
                        " does not say what this install and policy.conf say now (edited by "
                        "hand?)",
                    {policy_refresh()});
        }
    }
    static constexpr std::size_t kMaxManifest = 1 << 20;

    // A regular file `name` in `dir` (-1: none), never through a link and
    // never blocking on a FIFO; nullopt when it is not there to read.
    static std::optional<std::string> read_regular_at(int dir, const char* name) {
        UniqueFd file(
            dir < 0 ? -1 : ::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat st {};
        std::string text;
        if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
            !sys::read_all(file.get(), text, kMaxManifest + 1)) {
            return std::nullopt;
        }
        return text;
    }

    // The spool as install's --spool-rel gave it (check_spool_dirs has
    // checked that it lies inside the project).
    std::string spool_rel() const { return c_.spool_dir.substr(c_.project_dir.size() + 1); }
    // After a hand edit of policy.conf: `policy edit`, saved unchanged,
    // writes what the agent reads anew (admin/commands/policy_edit.hpp).
    std::string policy_refresh() const {
        return self_command() + " policy edit --slug " + paths_.slug +
               "   (save it unchanged; the supported way to edit policy.conf)";
    }

    // The single-flight lock, a record lock (executor/drain.cpp): only a
    // process that took it holds it, never one that inherited the file.
    // Held by anything but a running drain, no drain will run again.
    void check_lock() {
        const std::string lock = c_.state_dir + "/drain.lock";
        UniqueFd fd(::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        const pid_t holder = fd ? sys::record_lock_holder(fd.get()) : 0;
        if (holder == 0) {
            ok("drain lock free");
            return;
        }
        if (holder < 0) {
            problem(sys::errno_text("cannot ask who holds the drain lock " + lock),
                    {"fuser -v " + shell_quote(lock)});
            return;
        }
        const long pid = holder;
        const std::string exe = read_link("/proc/" + std::to_string(pid) + "/exe");
        const long age = process_age_seconds(pid);
        const bool is_drain = exe == paths_.executor || exe.ends_with("/hostbridge-executor");
        const long limit = c_.drain.time_budget_seconds + c_.drain.linger_seconds + 60;
        if (is_drain && age >= 0 && age <= limit) {
            info("a drain is running (pid " + std::to_string(pid) + ", for " + std::to_string(age) +
                 " s)");
        } else if (is_drain) {
            problem("a drain (pid " + std::to_string(pid) + ") has held the lock for " +
                        std::to_string(age) + " s, past its budget of " + std::to_string(limit) +
                        " s",
                    {"kill " + std::to_string(pid)});
        } else {
            problem("the drain lock " + lock + " is held by pid " + std::to_string(pid) + " (" +
                        (exe.empty() ? "unknown" : exe) + "), not by a drain, so no drain can run",
                    {"kill " + std::to_string(pid)});
        }
    }

    static std::string read_link(const std::string& path) {
        char buf[4096];
        ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
        if (n <= 0) return {};
        std::string out(buf, static_cast<std::size_t>(n));
        if (out.ends_with(" (deleted)")) out.resize(out.size() - 10);
        return out;
    }

    static long process_age_seconds(long pid) {
        std::ifstream stat_file("/proc/" + std::to_string(pid) + "/stat");
        std::string text((std::istreambuf_iterator<char>(stat_file)),
                         std::istreambuf_iterator<char>());
        auto paren = text.rfind(')');
        if (paren == std::string::npos) return -1;
        std::istringstream in(text.substr(paren + 2));
        std::string field;
        // Field 22 is starttime; after ")" we are at field 3.
        for (int i = 3; i <= 22 && in >> field; ++i) {
            if (i == 22) {
                std::ifstream up("/proc/uptime");
                double uptime = 0;
                up >> uptime;
                const double start = std::stod(field) / static_cast<double>(::sysconf(_SC_CLK_TCK));
                return static_cast<long>(uptime - start);
            }
        }
        return -1;
    }

    void check_audit() {
        auto report = admin::verify_audit_log(c_.state_dir);
        if (!report) {
            problem("cannot check the audit log: " + report.error().message,
                    {self_command() + " audit --slug " + c_.slug + " --verify"});
            return;
        }
        if (report->first_bad) {
            problem("the audit log's hash chain is broken at " + *report->first_bad,
                    {self_command() + " audit --slug " + c_.slug + " --verify"});
            return;
        }
        if (report->lines == 0) {
            problem("the audit log in " + c_.state_dir + " is empty or missing", {reinstall()});
            return;
        }
        ok("audit chain intact (" + std::to_string(report->lines) + " events)");
        // Nothing is ever dropped by rotation: the admin prunes (docs/AUDIT-LOG.md).
        const double mib = static_cast<double>(report->bytes) / (1024.0 * 1024.0);
        char size[64];
        std::snprintf(size, sizeof size, "%.1f MiB", mib);
        info("audit log size: " + std::string(size) + " in " + std::to_string(report->segments) +
             " segment(s), from seq " + std::to_string(report->first_seq) + " (" +
             report->first_event + ")" +
             (mib >= 1024.0 ? "; remove old segments with `" + self_command() + " audit --slug " +
                                  c_.slug + " --prune-before YYYY-MM-DD`"
                            : ""));
        if (report->torn_fragments > 0) {
            info(std::to_string(report->torn_fragments) +
                 " torn line(s) from a crash, each followed by a `recovered` event");
        }
    }

    void check_quarantine_and_stuck() {
        if (!spool_) return;  // the spool could not be opened safely: reported above
        const std::string quarantine = c_.spool_dir + "/quarantine";
        std::size_t total = 0;
        std::size_t recent = 0;
        const std::time_t now = std::time(nullptr);
        for_each_entry_at(subdir("quarantine"), [&](const std::string&, const struct stat& st) {
            ++total;
            if (now - st.st_mtime < kQuarantineWindow) ++recent;
        });
        if (recent > 0) {
            problem("quarantine/ is growing: " + std::to_string(recent) +
                        " entr(y/ies) in the last 24 h (" + std::to_string(total) +
                        " in all); something writes malformed or hostile requests: look at them",
                    {"ls -la -- " + shell_quote(quarantine)});
        } else if (total > 0) {
            info("quarantine/ holds " + std::to_string(total) + " old entr(y/ies)");
        } else {
            ok("quarantine/ is empty");
        }
        const std::string requests = c_.spool_dir + "/requests";
        std::size_t stuck = 0;
        for_each_entry_at(subdir("requests"), [&](const std::string& name, const struct stat&) {
            if (name.rfind(".stuck-", 0) != 0) return;
            // Names the agent can plant by the thousand: the first few, then a count.
            if (++stuck > kStuckShown) return;
            problem("requests/" + name +
                        " could not be moved by the drain (not yours?); "
                        "inspect and remove it",
                    {"ls -la -- " + shell_quote(requests + "/" + name),
                     "rm -rf -- " + shell_quote(requests + "/" + name)});
        });
        if (stuck > kStuckShown) {
            problem(std::to_string(stuck - kStuckShown) + " more .stuck-* entries in requests/",
                    {"ls -la -- " + shell_quote(requests)});
        }
    }

    int subdir(std::string_view name) const {
        for (std::size_t i = 0; i < kSpoolSubdirs.size(); ++i) {
            if (kSpoolSubdirs[i] == name) return spool_->subdirs[i].get();
        }
        return -1;
    }

    // Entries of a pinned spool dir, looked at without following anything.
    template <typename Fn>
    static void for_each_entry_at(int dirfd, Fn fn) {
        if (dirfd < 0) return;
        const int dup = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dup < 0) return;
        DIR* dir = ::fdopendir(dup);
        if (dir == nullptr) {
            ::close(dup);
            return;
        }
        while (dirent* e = ::readdir(dir)) {
            std::string name = e->d_name;
            if (name == "." || name == "..") continue;
            struct stat st {};
            if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) fn(name, st);
        }
        ::closedir(dir);
    }

    InstallPaths paths_;
    std::string home_;           // HOME: what an escape as you would reach
    std::string installs_root_;  // <config_home>/hostbridge: the other bridges
    Config c_;
    std::optional<PinnedSpool> spool_;
    std::optional<InstallRecord> record_;
    int problems_ = 0;
};

}  // namespace

namespace {
int run_doctor(Invocation& in) {
    return Doctor(std::move(in.paths), in.dirs).run();
}
}  // namespace

const Subcommand kDoctor = {kCmd, kHelp, kSpecs, Subcommand::Needs::Install, nullptr, run_doctor};

}  // namespace hb::admin
