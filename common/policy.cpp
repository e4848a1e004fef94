#include "common/policy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "ipc/enum_names.hpp"
#include "ipc/result.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/verbs.hpp"

namespace hb::common {
namespace {

constexpr std::size_t kMaxPolicyBytes = 64 * 1024;
constexpr std::size_t kMaxEchoed = 64;  // bytes of a bad key/value quoted in a warning

std::size_t index_of(Verb verb) {
    for (std::size_t i = 0; i < kAllVerbs.size(); ++i) {
        if (kAllVerbs[i] == verb) return i;
    }
    return 0;  // unreachable for a valid Verb
}

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
}

// Quotes file content in a warning without letting control bytes through.
std::string echo(std::string_view s) {
    std::string out = "\"";
    for (std::size_t i = 0; i < s.size() && i < kMaxEchoed; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            sys::append_hex_byte(out, c);
        }
    }
    if (s.size() > kMaxEchoed) out += "...";
    return out + "\"";
}

bool has_blank(std::string_view s) {
    return s.find_first_of(" \t\r") != std::string_view::npos;
}

Policy all_denied(std::string warning) {
    Policy policy;
    for (VerbMode& vm : policy.verbs) vm = {Mode::Deny, ModeSource::FileUnavailable};
    policy.warnings.push_back(std::move(warning));
    return policy;
}

std::string_view basename_of(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

// The spelling of each mode in policy.conf, in Mode's order.
constexpr auto kModeNames = dense_names<Mode::Ask>({"auto", "deny", "dry-run", "ask"}, "deny");

std::string_view mode_name(Mode mode) {
    return name_of(kModeNames, mode);
}

VerbMode Policy::rule(Verb verb, std::string_view service) const {
    // A rule this executor cannot read may have been meant to deny this very
    // command: nothing that runs a command is allowed until it is fixed.
    if (!not_understood.empty() && verb_info(verb).runs_command) {
        return {Mode::Deny, ModeSource::NotUnderstood};
    }
    if (const ServiceRule* own = service_rule(verb, service)) return own->mode;
    return verbs[index_of(verb)];
}

const ServiceRule* Policy::service_rule(Verb verb, std::string_view service) const {
    const auto it =
        std::find_if(service_rules.begin(), service_rules.end(),
                     [&](const ServiceRule& r) { return r.verb == verb && r.service == service; });
    return it == service_rules.end() ? nullptr : &*it;
}

std::string Policy::deny_detail(Verb verb, std::string_view service) const {
    std::string key(verb_info(verb).policy_key);
    const VerbMode vm = rule(verb, service);
    if (vm.source != ModeSource::NotUnderstood && service_rule(verb, service) != nullptr) {
        key += "." + std::string(service);
    }
    switch (vm.source) {
        case ModeSource::Set:
            return key + "=" + std::string(mode_name(vm.mode)) + " in policy.conf";
        case ModeSource::Missing:
            return key + " is missing from policy.conf";
        case ModeSource::Duplicate:
            return key + " appears more than once in policy.conf";
        case ModeSource::NotUnderstood:
            return "policy.conf " + not_understood +
                   ", so every command is denied until it is fixed";
        case ModeSource::FileUnavailable:
            return "policy.conf could not be read";
    }
    return "policy";
}

namespace {

// One line's key and value, understood: the verb, its service or "", the mode.
struct Line {
    Verb verb;
    std::string_view service;
    Mode mode;
};

// Why a KEY=value this executor cannot use is not understood, or the line.
Result<Line> understand(std::string_view key, std::string_view value,
                        std::span<const std::string> services) {
    if (!key.starts_with(verbs_detail::kPolicyPrefix)) {
        return make_error("unknown key " + echo(key));
    }
    std::string_view verb_text = key.substr(verbs_detail::kPolicyPrefix.size());
    std::string_view service;
    const auto dot = verb_text.find('.');
    if (dot != std::string_view::npos) {
        service = verb_text.substr(dot + 1);
        verb_text = verb_text.substr(0, dot);
    }
    const auto verb = verb_from_name(verb_text);
    if (!verb) return make_error("unknown verb in key " + echo(key));
    if (dot != std::string_view::npos) {
        if (verb_arg_kind(*verb) == ArgKind::None) {
            return make_error("key " + echo(key) + ": " + std::string(verb_text) +
                              " takes no service");
        }
        if (std::find(services.begin(), services.end(), service) == services.end()) {
            return make_error("key " + echo(key) + " names no service of this install");
        }
    }
    if (const auto mode = value_of(kModeNames, value)) return Line{*verb, service, *mode};
    return make_error("unknown mode " + echo(value) + " for " + echo(key) +
                      " (auto, deny, ask or dry-run)");
}

}  // namespace

Policy parse_policy(std::string_view text, std::span<const std::string> services,
                    std::string_view name) {
    Policy policy;
    std::array<bool, kAllVerbs.size()> seen{};
    std::vector<std::pair<std::size_t, Verb>> verb_denied;  // warning index, its verb
    const std::string where(name);
    const auto not_understood = [&](const std::string& at_line, const std::string& why) {
        if (policy.not_understood.empty()) policy.not_understood = at_line + ": " + why;
        policy.warnings.push_back(where + " " + at_line + ": " + why +
                                  "; every command is denied until it is fixed");
    };

    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        const auto nl = text.find('\n');
        std::string_view line = trim(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const std::string at = "line " + std::to_string(line_no);

        if (line.empty() || line.front() == '#') continue;
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            not_understood(at, "not KEY=value: " + echo(line));
            continue;
        }
        const std::string_view key = line.substr(0, eq);
        const std::string_view value = line.substr(eq + 1);
        if (has_blank(key) || has_blank(value)) {
            not_understood(at, "whitespace inside KEY=value: " + echo(line));
            continue;
        }
        auto understood = understand(key, value, services);
        if (!understood) {
            not_understood(at, understood.error().message);
            continue;
        }
        const VerbMode set{understood->mode, ModeSource::Set};
        const std::string again = where + " " + at + ": " + std::string(key) + " appears again: ";
        if (understood->service.empty()) {
            const std::size_t i = index_of(understood->verb);
            if (seen[i]) {
                policy.verbs[i] = {Mode::Deny, ModeSource::Duplicate};
                verb_denied.emplace_back(policy.warnings.size(), understood->verb);
                policy.warnings.push_back(again + std::string(verb_name(understood->verb)) +
                                          " is denied");
                continue;
            }
            seen[i] = true;
            policy.verbs[i] = set;
            continue;
        }
        auto& rules = policy.service_rules;
        if (const ServiceRule* earlier =
                policy.service_rule(understood->verb, understood->service)) {
            rules[static_cast<std::size_t>(earlier - rules.data())].mode = {Mode::Deny,
                                                                            ModeSource::Duplicate};
            policy.warnings.push_back(again + std::string(verb_name(understood->verb)) + " " +
                                      std::string(understood->service) + " is denied");
            continue;
        }
        rules.push_back({understood->verb, std::string(understood->service), set});
    }
    for (std::size_t i = 0; i < kAllVerbs.size(); ++i) {
        if (!seen[i]) {
            verb_denied.emplace_back(policy.warnings.size(), kAllVerbs[i]);
            policy.warnings.push_back(where + ": " + std::string(kVerbTable[i].policy_key) +
                                      " is missing: " + std::string(verb_name(kAllVerbs[i])) +
                                      " is denied");
        }
    }
    // Known only once the whole file is read: the services that a rule of
    // their own still decides for.
    for (const auto& [warning, verb] : verb_denied) {
        std::string own;
        for (const ServiceRule& r : policy.service_rules) {
            if (r.verb == verb) own += (own.empty() ? "" : ", ") + r.service;
        }
        if (!own.empty()) policy.warnings[warning] += ", but for " + own + " (a rule of their own)";
    }
    return policy;
}

Policy load_policy(const std::string& path, std::span<const std::string> services) {
    const std::string name(basename_of(path));
    // O_NONBLOCK: a FIFO planted in place of the file must not hang the drain.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) {
        const int err = errno;
        if (err == ELOOP) return all_denied(path + " is a symlink; every verb is denied");
        return all_denied(path + " cannot be opened (" + std::strerror(err) +
                          "); every verb is denied");
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return all_denied(path + " is not a regular file; every verb is denied");
    }
    std::string text;
    if (!sys::read_all(fd.get(), text, kMaxPolicyBytes)) {
        return all_denied(path + " cannot be read (" + std::strerror(errno) +
                          "); every verb is denied");
    }
    if (text.size() > kMaxPolicyBytes) {
        return all_denied(path + " is larger than 64 KiB; every verb is denied");
    }
    return parse_policy(text, services, name);
}

}  // namespace hb::common
