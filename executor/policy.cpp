#include "executor/policy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/verbs.hpp"

namespace hb::exec {
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

Mode Policy::mode(Verb verb) const {
    return verbs[index_of(verb)].mode;
}

std::string Policy::deny_detail(Verb verb) const {
    const std::string key(verb_info(verb).policy_key);
    switch (verbs[index_of(verb)].source) {
        case ModeSource::Set:
            return key + "=deny in policy.conf";
        case ModeSource::Missing:
            return key + " is missing from policy.conf";
        case ModeSource::UnknownMode:
            return key + " has an unknown mode in policy.conf";
        case ModeSource::Duplicate:
            return key + " appears more than once in policy.conf";
        case ModeSource::FileUnavailable:
            return "policy.conf could not be read";
    }
    return "policy";
}

Policy parse_policy(std::string_view text, std::string_view name) {
    Policy policy;
    std::array<bool, kAllVerbs.size()> seen{};
    const std::string where(name);

    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        const auto nl = text.find('\n');
        std::string_view line = trim(text.substr(0, nl));
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const std::string at = where + " line " + std::to_string(line_no) + ": ";

        if (line.empty() || line.front() == '#') continue;
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) {
            policy.warnings.push_back(at + "not KEY=value, ignored: " + echo(line));
            continue;
        }
        const std::string_view key = line.substr(0, eq);
        const std::string_view value = line.substr(eq + 1);
        if (has_blank(key) || has_blank(value)) {
            policy.warnings.push_back(at + "whitespace inside KEY=value, ignored: " + echo(line));
            continue;
        }
        if (!key.starts_with("MODE_")) {
            policy.warnings.push_back(at + "unknown key " + echo(key) + ", ignored");
            continue;
        }
        const auto verb = verb_from_name(key.substr(5));
        if (!verb) {
            policy.warnings.push_back(at + "unknown verb in key " + echo(key) +
                                      ", ignored (no file can enable a verb outside the table)");
            continue;
        }
        const std::size_t i = index_of(*verb);
        if (seen[i]) {
            policy.verbs[i] = {Mode::Deny, ModeSource::Duplicate};
            policy.warnings.push_back(at + std::string(key) + " appears again: " +
                                      std::string(verb_name(*verb)) + " is denied");
            continue;
        }
        seen[i] = true;
        if (value == "auto") {
            policy.verbs[i] = {Mode::Auto, ModeSource::Set};
        } else if (value == "deny") {
            policy.verbs[i] = {Mode::Deny, ModeSource::Set};
        } else {
            policy.verbs[i] = {Mode::Deny, ModeSource::UnknownMode};
            policy.warnings.push_back(
                at + "unknown mode " + echo(value) + " for " + std::string(key) +
                " (auto or deny): " + std::string(verb_name(*verb)) + " is denied");
        }
    }
    for (std::size_t i = 0; i < kAllVerbs.size(); ++i) {
        if (!seen[i]) {
            policy.warnings.push_back(where + ": " + std::string(kVerbTable[i].policy_key) +
                                      " is missing: " + std::string(verb_name(kAllVerbs[i])) +
                                      " is denied");
        }
    }
    return policy;
}

Policy load_policy(const std::string& path) {
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
    return parse_policy(text, name);
}

}  // namespace hb::exec
