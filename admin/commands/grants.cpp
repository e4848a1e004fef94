// `hostbridge allow --for DURATION VERB [SERVICE]` writes a grant,
// `hostbridge revoke` removes grants; both audited. The file's format, its
// checks and the executor's use of it are common/grant.hpp's.
#include "admin/commands/grants.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iostream>

#include "admin/commands/commands.hpp"
#include "admin/commands/pending.hpp"
#include "admin/install/install_record.hpp"
#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "common/engine_hold.hpp"
#include "common/grant.hpp"
#include "common/policy.hpp"
#include "display/visible.hpp"
#include "engines/registry.hpp"
#include "ipc/sys.hpp"

namespace hb::admin {

using common::Grant;
using display::visible;

namespace {

constexpr std::int64_t kMinGrantSeconds = 60;

std::string service_words(const Grant& g) {
    return g.service ? " " + visible(*g.service) : std::string();
}

// "restart web until 2026-12-07T18:09:30Z (in 29 min), 99 of 100 runs left [id]"
std::string grant_line(const Grant& g, std::int64_t now) {
    return visible(verb_name(g.verb)) + service_words(g) + " until " + sys::format_utc(g.until) +
           " (in " + shown_duration(g.until - now) + "), " + std::to_string(g.runs_left()) +
           " of " + std::to_string(g.runs) + " runs left [" + g.id + "]";
}

struct Scan {
    std::vector<Grant> live;
    std::vector<std::string> refused;  // names
    std::vector<std::string> reasons;  // why each was refused
};

// Every file in grants/, read with the executor's reader, under the lock
// held by the caller; what ended by itself is removed.
Result<Scan> scan(int dir_fd, std::int64_t now) {
    std::vector<std::string> names;
    if (!sys::list_dir(dir_fd, names)) return make_error(sys::errno_text("cannot list grants/"));
    Scan out;
    for (const std::string& name : names) {
        if (name.starts_with(".tmp-")) continue;  // a write under way, or a crash's leftover
        auto grant = common::read_grant(dir_fd, name);
        if (!grant) {
            out.refused.push_back(name);
            out.reasons.push_back(grant.error().message);
        } else if (!grant->live(now)) {
            ::unlinkat(dir_fd, name.c_str(), 0);
        } else {
            out.live.push_back(std::move(*grant));
        }
    }
    return out;
}

Result<void> audit(const std::string& state_dir, common::AuditRecord record) {
    record.actor = "admin";
    auto log = common::AuditLog::open(state_dir);
    if (!log) return log.error();
    return log->append(record, /*sync=*/true);
}

// The mode the executor applies to VERB on SERVICE must be `ask` because
// policy.conf says so: a grant never lifts deny or dry-run, and never a
// hold for containment, which no person's grant makes safe.
Result<void> check_grantable(const Config& config, Verb verb, const std::string& service) {
    const common::Policy policy = common::load_policy(config.policy_file, config.services);
    const common::EngineHold hold = exec::engine_hold(config);
    const std::string what = std::string(verb_name(verb)) + (service.empty() ? "" : " " + service);
    if (common::held_for_containment(config, hold, verb)) {
        return make_error(what + " is held for containment on this install (" + hold.of(verb) +
                          "): a grant never runs it unattended (SECURITY.md, \"Two postures\")");
    }
    const common::Mode mode = policy.mode(verb, service);
    if (mode == common::Mode::Ask) return {};
    if (mode == common::Mode::Auto) return make_error(what + " runs unattended already (auto)");
    return make_error("policy.conf has " + what + " " + std::string(common::mode_name(mode)) +
                      "; a grant only lifts `ask`");
}

Result<std::string> random_id() {
    unsigned char bytes[8];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
        return make_error(sys::errno_text("cannot draw a grant id"));
    }
    return sys::lower_hex(bytes, sizeof bytes);
}

}  // namespace

Result<std::int64_t> parse_grant_duration(std::string_view text) {
    const std::string bad = "`" + visible(text) + "` is not a duration: ";
    if (text.empty()) return make_error("--for needs a duration such as 30m or 2h");
    const char unit = text.back();
    const std::int64_t scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
    if (scale == 0) return make_error(bad + "end it in s, m or h (30m, 2h)");
    const auto number = parse_number(text.substr(0, text.size() - 1), 1000000);
    if (!number) return make_error(bad + "a whole number, then s, m or h (30m, 2h)");
    const std::int64_t seconds = *number * scale;
    if (seconds < kMinGrantSeconds || seconds > common::kMaxGrantSeconds) {
        return make_error("--for " + visible(text) + " is out of range: from 1m to " +
                          std::to_string(common::kMaxGrantSeconds / 3600) + "h");
    }
    return seconds;
}

std::optional<int> check_grant(const ParsedArgs& args) {
    if (auto duration = parse_grant_duration(*args.get("for")); !duration) {
        print_error("allow", duration.error().message);
        return kExitUsage;
    }
    if (args.positional.empty()) {
        print_error("allow", "--for needs the verb it grants: allow --for 30m VERB [SERVICE]");
        return kExitUsage;
    }
    const auto verb = verb_from_name(args.positional[0]);
    if (!verb) {
        print_error("allow", "`" + visible(args.positional[0]) + "` is not a verb");
        return kExitUsage;
    }
    const bool takes_service = verb_arg_kind(*verb) != ArgKind::None;
    if (takes_service != (args.positional.size() == 2)) {
        print_error("allow", takes_service ? args.positional[0] + " takes a SERVICE: name one"
                                           : args.positional[0] + " takes no SERVICE");
        return kExitUsage;
    }
    if (const auto runs = args.get("runs")) {
        const auto n = parse_number(*runs, common::kMaxGrantRuns);
        if (!n || *n < 1) {
            print_error("allow",
                        "--runs takes a number from 1 to " + std::to_string(common::kMaxGrantRuns));
            return kExitUsage;
        }
    }
    return std::nullopt;
}

int run_grant(Invocation& in) {
    auto config = load_config(in.paths.config_file);
    if (!config) {
        print_error("allow", config.error().message);
        return kExitFailure;
    }
    const Verb verb = *verb_from_name(in.args.positional[0]);
    const std::string service = in.args.positional.size() == 2 ? in.args.positional[1] : "";
    if (!service.empty()) {
        const auto& names =
            verb_arg_kind(verb) == ArgKind::Buildable ? config->buildable : config->services;
        if (std::find(names.begin(), names.end(), service) == names.end()) {
            print_error("allow",
                        "`" + visible(service) + "` is not a " +
                            (verb_arg_kind(verb) == ArgKind::Buildable ? "buildable " : "") +
                            "service of " + visible(config->slug));
            return kExitFailure;
        }
    }
    if (auto grantable = check_grantable(*config, verb, service); !grantable) {
        print_error("allow", grantable.error().message + "; nothing was granted");
        return kExitFailure;
    }
    auto id = random_id();
    auto dir = common::open_grant_dir(config->state_dir, true);
    if (!id || !dir) {
        print_error("allow", (!id ? id.error() : dir.error()).message);
        return kExitFailure;
    }
    const std::int64_t now = std::time(nullptr);
    Grant grant;
    grant.id = *id;
    grant.verb = verb;
    if (!service.empty()) grant.service = service;
    grant.granted_at = now;
    grant.until = now + *parse_grant_duration(*in.args.get("for"));
    grant.runs = static_cast<std::uint32_t>(
        parse_number(in.args.get("runs").value_or(""), common::kMaxGrantRuns)
            .value_or(common::kDefaultGrantRuns));
    // Audited first: a grant is never in force without its record.
    common::AuditRecord event;
    event.event = common::AuditEvent::Granted;
    event.verb = verb;
    if (grant.service) event.arg = grant.service;
    event.reason = "granted by a person until " + sys::format_utc(grant.until) + " for " +
                   std::to_string(grant.runs) + " runs";
    event.detail = nlohmann::ordered_json{{"grant", grant.id}};
    if (auto audited = audit(config->state_dir, event); !audited) {
        print_error("allow", "cannot write the audit log: " + audited.error().message +
                                 "; nothing was granted");
        return kExitFailure;
    }
    const int fd = (*dir)->get();
    Result<void> written = common::lock_grants(fd);
    if (written) written = common::write_grant(fd, grant);
    if (!written) {
        print_error("allow", written.error().message);
        return kExitFailure;
    }
    std::cout << "granted: " << grant_line(grant, now) << "\n"
              << "the executor runs these requests without asking until then; `" << self_command()
              << " revoke --slug " << config->slug << " " << grant.id << "` ends it sooner\n";
    return kExitOk;
}

std::vector<std::string> grant_lines(const std::string& state_dir) {
    auto dir = common::open_grant_dir(state_dir, false);
    if (!dir) return {"grants: " + dir.error().message};
    if (!*dir) return {};
    const int fd = (**dir).get();
    if (auto locked = common::lock_grants(fd); !locked) return {locked.error().message};
    const std::int64_t now = std::time(nullptr);
    auto found = scan(fd, now);
    if (!found) return {found.error().message};
    std::vector<std::string> lines;
    for (const Grant& g : found->live) lines.push_back("grant: " + grant_line(g, now));
    for (std::size_t i = 0; i < found->refused.size(); ++i) {
        lines.push_back("refused, grants nothing: grants/" + visible(found->refused[i]) + " (" +
                        visible(found->reasons[i]) + "); `hostbridge revoke` removes it");
    }
    return lines;
}

namespace {

const char* const kRevokeHelp = R"(usage: hostbridge revoke [--slug SLUG] [ID | VERB [SERVICE]]

Ends grants made by `hostbridge allow --for` before their time: the one
whose ID `pending` shows, every grant of VERB (on SERVICE only, when
named), or, with no argument, every grant of the install, together with
any file in its grants/ that grants nothing because it was refused. Each
revocation is written to the audit log (`revoked`). A grant ends by itself
at its deadline or after its last run.

Exit: 0 revoked (or nothing to revoke), 1 failed, 2 usage error.
)";

const OptionSpec kSlugOnly[] = {{"slug", true, false}};

std::optional<int> check_revoke(const ParsedArgs& args) {
    if (args.positional.empty()) return std::nullopt;
    const std::string& first = args.positional[0];
    if (sys::is_lower_hex(first, 16) && args.positional.size() == 1) return std::nullopt;
    if (!verb_from_name(first)) {
        print_error("revoke", "`" + visible(first) +
                                  "` is neither a grant's id (`hostbridge pending` shows it) nor "
                                  "a verb");
        return kExitUsage;
    }
    return std::nullopt;
}

int run_revoke(Invocation& in) {
    auto config = load_config(in.paths.config_file);
    if (!config) {
        print_error("revoke", config.error().message);
        return kExitFailure;
    }
    auto dir = common::open_grant_dir(config->state_dir, false);
    if (!dir) {
        print_error("revoke", dir.error().message);
        return kExitFailure;
    }
    if (!*dir) {
        std::cout << "no grant to revoke\n";
        return kExitOk;
    }
    const int fd = (**dir).get();
    if (auto locked = common::lock_grants(fd); !locked) {
        print_error("revoke", locked.error().message);
        return kExitFailure;
    }
    auto found = scan(fd, std::time(nullptr));
    if (!found) {
        print_error("revoke", found.error().message);
        return kExitFailure;
    }
    const auto& args = in.args.positional;
    const auto verb = args.empty() ? std::nullopt : verb_from_name(args[0]);
    std::vector<std::string> ids;
    for (const Grant& g : found->live) {
        const bool chosen = args.empty() || g.id == args[0] ||
                            (verb && g.verb == *verb && (args.size() < 2 || g.service == args[1]));
        if (chosen) ids.push_back(g.id);
    }
    if (args.empty()) ids.insert(ids.end(), found->refused.begin(), found->refused.end());
    if (ids.empty()) {
        std::cout << "no grant to revoke\n";
        return kExitOk;
    }
    common::AuditRecord event;
    event.event = common::AuditEvent::Revoked;
    event.reason = "revoked by a person";
    event.detail = nlohmann::ordered_json{{"grants", ids}};
    int status = kExitOk;
    if (auto audited = audit(config->state_dir, event); !audited) {
        // Ending a grant is the safe way round: done all the same, said.
        print_error("revoke", "cannot write the audit log: " + audited.error().message +
                                  "; the grants are removed all the same");
        status = kExitFailure;
    }
    for (const std::string& id : ids) {
        if (::unlinkat(fd, id.c_str(), 0) != 0) {
            print_error("revoke", sys::errno_text("cannot remove grants/" + visible(id)));
            status = kExitFailure;
        } else {
            std::cout << "revoked " << visible(id) << "\n";
        }
    }
    return status;
}

}  // namespace

const Subcommand kRevoke{"revoke",     kRevokeHelp, kSlugOnly, Subcommand::Needs::Install,
                         check_revoke, run_revoke,  2};

}  // namespace hb::admin
