// `hostbridge approve`: shows what changed in each trusted file since it was
// approved, asks, then re-pins exactly the bytes that were shown.
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "cli/args.hpp"
#include "cli/change_view.hpp"
#include "cli/commands.hpp"
#include "cli/compose_reader.hpp"
#include "cli/fs_util.hpp"
#include "cli/install_record.hpp"
#include "cli/locate.hpp"
#include "cli/slug.hpp"
#include "cli/tcb.hpp"
#include "cli/visible.hpp"
#include "executor/audit_log.hpp"
#include "executor/config.hpp"

namespace hb::cli {
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

bool confirm(std::size_t count) {
    std::cerr << "Approve " << count << " change(s) and pin them? [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}

}  // namespace

int run_approve(int argc, char** argv) {
    auto args = parse_args(std::span<char* const>(argv, static_cast<std::size_t>(argc)), kSpecs);
    if (!args) {
        print_error(kCmd, args.error().message);
        return kExitUsage;
    }
    if (args->help) {
        std::cout << kHelp;
        return kExitOk;
    }
    auto slug = args->get("slug");
    if (slug && !is_valid_slug(*slug)) {
        print_error(kCmd, "--slug " + *slug + " is not a valid slug");
        return kExitUsage;
    }
    auto dirs = host_dirs_from_env();
    if (!dirs) {
        print_error(kCmd, dirs.error().message);
        return kExitFailure;
    }
    auto paths = locate_install(*dirs, slug);
    if (!paths) {
        print_error(kCmd, paths.error().message);
        return kExitFailure;
    }
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
    // A newly approved compose file may pull in new files: pin them too, or
    // the gate would never look at them.
    if (record && record->has_value() && !(*record)->compose_file.empty()) {
        auto model =
            read_compose(config->project_dir + "/" + (*record)->compose_file, current_files());
        if (!model) {
            print_warning(kCmd, "cannot read the compose file to find the files it pulls in: " +
                                    model.error().message);
        } else {
            for (const auto& abs : model->referenced_files) {
                auto rel = project_relative(config->project_dir, abs);
                if (!rel) continue;
                bool pinned = std::any_of(config->tcb.begin(), config->tcb.end(),
                                          [&](const TcbPin& p) { return p.path == *rel; });
                if (pinned) continue;
                auto now = snapshot_tcb_file(config->project_dir, *rel);
                if (!now) {
                    print_error(kCmd,
                                "trusted file " + now.error().message +
                                    ", which cannot be approved; replace it with a regular file");
                    return kExitFailure;
                }
                changes.push_back({std::move(*now), std::nullopt, true});
            }
        }
    }
    if (changes.empty()) {
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
    std::cout.flush();

    if (!args->has("yes")) {
        if (::isatty(STDIN_FILENO) == 0) {
            print_error(kCmd,
                        "no terminal to confirm on, so nothing was approved; read the diff "
                        "above and re-run with --yes");
            print_fix(self_command() + " approve --slug " + config->slug + " --yes", true);
            return kExitFailure;
        }
        if (!confirm(changes.size())) {
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
    const std::string text = serialize_config(updated);
    if (auto valid = parse_config(text); !valid) {
        print_error(kCmd, "the updated configuration would be invalid: " + valid.error().message);
        return kExitFailure;
    }
    if (auto wrote = write_file_atomic(paths->config_file, text, 0644); !wrote) {
        print_error(kCmd, wrote.error().message);
        return kExitFailure;
    }
    auto log = exec::AuditLog::open(paths->state_dir);
    exec::AuditRecord event;
    event.event = exec::AuditEvent::Approved;
    event.reason = "pinned " + reason;
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

}  // namespace hb::cli
