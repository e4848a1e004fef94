// policy.conf: MODE_<verb>=mode and MODE_<verb>.<service>=mode, parsed as
// KEY=value, never sourced.
//
// Strict format (docs/DECIDE-AND-RUN.md, "Policy"): one KEY=value per line, no whitespace
// around '=' or inside key or value (blanks at the start and end of a line,
// CR included, are ignored); '#' starts a comment line; blank lines are
// allowed. Everything fails closed: a verb that is missing or appears twice
// is denied; a line this executor does not understand (an unknown key,
// verb, service or mode, a malformed line) denies every verb that runs a
// command, so a rule written for a newer executor never goes unenforced;
// an unreadable file denies every verb.
#pragma once

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/wire.hpp"

namespace hb::common {

// auto: run it; deny: refuse it; dry-run: pass every check, run nothing,
// answer what would have run; ask: pass every check, then hold it until a
// person allows or denies it on the host (executor/decide.cpp, held.hpp).
enum class Mode { Auto, Deny, DryRun, Ask };

// Why a verb has its mode; everything but Set means Deny.
enum class ModeSource { Set, Missing, Duplicate, NotUnderstood, FileUnavailable };

struct VerbMode {
    Mode mode = Mode::Deny;
    ModeSource source = ModeSource::Missing;
};

// MODE_<verb>.<service>: wins over MODE_<verb> for that service.
struct ServiceRule {
    Verb verb;
    std::string service;
    VerbMode mode;
};

struct Policy {
    std::array<VerbMode, kAllVerbs.size()> verbs{};  // in kAllVerbs order
    std::vector<ServiceRule> service_rules;          // in file order, one per key
    // The first line this executor could not understand ("line 7: unknown
    // mode \"ask\" for MODE_down"), empty when none: every command is denied.
    std::string not_understood;
    std::vector<std::string> warnings;  // one sentence each, for doctor

    // What applies to `verb` with the service `service` names (empty: the
    // verb takes none): the more specific key wins.
    [[nodiscard]] VerbMode rule(Verb verb, std::string_view service = {}) const;
    [[nodiscard]] Mode mode(Verb verb, std::string_view service = {}) const {
        return rule(verb, service).mode;
    }
    // The MODE_<verb>.<service> rule for them, or nullptr.
    [[nodiscard]] const ServiceRule* service_rule(Verb verb, std::string_view service) const;
    // Why it is denied, e.g. "MODE_up=deny in policy.conf",
    // "MODE_restart.db=deny in policy.conf", "MODE_up is missing from policy.conf".
    [[nodiscard]] std::string deny_detail(Verb verb, std::string_view service = {}) const;
};

// The spelling of a mode in policy.conf ("auto", "deny", "dry-run", "ask").
std::string_view mode_name(Mode mode);

// `services`: this install's services (bridge.json), which a per-service key
// must name. `name` is how warnings refer to the file (its basename).
Policy parse_policy(std::string_view text, std::span<const std::string> services = {},
                    std::string_view name = "policy.conf");

// Reads the file with O_NOFOLLOW (a symlink is refused); it must be a regular
// file of at most 64 KiB. A file that cannot be read denies every verb, with
// a warning saying why.
Policy load_policy(const std::string& path, std::span<const std::string> services = {});

}  // namespace hb::common
