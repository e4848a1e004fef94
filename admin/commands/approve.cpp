// `hostbridge approve`: shows what changed in each trusted file since it was
// approved, asks, then re-pins exactly the bytes that were shown.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "admin/commands/commands.hpp"
#include "admin/compose/build_plan.hpp"
#include "admin/compose/compose_reader.hpp"
#include "admin/compose/compose_render.hpp"
#include "admin/compose/unpinned_binds.hpp"
#include "admin/install/config_write.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/tcb.hpp"
#include "admin/util/args.hpp"
#include "admin/util/change_view.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/slug.hpp"
#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "display/visible.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr std::string_view kCmd = "approve";

const char* const kHelp = R"(usage: hostbridge approve [--slug SLUG] [--yes]

Shows a unified diff of every trusted project file (the stack script, the
compose file and what it pulls in, .env, each --tcb file) against the copy
approved last, with each side's size and SHA-256; control, bidirectional and
zero-width characters are shown as escapes (\x1b, \u202e), and a file that
is not plain text (NUL or control bytes, invalid UTF-8) also as a hex dump of
every changed byte. It asks for confirmation, then pins the new SHA-256, keeps the
new copy and writes an `approved` event to the audit log. Files the compose
file newly pulls in are pinned too. Until then the integrity gate refuses
every verb that runs a command.

  --slug SLUG   the install (default: the one whose project holds the cwd)
  --yes         approve without asking (read the diff first)

Without --yes and without a terminal on stdin nothing changes (exit 1).
Exit: 0 approved or nothing to approve, 1 failed or declined, 2 usage error.
)";

const OptionSpec kSpecs[] = {{"slug", true, false}, {"yes", false, false}};

struct Change {
    TcbSnapshot now;
    std::optional<std::string> approved;  // the approved copy's content
    bool new_pin = false;
};

// What compose will read in the run tree, as a diff against what it read
// so far; false when that cannot be shown.
// Made visible like every other change (admin/util/change_view.hpp): the rendering
// carries names and values the agent wrote.
bool show_rendered(const InstallPaths& paths, const RenderPlan& plan) {
    for (const auto& file : plan.files) {
        auto old = read_rendered_copy(paths, file.rel);
        if (old && *old == file.text) continue;
        if (auto shown = show_change("rendered/" + file.rel,
                                     "as rendered for the run tree (what compose reads)",
                                     old ? *old : std::nullopt, file.text);
            !shown) {
            print_error(kCmd, shown.error().message);
            return false;
        }
    }
    return true;
}

bool confirm(std::size_t count) {
    std::cerr << "Approve " << count << " change(s) and pin them? [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}

}  // namespace

namespace {
int run_approve(Invocation& in) {
    const InstallPaths* paths = &in.paths;
    const ParsedArgs* args = &in.args;
    auto config = load_config(paths->config_file);
    if (!config) {
        print_error(kCmd, "cannot read " + paths->config_file + ": " + config.error().message);
        return kExitFailure;
    }
    auto record = load_install_record(paths->record_file);

    std::vector<Change> changes;
    for (const auto& pin : config->tcb) {
        auto now = snapshot_tcb_file(config->project_dir, pin.path);
        if (!now) {
            print_error(kCmd, "trusted file " + now.error().message +
                                  ", which cannot be approved: the integrity gate refuses it; "
                                  "replace it with a regular file first");
            return kExitFailure;
        }
        if (now->sha256 == pin.sha256) continue;
        auto approved = read_approved_copy(*paths, pin.path);
        changes.push_back({std::move(*now), approved ? *approved : std::nullopt, false});
    }
    // The compose model as it will be approved, read by the one strict
    // reader from exactly the bytes shown below: changed files as they are
    // now, unchanged ones from their approved copies, and files the compose
    // file newly pulls in (pinned too, or the gate would never look at them).
    std::optional<RenderPlan> render;
    std::vector<std::string> unpinned = config->unpinned_binds;
    std::optional<BuildSettings> builds = config->build;
    if (record && record->has_value() && !(*record)->compose_file.empty()) {
        const std::string& project = config->project_dir;
        FileSource as_approved = [&](const std::string& abs) -> Result<std::optional<std::string>> {
            auto rel = project_relative(project, abs);
            if (!rel) return read_file_if_exists(abs, kMaxComposeFileBytes + 1);
            for (const auto& change : changes) {
                if (change.now.rel == *rel) return change.now.content;
            }
            bool pinned = std::any_of(config->tcb.begin(), config->tcb.end(),
                                      [&](const TcbPin& p) { return p.path == *rel; });
            if (pinned) {
                // Unchanged since approved: its approved copy, or (that copy
                // lost) the file itself if it still matches the pin.
                auto copy = read_approved_copy(*paths, *rel);
                if (!copy || copy->has_value()) return copy;
                auto now = snapshot_tcb_file(project, *rel);
                if (!now) return now.error();
                for (const auto& p : config->tcb) {
                    if (p.path == *rel && p.sha256 != now->sha256) {
                        return make_error(*rel +
                                          " changed while approve read it; run approve again");
                    }
                }
                return now->content;
            }
            auto now = snapshot_tcb_file(project, *rel);
            if (!now) return now.error();
            changes.push_back({*now, std::nullopt, true});
            return now->content;
        };
        // Pinned as install chose (rootless podman: admin/commands/install.cpp pin_run_dir).
        // Labelled as install labelled it (the project name, passed as -p).
        std::string labelled;
        if (compose_backend(config->backend.kind))
            labelled = config->build ? config->build->project
                                     : (config->settle ? config->settle->project : "");
        auto model = read_compose(project + "/" + (*record)->compose_file, as_approved, project,
                                  config->pins ? config->run_dir : std::string(), labelled);
        if (!model) {
            print_error(kCmd, "the compose model as it would be approved is refused: " +
                                  model.error().message + "; fix the file, then approve again");
            return kExitFailure;
        }
        // A new bind below the checkout root that nothing pins is refused
        // unless accepted by name (admin/compose/unpinned_binds.hpp).
        if (compose_backend(config->backend.kind) && !config->pins) {
            auto checked = check_unpinned_binds(model->checkout_binds, config->unpinned_binds,
                                                config->backend);
            if (!checked) {
                print_error(kCmd, "the compose model as it would be approved is refused: " +
                                      checked.error().message);
                return kExitFailure;
            }
            unpinned = checked->accepted;
        }
        // Referenced files the reader did not open (an env_file) are pinned too.
        for (const auto& abs : model->referenced_files) {
            auto rel = project_relative(project, abs);
            if (!rel) continue;
            bool known = std::any_of(config->tcb.begin(), config->tcb.end(),
                                     [&](const TcbPin& p) { return p.path == *rel; }) ||
                         std::any_of(changes.begin(), changes.end(),
                                     [&](const Change& c) { return c.now.rel == *rel; });
            if (known) continue;
            auto now = snapshot_tcb_file(project, *rel);
            if (!now) {
                print_error(kCmd, "trusted file " + now.error().message +
                                      ", which cannot be approved; replace it with a regular file");
                return kExitFailure;
            }
            changes.push_back({std::move(*now), std::nullopt, true});
        }
        render = plan_render(project, *model);
        // The build step's words come from the same reading (admin/compose/build_plan.hpp).
        // An install older than snapshot builds gets them from `upgrade`.
        // A stack's builds are what install recorded (--build-context).
        if (config->build && compose_backend(config->backend.kind)) {
            std::vector<std::string> notes;
            const std::string engine = config->build->engine;
            builds = plan_builds({project, config->backend.file, podman_compose(config->backend),
                                  engine, &model->builds, &config->buildable, &config->build,
                                  config->build->buildah, config->build->project},
                                 notes);
            for (const auto& note : notes) print_warning(kCmd, note);
        }
    }
    // A rendering that differs from the stored one (a newer hostbridge reads
    // the same files differently) is approved like a changed file.
    bool render_changed = false;
    if (render) {
        std::vector<TcbPin> pins;
        for (const auto& file : render->files) pins.push_back({file.rel, file.sha256});
        render_changed = pins != config->rendered ||
                         render->checkout_paths != config->checkout_paths ||
                         builds != config->build ||
                         (config->settle && config->settle->definitions !=
                                                bridged_definitions(*render, config->services));
        for (const auto& file : render->files) {
            auto old = read_rendered_copy(*paths, file.rel);
            if (!old || *old != file.text) render_changed = true;
        }
    }
    if (changes.empty() && !render_changed) {
        std::cout << "nothing to approve: every trusted file of " << visible(config->slug)
                  << " matches its pin\n";
        return kExitOk;
    }

    for (const auto& change : changes) {
        const char* what = change.new_pin        ? "newly pulled in by the compose file"
                           : !change.now.content ? "deleted"
                           : change.approved     ? "changed"
                                                 : "created (it was pinned as absent)";
        if (auto shown = show_change(change.now.rel, what, change.approved, change.now.content);
            !shown) {
            print_error(kCmd, shown.error().message);
            return kExitFailure;
        }
    }
    if (render && !show_rendered(*paths, *render)) return kExitFailure;
    // What the approved builds' FROM and COPY --from may name, unchanged by
    // approve (docs/BUILDS.md, "What a build may name").
    if (const auto& b = builds; b && !b->services.empty()) {
        std::cout << "base images a build may name (besides its stages, scratch and the "
                     "services' images):";
        if (!b->base_images || b->base_images->empty()) std::cout << " none";
        if (b->base_images)
            for (const auto& image : *b->base_images) std::cout << " " << visible(image);
        std::cout << "\n";
    }
    std::cout.flush();

    if (!args->has("yes")) {
        if (::isatty(STDIN_FILENO) == 0) {
            print_error(kCmd,
                        "no terminal to confirm on, so nothing was approved; read the diff "
                        "above and re-run with --yes");
            print_fix(self_command() + " approve --slug " + config->slug + " --yes", true);
            return kExitFailure;
        }
        if (!confirm(changes.size() + (render_changed ? 1 : 0))) {
            print_error(kCmd, "not confirmed; nothing was approved");
            return kExitFailure;
        }
    }

    // Pin exactly what was shown: the snapshots, not a second read.
    Config updated = *config;
    std::string reason;
    for (const auto& change : changes) {
        auto stored = store_approved_copy(*paths, change.now);
        if (!stored) {
            print_error(kCmd, stored.error().message);
            return kExitFailure;
        }
        if (change.new_pin) {
            updated.tcb.push_back({change.now.rel, change.now.sha256});
        } else {
            for (auto& pin : updated.tcb) {
                if (pin.path == change.now.rel) pin.sha256 = change.now.sha256;
            }
        }
        reason += (reason.empty() ? "" : ", ") + change.now.rel + " " +
                  (change.now.sha256 ? change.now.sha256->substr(0, 12) : std::string("absent"));
    }
    std::sort(updated.tcb.begin(), updated.tcb.end(),
              [](const TcbPin& a, const TcbPin& b) { return a.path < b.path; });
    if (render) {
        std::vector<std::string> stale;
        for (const auto& pin : config->rendered) stale.push_back(pin.path);
        if (auto stored = store_rendered(*paths, *render, stale); !stored) {
            print_error(kCmd, stored.error().message);
            return kExitFailure;
        }
        updated.rendered.clear();
        for (const auto& file : render->files) updated.rendered.push_back({file.rel, file.sha256});
        updated.checkout_paths = render->checkout_paths;
        updated.build = builds;
        if (updated.pins) updated.pins->sources = render->pinned_sources;
        if (updated.settle)
            updated.settle->definitions = bridged_definitions(*render, updated.services);
        updated.unpinned_binds = unpinned;
    }
    const std::string text = serialize_config(updated);
    if (auto valid = parse_config(text); !valid) {
        print_error(kCmd, "the updated configuration would be invalid: " + valid.error().message);
        return kExitFailure;
    }
    if (auto wrote = write_file_atomic(paths->config_file, text, 0644); !wrote) {
        print_error(kCmd, wrote.error().message);
        return kExitFailure;
    }
    auto log = common::AuditLog::open(paths->state_dir);
    common::AuditRecord event;
    event.event = common::AuditEvent::Approved;
    event.reason = "pinned " + (reason.empty() ? std::string("no file") : reason) +
                   (render_changed ? "; rendered compose files updated" : "");
    if (!log || !log->append(event, /*sync=*/true)) {
        print_error(kCmd,
                    "the new pins are written, but the `approved` event could not be "
                    "written to the audit log in " +
                        paths->state_dir);
        return kExitFailure;
    }
    std::cout << "approved and pinned " << changes.size() << " file(s) of " << visible(config->slug)
              << "\n";
    return kExitOk;
}

}  // namespace

const Subcommand kApprove = {kCmd, kHelp, kSpecs, Subcommand::Needs::Install, nullptr, run_approve};

}  // namespace hb::admin
