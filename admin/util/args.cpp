#include "admin/util/args.hpp"

#include "display/visible.hpp"

#include <cstdio>
#include <iostream>

namespace hb::admin {

using display::visible;

bool ParsedArgs::has(std::string_view name) const {
    return values.count(std::string(name)) > 0;
}

std::optional<std::string> ParsedArgs::get(std::string_view name) const {
    auto it = values.find(std::string(name));
    if (it == values.end() || it->second.empty()) return std::nullopt;
    return it->second.back();
}

std::vector<std::string> ParsedArgs::all(std::string_view name) const {
    auto it = values.find(std::string(name));
    return it == values.end() ? std::vector<std::string>{} : it->second;
}

Result<ParsedArgs> parse_args(std::span<char* const> argv, std::span<const OptionSpec> specs,
                              std::size_t max_positional) {
    ParsedArgs parsed;
    bool options_done = false;
    for (std::size_t i = 1; i < argv.size(); ++i) {
        std::string_view arg = argv[i];
        if (options_done || arg.size() < 2 || arg[0] != '-' || arg == "-") {
            if (parsed.positional.size() >= max_positional) {
                return make_error("unexpected argument '" + std::string(arg) + "'");
            }
            parsed.positional.emplace_back(arg);
            continue;
        }
        if (arg == "--") {
            options_done = true;
            continue;
        }
        if (arg == "--help" || arg == "-h") {
            parsed.help = true;
            continue;
        }
        if (arg.rfind("--", 0) != 0) return make_error("unknown option " + std::string(arg));
        std::string_view name = arg.substr(2);
        std::optional<std::string> inline_value;
        if (auto eq = name.find('='); eq != std::string_view::npos) {
            inline_value = std::string(name.substr(eq + 1));
            name = name.substr(0, eq);
        }
        const OptionSpec* spec = nullptr;
        for (const auto& s : specs) {
            if (s.name == name) spec = &s;
        }
        if (spec == nullptr) return make_error("unknown option --" + std::string(name));
        std::string value;
        if (spec->takes_value) {
            if (inline_value) {
                value = *inline_value;
            } else if (i + 1 < argv.size()) {
                value = argv[++i];
            } else {
                return make_error("option --" + std::string(name) + " needs a value");
            }
        } else if (inline_value) {
            return make_error("option --" + std::string(name) + " takes no value");
        }
        auto& slot = parsed.values[std::string(name)];
        if (!slot.empty() && !spec->repeatable) {
            return make_error("option --" + std::string(name) + " is given twice");
        }
        slot.push_back(std::move(value));
    }
    return parsed;
}

void print_error(std::string_view command, std::string_view sentence) {
    std::cout.flush();
    std::cerr << "hostbridge " << command << ": " << visible(sentence) << std::endl;
}

std::string and_list(const std::vector<std::string>& words) {
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i)
        out += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
    return out;
}

void print_warning(std::string_view command, std::string_view sentence) {
    std::cout.flush();
    std::cerr << "hostbridge " << command << ": warning: " << visible(sentence) << std::endl;
}

void print_fix(std::string_view command_line, bool to_stderr) {
    std::cout.flush();
    (to_stderr ? std::cerr : std::cout) << visible(command_line) << std::endl;
}

std::optional<long> parse_number(std::string_view text, long max) {
    if (text.empty() || text.size() > 12) return std::nullopt;
    long value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    if (value > max) return std::nullopt;
    return value;
}

}  // namespace hb::admin
