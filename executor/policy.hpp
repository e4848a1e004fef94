// policy.conf: MODE_<verb>=auto|deny, parsed as KEY=value, never sourced.
//
// Strict format (docs/DECIDE-AND-RUN.md, "Policy"): one KEY=value per line, no whitespace
// around '=' or inside key or value (blanks at the start and end of a line,
// CR included, are ignored); '#' starts a comment line; blank lines are
// allowed. Everything fails closed: a verb that is missing, has an unknown
// mode or appears twice is denied; an unreadable file denies every verb.
// Unknown keys and malformed lines change nothing and become warnings.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/wire.hpp"

namespace hb::exec {

enum class Mode { Auto, Deny };

// Why a verb has its mode; everything but Set means Deny.
enum class ModeSource { Set, Missing, UnknownMode, Duplicate, FileUnavailable };

struct VerbMode {
    Mode mode = Mode::Deny;
    ModeSource source = ModeSource::Missing;
};

struct Policy {
    std::array<VerbMode, kAllVerbs.size()> verbs{};  // in kAllVerbs order
    std::vector<std::string> warnings;               // one sentence each, for doctor

    [[nodiscard]] Mode mode(Verb verb) const;
    // Why `verb` is denied, e.g. "MODE_up=deny in policy.conf",
    // "MODE_up is missing from policy.conf".
    [[nodiscard]] std::string deny_detail(Verb verb) const;
};

// `name` is how warnings refer to the file (its basename).
Policy parse_policy(std::string_view text, std::string_view name = "policy.conf");

// Reads the file with O_NOFOLLOW (a symlink is refused); it must be a regular
// file of at most 64 KiB. A file that cannot be read denies every verb, with
// a warning saying why.
Policy load_policy(const std::string& path);

}  // namespace hb::exec
