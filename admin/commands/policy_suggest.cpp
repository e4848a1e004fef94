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
#include "admin/install/install_record.hpp"
#include "admin/install/policy_engine_guard.hpp"
#include "admin/util/args.hpp"
#include "admin/util/change_view.hpp"
#include "admin/util/fs_util.hpp"
#include "display/visible.hpp"
#include "common/config.hpp"

namespace hb::admin {

using display::visible;

// down and init stop or reset things; up and rebuild, where the install
// holds them, have the engine read what the bridge cannot make safe
// (admin/install/policy_engine_guard.hpp).
bool needs_a_person(Verb verb, const EngineHold& hold) {
    return verb == Verb::Down || verb == Verb::Init ||
           (is_engine_verb(verb) && !hold.of(verb).empty());
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
    t += R"(# It allows exactly the verbs and services that ran a command (a `started`
# event); a request that was refused, by the policy or any other check, does
# not count. down, init, up and rebuild are `ask` (a person allows each one
# on the host), never `auto`: what this learned from may have been a hostile
# agent. So is whatever a person allowed (an `allowed` event): their say
# stays theirs. Read it before you use it.
#
# One MODE_<verb>=MODE per line (auto, deny, dry-run, ask);
# MODE_<verb>.<service>=MODE decides for that service and wins over
# MODE_<verb>. Fails CLOSED: a verb missing or listed twice is denied, and a
# line this hostbridge does not understand denies every command.
)";

    for (const Verb verb : kAllVerbs) {
        const VerbInfo& info = verb_info(verb);
        const std::string name(info.name);
        t += "\n";
        if (!info.runs_command) {
            t += "# " + name + " runs no command (the executor answers it): always auto";
            if (pings > 0) t += "; answered " + std::to_string(pings) + " time(s)";
            t += "\n" + key_of(verb) + "=auto\n";
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
            t += "# " + name + ": never ran" + refused + "\n" + key_of(verb) + "=deny\n";
            out.verbs.emplace_back(verb, common::Mode::Deny);
            continue;
        }
        out.commands += use->ran.count;
        const ArgKind kind = info.arg;
        if (kind == ArgKind::None) {
            const bool allowed = !needs_a_person(verb, install.hold) && use->allowed > 0;
            const common::Mode mode = allowed ? common::Mode::Ask : used;
            t += "# " + name + ": " + use->ran.said() + refused +
                 (allowed ? allowed_note(use->allowed) : person_note(verb, install.hold)) + "\n" +
                 key_of(verb) + "=" + std::string(common::mode_name(mode)) + "\n";
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
        t += "# " + name + ": " + use->ran.said() + refused;
        if (every) {
            t += ", for every " + std::string(kind == ArgKind::Buildable ? "buildable " : "") +
                 "service of this install (" + listed + ")" +
                 (all_allowed ? allowed_note(use->allowed) : person_note(verb, install.hold)) +
                 "\n";
        } else if (!known.empty()) {
            t += ", for " + listed + " (" + std::to_string(known.size()) + " of its " +
                 std::to_string(offered.size()) + (kind == ArgKind::Buildable ? " buildable" : "") +
                 " services): only those are allowed\n";
        } else {
            t += ", only for services this install does not offer for it: denied\n";
        }
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
            t += "# " + name + " " + service + ": " + use->service.at(service).said() +
                 (allowed > 0 ? allowed_note(allowed) : person_note(verb, install.hold)) + "\n" +
                 key_of(verb, service) + "=" + std::string(common::mode_name(mode)) + "\n";
            out.service_rules.push_back({verb, service, mode});
        }
    }
    return out;
}

namespace {

constexpr std::string_view kCmd = "policy";

const char* const kHelp = R"(usage: hostbridge policy suggest [--slug SLUG] [--write [--yes]]

Reads the install's audit log and prints a complete policy.conf that allows
exactly the verbs and services that ran a command (a `started` event), with
a comment before each key saying how often and from when to when. A request
refused by the policy or any other check is not use. down, init, up and
rebuild are suggested as `ask` (a person allows each one on the host), never
`auto`: what it learns from may have been a hostile agent; so is every verb
or service a person allowed under `ask` (an `allowed` event). ping is always `auto`;
every verb that never ran is `deny`. A verb that takes a service and ran for
only some of them is `deny` with a MODE_<verb>.<service> key for each one
that ran. Services the install no longer has are named in a comment only.
An audit log that fails `hostbridge audit --verify` is refused.

  --slug SLUG   the install (default: the one whose project holds the cwd)
  --write       replace the install's policy.conf with it (same file mode),
                after showing the change and asking for confirmation
  --yes         with --write: replace it without asking (read the diff first)

Nothing is written without --write. With --write, but neither --yes nor a
terminal on stdin, nothing is written (exit 1).
Exit: 0 printed or written (or nothing to change), 1 failed or declined,
2 usage error.
)";

const OptionSpec kSpecs[] = {{"slug", true, false}, {"write", false, false}, {"yes", false, false}};

std::optional<int> check_policy(const ParsedArgs& args) {
    if (args.positional.size() != 1 || args.positional[0] != "suggest") {
        print_error(kCmd, "the only policy command is `suggest`; see hostbridge policy --help");
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

int write_policy(const Config& config, const std::string& text, bool yes) {
    const std::string& path = config.policy_file;
    auto old = read_file_if_exists(path, 1u << 20);
    if (!old) {
        print_error(kCmd, "cannot read " + path + ": " + old.error().message);
        return kExitFailure;
    }
    if (*old == text) {
        std::cout << path << " already holds exactly this policy; nothing written\n";
        return kExitOk;
    }
    mode_t mode = 0644;
    struct stat st {};
    if (old->has_value() && ::lstat(path.c_str(), &st) == 0) mode = st.st_mode & 07777;

    auto diff = render_change(path + " (now)", *old, path + " (suggested)", text);
    if (!diff) {
        print_error(kCmd, diff.error().message);
        return kExitFailure;
    }
    std::cout << "=== " << visible(path) << ": the suggested policy replaces it\n" << *diff;
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
    if (!again || *again != *old) {
        print_error(kCmd, path + " changed while this ran; nothing was written, run it again");
        return kExitFailure;
    }
    if (auto wrote = write_file_atomic(path, text, mode); !wrote) {
        print_error(kCmd, wrote.error().message);
        return kExitFailure;
    }
    std::cout << "wrote " << visible(path) << "; the executor reads it for the next request\n";
    return kExitOk;
}

int run_policy(Invocation& in) {
    auto config = load_config(in.paths.config_file);
    if (!config) {
        print_error(kCmd, "cannot read " + in.paths.config_file + ": " + config.error().message);
        return kExitFailure;
    }
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
    if (suggestion.commands == 0) {
        print_warning(kCmd,
                      "the audit log shows no command that ran: every verb but ping is "
                      "denied");
    }
    if (!in.args.has("write")) {
        std::cout << suggestion.text;
        return kExitOk;
    }
    return write_policy(*config, suggestion.text, in.args.has("yes"));
}

}  // namespace

const Subcommand kPolicy = {kCmd,         kHelp,      kSpecs, Subcommand::Needs::Install,
                            check_policy, run_policy, 1};

}  // namespace hb::admin
