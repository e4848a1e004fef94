// `hostbridge policy suggest`: prints (or, with --write, installs) a
// policy.conf that allows exactly what the audit log shows ran.
#include "admin/commands/policy_suggest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "admin/audit/audit_verify.hpp"
#include "admin/commands/commands.hpp"
#include "admin/commands/policy_edit.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/policy_engine_guard.hpp"
#include "admin/util/args.hpp"
#include "admin/util/change_view.hpp"
#include "admin/util/fs_util.hpp"
#include "common/config.hpp"
#include "display/visible.hpp"

namespace hb::admin {

using display::visible;

// What stops or resets things (asks_a_person, ipc/verbs.hpp); up and
// rebuild, where the install holds them, have the engine read what the
// bridge cannot make safe (admin/install/policy_engine_guard.hpp).
bool needs_a_person(Verb verb, const EngineHold& hold) {
    return verb_info(verb).asks_a_person || (is_engine_verb(verb) && !hold.of(verb).empty());
}

std::optional<AuditUse> parse_audit_use(std::string_view line) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return std::nullopt;
    AuditUse use;
    const auto seq = j.find("seq");
    const auto ts = j.find("ts");
    const auto event = j.find("event");
    if (seq == j.end() || !seq->is_number_unsigned() || ts == j.end() || !ts->is_string() ||
        event == j.end() || !event->is_string()) {
        return std::nullopt;
    }
    const auto kind = admin::audit_event_from_name(event->get<std::string>());
    if (!kind) return std::nullopt;
    use.seq = seq->get<std::uint64_t>();
    use.ts = ts->get<std::string>();
    use.event = *kind;
    if (const auto verb = j.find("verb"); verb != j.end() && verb->is_string()) {
        use.verb = verb_from_name(verb->get<std::string>());
    }
    if (const auto arg = j.find("arg"); arg != j.end() && arg->is_string()) {
        use.arg = arg->get<std::string>();
    }
    return use;
}

namespace {

// How often something ran, and from when to when (the log's timestamps).
struct Tally {
    std::uint64_t count = 0;
    std::string first;
    std::string last;
    void add(const std::string& ts) {
        if (count++ == 0 || ts < first) first = ts;
        if (ts > last) last = ts;
    }
    [[nodiscard]] std::string said() const {
        if (count == 1) return "ran once, at " + visible(first);
        return "ran " + std::to_string(count) + " times, " + visible(first) + " to " +
               visible(last);
    }
};

struct VerbUse {
    Tally ran;                             // `started` events
    std::map<std::string, Tally> service;  // by arg; "" when a started had none
    std::uint64_t refused = 0;             // `denied` events naming the verb
    // `allowed` events: a person said yes to each of these on the host (ask),
    // by service as `service` is.
    std::uint64_t allowed = 0;
    std::map<std::string, std::uint64_t> allowed_for;
};

bool contains_name(std::span<const std::string> names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string key_of(Verb verb, const std::string& service = {}) {
    std::string key(verb_info(verb).policy_key);
    if (!service.empty()) key += "." + service;
    return key;
}

std::string person_note(Verb verb, const EngineHold& hold) {
    return needs_a_person(verb, hold) ? "; ask, never auto: a person allows each one" : "";
}

// A person's approvals are not unattended runs to learn from: what a person
// allowed stays theirs to allow.
std::string allowed_note(std::uint64_t allowed) {
    return "; ask, not auto: a person allowed it " + std::to_string(allowed) +
           " time(s) on the host";
}

}  // namespace

Suggestion suggest_policy(std::span<const AuditUse> events, const InstallServices& install,
                          std::string_view slug) {
    std::map<Verb, VerbUse> uses;
    Tally log;
    std::uint64_t first_seq = 0;
    std::uint64_t last_seq = 0;
    std::uint64_t pings = 0;
    for (const AuditUse& e : events) {
        log.add(e.ts);
        if (first_seq == 0 || e.seq < first_seq) first_seq = e.seq;
        last_seq = std::max(last_seq, e.seq);
        if (!e.verb) continue;
        VerbUse& use = uses[*e.verb];
        if (e.event == common::AuditEvent::Started) {
            use.ran.add(e.ts);
            if (verb_arg_kind(*e.verb) != ArgKind::None) use.service[e.arg.value_or("")].add(e.ts);
        } else if (e.event == common::AuditEvent::Allowed) {
            ++use.allowed;
            if (verb_arg_kind(*e.verb) != ArgKind::None) ++use.allowed_for[e.arg.value_or("")];
        } else if (e.event == common::AuditEvent::Denied) {
            ++use.refused;
        } else if (*e.verb == Verb::Ping && e.event == common::AuditEvent::Succeeded) {
            ++pings;
        }
    }

    Suggestion out;
    std::string& t = out.text;
    t += "# policy.conf suggested by `hostbridge policy suggest` for " + visible(slug) + "\n";
    if (events.empty()) {
        t += "# from an empty audit log: nothing ran, so every verb but ping is denied.\n";
    } else {
        t += "# from its audit log, seq " + std::to_string(first_seq) + " to " +
             std::to_string(last_seq) + ", " + visible(log.first) + " to " + visible(log.last) +
             ".\n";
    }
    // Which verbs are never auto follows the install (issue 48: the header
    // said up and rebuild never were while the body proposed MODE_up=auto).
    std::vector<std::string> never_auto;
    for (const Verb verb : kAllVerbs)
        if (needs_a_person(verb, install.hold)) never_auto.emplace_back(verb_name(verb));
    const std::string held_list = and_list(never_auto);
    t +=
        "# It allows exactly the verbs and services that ran a command (a `started`\n"
        "# event); a request that was refused, by the policy or any other check, does\n"
        "# not count. Never `auto`, but `ask` (a person allows each one on the host):\n"
        "# " +
        held_list + ". What this learned from may have been a hostile agent.\n" +
        (install.hold.any()
             ? ""
             : "# up and rebuild are not held on this install (its engine user contains them).\n") +
        "# Whatever a person allowed (an `allowed` event) is `ask` too: their say\n"
        "# stays theirs. Read it before you use it.\n"
        "#\n";
    t += R"(# One MODE_<verb>=MODE per line (auto, deny, dry-run, ask);
# MODE_<verb>.<service>=MODE decides for that service and wins over
# MODE_<verb>. Fails CLOSED: a verb missing or listed twice is denied, and a
# line this hostbridge does not understand denies every command.
)";

    for (const Verb verb : kAllVerbs) {
        const VerbInfo& info = verb_info(verb);
        const std::string name(info.name);
        t += "\n";
        // Each key after its comment, which is also why it is suggested.
        auto key_line = [&](const std::string& key, const std::string& why, common::Mode mode) {
            t += "# " + why + "\n" + key + "=" + std::string(common::mode_name(mode)) + "\n";
            out.why[key] = why;
        };
        if (!info.runs_command) {
            key_line(key_of(verb),
                     name + " runs no command (the executor answers it): always auto" +
                         (pings > 0 ? "; answered " + std::to_string(pings) + " time(s)" : ""),
                     common::Mode::Auto);
            out.verbs.emplace_back(verb, common::Mode::Auto);
            continue;
        }
        const VerbUse* use = uses.count(verb) ? &uses.at(verb) : nullptr;
        const common::Mode used =
            needs_a_person(verb, install.hold) ? common::Mode::Ask : common::Mode::Auto;
        const std::string used_name(common::mode_name(used));
        const std::string refused =
            use && use->refused > 0
                ? "; refused " + std::to_string(use->refused) + " time(s), which is not use"
                : "";
        if (!use || use->ran.count == 0) {
            key_line(key_of(verb), name + ": never ran" + refused, common::Mode::Deny);
            out.verbs.emplace_back(verb, common::Mode::Deny);
            continue;
        }
        out.commands += use->ran.count;
        const ArgKind kind = info.arg;
        if (kind == ArgKind::None) {
            const bool allowed = !needs_a_person(verb, install.hold) && use->allowed > 0;
            const common::Mode mode = allowed ? common::Mode::Ask : used;
            key_line(key_of(verb),
                     name + ": " + use->ran.said() + refused +
                         (allowed ? allowed_note(use->allowed) : person_note(verb, install.hold)),
                     mode);
            out.verbs.emplace_back(verb, mode);
            continue;
        }
        // A verb that takes a service: the ones this install offers for it.
        const std::vector<std::string>& offered =
            kind == ArgKind::Buildable ? install.buildable : install.services;
        std::vector<std::string> known;
        std::string gone;  // comment text: services the install no longer offers
        for (const auto& [service, tally] : use->service) {
            if (!service.empty() && contains_name(offered, service)) {
                known.push_back(service);
                continue;
            }
            const char* why = service.empty() ? "without a service"
                              : contains_name(install.services, service)
                                  ? "not buildable in this install any more"
                                  : "no longer a service of this install";
            gone += "\n#   \"" + visible(service) + "\" (" + why + "): " + tally.said();
        }
        const bool every = !known.empty() && known.size() == offered.size();
        const auto allowed_times = [&](const std::string& service) -> std::uint64_t {
            const auto a = use->allowed_for.find(service);
            return needs_a_person(verb, install.hold) || a == use->allowed_for.end() ? 0
                                                                                     : a->second;
        };
        // Every service ran, each allowed by a person: the verb stays ask.
        const bool all_allowed =
            every && std::all_of(known.begin(), known.end(),
                                 [&](const std::string& sv) { return allowed_times(sv) > 0; });
        std::string listed;
        for (const auto& s : known) listed += (listed.empty() ? "" : ", ") + s;
        std::string why = name + ": " + use->ran.said() + refused;
        if (every) {
            why += ", for every " + std::string(kind == ArgKind::Buildable ? "buildable " : "") +
                   "service of this install (" + listed + ")" +
                   (all_allowed ? allowed_note(use->allowed) : person_note(verb, install.hold));
        } else if (!known.empty()) {
            why += ", for " + listed + " (" + std::to_string(known.size()) + " of its " +
                   std::to_string(offered.size()) +
                   (kind == ArgKind::Buildable ? " buildable" : "") +
                   " services): only those are allowed";
        } else {
            why += ", only for services this install does not offer for it: denied";
        }
        out.why[key_of(verb)] = why;
        t += "# " + why + "\n";
        if (!gone.empty()) {
            t += "# Named here, not in a key (a key naming a service this install does not\n"
                 "# offer would deny every command or have no effect):" +
                 gone + "\n";
        }
        if (all_allowed) {
            t += key_of(verb) + "=ask\n";
            out.verbs.emplace_back(verb, common::Mode::Ask);
            continue;
        }
        t += key_of(verb) + "=" + (every ? used_name : std::string("deny")) + "\n";
        out.verbs.emplace_back(verb, every ? used : common::Mode::Deny);
        for (const auto& service : known) {
            const std::uint64_t allowed = allowed_times(service);
            // With every service allowed at the verb's mode, only those a
            // person allowed need a key of their own.
            if (every && allowed == 0) continue;
            const common::Mode mode = allowed > 0 ? common::Mode::Ask : used;
            key_line(key_of(verb, service),
                     name + " " + service + ": " + use->service.at(service).said() +
                         (allowed > 0 ? allowed_note(allowed) : person_note(verb, install.hold)),
                     mode);
            out.service_rules.push_back({verb, service, mode});
        }
    }
    return out;
}

namespace {

// How much a mode lets run: deny runs nothing, dry-run only answers, ask
// runs what a person allows, auto runs it unattended.
int looseness(common::Mode mode) {
    switch (mode) {
        case common::Mode::Deny:
            return 0;
        case common::Mode::DryRun:
            return 1;
        case common::Mode::Ask:
            return 2;
        case common::Mode::Auto:
            return 3;
    }
    return 0;
}

common::Mode tighter(common::Mode a, common::Mode b) {
    return looseness(b) < looseness(a) ? b : a;
}

std::string mode_text(common::Mode mode) {
    return std::string(common::mode_name(mode));
}

// A KEY=value line of policy.conf: its key, or empty for a comment, a
// blank line or anything else.
std::string_view key_of_line(std::string_view line) {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line.front() == '#') return {};
    const auto eq = line.find('=');
    return eq == std::string_view::npos ? std::string_view() : line.substr(0, eq);
}

}  // namespace

Result<Tightened> tighten_policy(std::string_view current, const Suggestion& learned,
                                 std::span<const std::string> services,
                                 std::span<const std::string> buildable) {
    const common::Policy now = common::parse_policy(current, services);
    if (!now.not_understood.empty()) {
        return make_error("policy.conf " + now.not_understood +
                          ", so every command is denied already; fix that line first");
    }
    const common::Policy learnt = common::parse_policy(learned.text, services);
    const auto why_of = [&](const std::string& key, const std::string& fallback) {
        const auto it = learned.why.find(key);
        return it != learned.why.end() ? it->second : fallback;
    };
    Tightened out;
    // A key line after its marker; `said` is the summary's middle.
    auto mark = [&](const std::string& key, common::Mode mode, const std::string& said,
                    const std::string& why) {
        out.summary.push_back(key + ": " + said + " (" + why + ")");
        return "# policy suggest: " + said + "; " + why + "\n" + key + "=" + mode_text(mode) + "\n";
    };
    std::size_t from = 0;
    while (from < current.size()) {
        const std::size_t nl = current.find('\n', from);
        const std::size_t end = nl == std::string_view::npos ? current.size() : nl + 1;
        std::string line(current.substr(from, end - from));
        from = end;
        const std::string key(key_of_line(line));
        for (const Verb verb : kAllVerbs) {
            const std::string base = key_of(verb);
            if (key != base && !key.starts_with(base + ".")) continue;
            const std::string service = key == base ? "" : key.substr(base.size() + 1);
            // Only a line in force: a key set twice is denied whatever it says.
            const common::VerbMode is = now.rule(verb, service);
            if (is.source != common::ModeSource::Set) break;
            const std::string was = mode_text(is.mode);
            const common::Mode to = tighter(is.mode, learnt.mode(verb, service));
            if (to != is.mode) {
                line = mark(key, to, was + " -> " + mode_text(to),
                            why_of(key, why_of(base, std::string(verb_name(verb)))));
            }
            if (!service.empty() || verb_arg_kind(verb) == ArgKind::None) break;
            // The verb's own line: each service it covers that the learned
            // policy holds apart from it keeps the tighter of the two.
            const std::span<const std::string> offered =
                verb_arg_kind(verb) == ArgKind::Buildable ? buildable : services;
            for (const std::string& sv : offered) {
                if (now.service_rule(verb, sv) != nullptr) continue;  // its own line
                const common::Mode keep = tighter(is.mode, learnt.mode(verb, sv));
                if (keep == to) continue;
                if (!line.ends_with('\n')) line += '\n';
                line += mark(key_of(verb, sv), keep,
                             keep == is.mode
                                 ? "added, stays " + was + " as " + key + " was"
                                 : "added, " + was + " under " + key + " -> " + mode_text(keep),
                             why_of(key_of(verb, sv), why_of(base, base)));
            }
            break;
        }
        out.text += line;
    }
    return out;
}

namespace {

constexpr std::string_view kCmd = "policy";

const char* const kHelp = R"(usage: hostbridge policy suggest [--slug SLUG] [--write [--yes]]
       hostbridge policy edit [--slug SLUG] [--from FILE]

`policy edit` opens a copy of the install's policy.conf in $VISUAL, $EDITOR
or editor (split into words and run without a shell); with --from FILE,
FILE's text is the edit and no editor runs (for scripts). Once the editor
exits 0, the copy is read as the executor reads it and, when every line is
understood and policy.conf did not change meanwhile, put in place (its
change shown), and AGENT.md and the agent's tool manifest are written anew
from it. A copy that is refused (each line not understood is named, with
why) stays beside policy.conf (policy.conf.edit) and the next `policy
edit` starts from it. After editing policy.conf by hand, `policy edit`
saved without a change writes what the agent reads anew.

`policy suggest`:

Learns from the install's audit log which verbs and services ran a command
(a `started` event; a request refused by the policy or any other check is
not use) and proposes the install's policy.conf, as it is now, with only
the changes that tighten it: a key whose verb or service never ran becomes
`deny`; down and init, and up and rebuild where the install holds them for
a person (no engine user), become `ask`, never `auto`, and so does every
verb or service a person allowed under `ask`. A line a person wrote is
never loosened: a key is only ever made tighter (deny, dry-run, ask, auto,
tightest first). A verb whose own line tightens while some of its services
ran gets a MODE_<verb>.<service> key keeping each of those as it was.
Every other line is kept; each changed or added key follows a comment
starting "# policy suggest:", and a summary, one line per change, comes
first (on stderr, above the file on stdout; with --write, above the diff).
An audit log that fails `hostbridge audit --verify`, and a policy.conf with
a line this hostbridge does not understand, are refused.

  --slug SLUG   the install (default: the one whose project holds the cwd)
  --from FILE   with edit: FILE's text is the edit, instead of an editor's
  --write       replace the install's policy.conf with it (same file mode),
                after showing the summary and the diff and asking
  --yes         with --write: replace it without asking (read the diff first)

Nothing is written without --write. With --write, but neither --yes nor a
terminal on stdin, nothing is written (exit 1).
Exit: 0 printed or written (or nothing to change), 1 failed or declined,
2 usage error.
)";

const OptionSpec kSpecs[] = {
    {"slug", true, false}, {"write", false, false}, {"yes", false, false}, {"from", true, false}};

std::optional<int> check_policy(const ParsedArgs& args) {
    if (args.positional.size() != 1 ||
        (args.positional[0] != "suggest" && args.positional[0] != "edit")) {
        print_error(kCmd,
                    "the policy commands are `suggest` and `edit`; see hostbridge policy --help");
        return kExitUsage;
    }
    if (args.positional[0] == "edit" && (args.has("write") || args.has("yes"))) {
        print_error(kCmd, "--write and --yes go with `policy suggest`");
        return kExitUsage;
    }
    if (args.positional[0] == "suggest" && args.has("from")) {
        print_error(kCmd, "--from goes with `policy edit`");
        return kExitUsage;
    }
    if (args.has("yes") && !args.has("write")) {
        print_error(kCmd, "--yes goes with --write");
        return kExitUsage;
    }
    return std::nullopt;
}

// The records of the log from its start to `last_seq` (what was verified),
// oldest first: complete lines only.
Result<std::vector<AuditUse>> read_uses(const std::string& state_dir, std::uint64_t first_seq,
                                        std::uint64_t last_seq) {
    auto files = admin::audit_log_files(state_dir);
    if (!files) return files.error();
    std::vector<AuditUse> uses;
    for (const auto& file : *files) {
        std::ifstream in(state_dir + "/" + file, std::ios::binary);
        if (!in) return make_error("cannot open " + state_dir + "/" + file);
        std::string line;
        while (std::getline(in, line)) {
            if (in.eof()) break;  // no newline after it: torn, or being written
            auto use = parse_audit_use(line);
            if (!use || use->seq < first_seq || use->seq > last_seq) continue;
            uses.push_back(std::move(*use));
        }
    }
    return uses;
}

// What the executor will make of the text: every line understood, no
// warning, and each mode the one suggested. Empty when so.
std::string self_check(const Suggestion& s, std::span<const std::string> services) {
    const common::Policy parsed = common::parse_policy(s.text, services);
    if (!parsed.not_understood.empty()) return parsed.not_understood;
    if (!parsed.warnings.empty()) return parsed.warnings.front();
    for (const auto& [verb, mode] : s.verbs) {
        if (parsed.mode(verb) != mode) return "the mode of " + key_of(verb) + " differs";
    }
    for (const auto& rule : s.service_rules) {
        if (parsed.mode(rule.verb, rule.service) != rule.mode)
            return "the mode of " + key_of(rule.verb, rule.service) + " differs";
    }
    if (parsed.service_rules.size() != s.service_rules.size()) return "a per-service key differs";
    return {};
}

bool confirm() {
    std::cerr << "Replace policy.conf with the suggested policy? [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    return answer == "y" || answer == "Y" || answer == "yes" || answer == "YES";
}

// Each change on a line of its own, for a person to read before the diff.
void print_summary(std::ostream& out, const Tightened& t, const std::string& path) {
    if (t.summary.empty()) {
        out << visible(path)
            << ": nothing to tighten; the audit log shows no use the policy allows beyond\n";
        return;
    }
    out << visible(path) << ": " << t.summary.size()
        << " change(s), each tightens it (nothing is loosened):\n";
    for (const std::string& line : t.summary) out << "  " << line << "\n";
}

int write_policy(const Config& config, const std::string& old, const Tightened& tightened,
                 bool yes) {
    const std::string& path = config.policy_file;
    const std::string& text = tightened.text;
    if (old == text) {
        std::cout << visible(path) << " already holds exactly this policy; nothing written\n";
        return kExitOk;
    }
    mode_t mode = 0644;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;

    auto diff = render_change(path + " (now)", old, path + " (suggested)", text);
    if (!diff) {
        print_error(kCmd, diff.error().message);
        return kExitFailure;
    }
    print_summary(std::cout, tightened, path);
    std::cout << "=== " << visible(path) << ": with those changes\n" << *diff;
    std::cout.flush();
    if (!yes) {
        if (::isatty(STDIN_FILENO) == 0) {
            print_error(kCmd,
                        "no terminal to confirm on, so nothing was written; read the change "
                        "above and re-run with --yes");
            print_fix(self_command() + " policy suggest --slug " + config.slug + " --write --yes",
                      true);
            return kExitFailure;
        }
        if (!confirm()) {
            print_error(kCmd, "not confirmed; nothing was written");
            return kExitFailure;
        }
    }
    // Replace only what was shown: an edit meanwhile is not overwritten.
    auto again = read_file_if_exists(path, 1u << 20);
    if (!again || !again->has_value() || **again != old) {
        print_error(kCmd, path + " changed while this ran; nothing was written, run it again");
        return kExitFailure;
    }
    if (auto wrote = write_file_atomic(path, text, mode); !wrote) {
        print_error(kCmd, wrote.error().message);
        return kExitFailure;
    }
    std::cout << "wrote " << visible(path) << "; the executor reads it for the next request\n";
    // What the agent is told follows (admin/install/agent_files.hpp).
    return refresh_what_the_agent_reads(config);
}

int run_policy(Invocation& in) {
    auto config = load_config(in.paths.config_file);
    if (!config) {
        print_error(kCmd, "cannot read " + in.paths.config_file + ": " + config.error().message);
        return kExitFailure;
    }
    if (in.args.positional[0] == "edit") return run_policy_edit(*config, in.args.get("from"));
    const std::string verify_fix = self_command() + " audit --slug " + config->slug + " --verify";
    auto report = admin::verify_audit_log(config->state_dir);
    if (!report) {
        print_error(kCmd, "cannot check the audit log, so nothing is learned from it: " +
                              report.error().message);
        print_fix(verify_fix, true);
        return kExitFailure;
    }
    if (report->first_bad) {
        print_error(kCmd, "the audit log fails verification (" + visible(*report->first_bad) +
                              "), so nothing is learned from it; this shows the problem:");
        print_fix(verify_fix, true);
        return kExitFailure;
    }
    // Only what was verified: events appended since are left for next time.
    auto uses = read_uses(config->state_dir, report->first_seq, report->last_seq);
    if (!uses) {
        print_error(kCmd, "cannot read the audit log: " + uses.error().message);
        return kExitFailure;
    }
    const Suggestion suggestion = suggest_policy(
        *uses, {config->services, config->buildable, engine_hold(*config)}, config->slug);
    if (const std::string problem = self_check(suggestion, config->services); !problem.empty()) {
        print_error(kCmd, "internal error: the suggested policy would not be read as meant (" +
                              problem + "); nothing is suggested");
        return kExitFailure;
    }
    // Starts from the person's file: what they wrote is only ever tightened.
    auto current = read_file_if_exists(config->policy_file, 1u << 20);
    if (!current || !current->has_value()) {
        print_error(kCmd, "cannot start from the current policy: " + visible(config->policy_file) +
                              (current ? " is missing (every verb is denied now)"
                                       : ": " + current.error().message));
        print_fix(self_command() + " install --slug " + config->slug, true);
        return kExitFailure;
    }
    auto tightened = tighten_policy(**current, suggestion, config->services, config->buildable);
    if (!tightened) {
        print_error(kCmd, "cannot start from the current policy: " + tightened.error().message);
        return kExitFailure;
    }
    if (const common::Policy parsed = common::parse_policy(tightened->text, config->services);
        !parsed.not_understood.empty()) {
        print_error(kCmd, "internal error: the tightened policy would not be read as meant (" +
                              parsed.not_understood + "); nothing is suggested");
        return kExitFailure;
    }
    if (suggestion.commands == 0) {
        print_warning(kCmd,
                      "the audit log shows no command that ran: every verb but ping is "
                      "proposed denied");
    }
    if (!in.args.has("write")) {
        // The summary on stderr: stdout is the whole file, to read or keep.
        print_summary(std::cerr, *tightened, config->policy_file);
        std::cout << tightened->text;
        return kExitOk;
    }
    return write_policy(*config, **current, *tightened, in.args.has("yes"));
}

}  // namespace

const Subcommand kPolicy = {kCmd,         kHelp,      kSpecs, Subcommand::Needs::Install,
                            check_policy, run_policy, 1};

}  // namespace hb::admin
