#include "admin/install/units.hpp"

#include <string>

#include "units/templates.hpp"

namespace hb::admin {
namespace {

// %% for %: the unit file parser expands specifiers in nearly every value.
std::string escape_specifiers(std::string_view value) {
    std::string out;
    for (char c : value) {
        if (c == '%') out.push_back('%');
        out.push_back(c);
    }
    return out;
}

// One ExecStart= word: specifiers and $ doubled; quoted (C escapes inside)
// when it holds anything systemd would split or unescape.
std::string exec_word(std::string_view word) {
    bool quote = word.empty() || word == ";";
    for (char c : word) {
        if (c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '\\') quote = true;
    }
    std::string out;
    if (quote) out.push_back('"');
    for (char c : word) {
        if (c == '%')
            out += "%%";
        else if (c == '$')
            out += "$$";
        else if (quote && (c == '"' || c == '\\')) {
            out.push_back('\\');
            out.push_back(c);
        } else {
            out.push_back(c);
        }
    }
    if (quote) out.push_back('"');
    return out;
}

std::string fill(std::string_view tmpl,
                 const std::vector<std::pair<std::string, std::string>>& vars) {
    std::string out(tmpl);
    for (const auto& [key, value] : vars) {
        const std::string marker = "{{" + key + "}}";
        for (auto pos = out.find(marker); pos != std::string::npos;
             pos = out.find(marker, pos + value.size())) {
            out.replace(pos, marker.size(), value);
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> exec_start_argv(const Config& config, const InstallPaths& paths) {
    std::vector<std::string> argv = {paths.executor, "drain",
                                     "--config",     paths.config_file,
                                     "--linger",     std::to_string(config.drain.linger_seconds)};
    if (config.allow_root) argv.push_back("--allow-root");
    return argv;
}

RenderedUnits render_units(const Config& config, const InstallPaths& paths) {
    std::string exec_start;
    for (const auto& word : exec_start_argv(config, paths)) {
        if (!exec_start.empty()) exec_start.push_back(' ');
        exec_start += exec_word(word);
    }
    const std::vector<std::pair<std::string, std::string>> vars = {
        {"PATH_UNIT", paths.path_unit_name},
        {"SERVICE_UNIT", paths.service_unit_name},
        {"SLUG", config.slug},
        {"PROJECT_DIR", escape_specifiers(config.project_dir)},
        {"SPOOL_DIR", escape_specifiers(config.spool_dir)},
        {"SERVICE_LOG", escape_specifiers(config.state_dir + "/service.log")},
        {"EXEC_START", exec_start},
        {"TIMEOUT_START_SEC", std::to_string(config.drain.time_budget_seconds)},
    };
    return {fill(units::kPathTemplate, vars), fill(units::kServiceTemplate, vars)};
}

std::vector<std::string> parse_exec_start(std::string_view text) {
    std::vector<std::string> argv;
    std::size_t pos = 0;
    std::string_view line;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        std::string_view l = text.substr(pos, end == std::string_view::npos ? end : end - pos);
        pos = end == std::string_view::npos ? text.size() : end + 1;
        if (l.rfind("ExecStart=", 0) == 0) {
            line = l.substr(10);
            break;
        }
    }
    std::string word;
    bool in_word = false;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if ((c == '%' || c == '$') && i + 1 < line.size() && line[i + 1] == c) {
            word.push_back(c);
            in_word = true;
            ++i;
        } else if (c == '"') {
            quoted = !quoted;
            in_word = true;
        } else if (quoted && c == '\\' && i + 1 < line.size()) {
            word.push_back(line[++i]);
        } else if (!quoted && (c == ' ' || c == '\t')) {
            if (in_word) argv.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word.push_back(c);
            in_word = true;
        }
    }
    if (in_word) argv.push_back(word);
    return argv;
}

}  // namespace hb::admin
