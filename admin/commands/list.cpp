// `hostbridge list`: every installed slug, its project dir, whether its path
// unit is enabled, and its last audit event.
#include <sys/stat.h>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "admin/audit/audit_verify.hpp"
#include "admin/commands/commands.hpp"
#include "admin/commands/grants.hpp"
#include "admin/install/systemd_user.hpp"
#include "admin/install/versions.hpp"
#include "admin/util/args.hpp"
#include "admin/util/locate.hpp"
#include "common/audit_log.hpp"
#include "common/config.hpp"
#include "display/visible.hpp"

namespace hb::admin {

using display::table_cell;

namespace {

constexpr std::string_view kCmd = "list";

const char* const kHelp = R"(usage: hostbridge list

Lists every install of this user: its slug, its project directory, whether
its path unit is enabled (or `--no-systemd`), the version of its executor
(`upgrade` brings it to this hostbridge's) and the last thing its agent
did (the newest audit event of a request); under an install's row, each
of its live grants (`hostbridge allow --for`).

Exit: 0 listed (possibly nothing), 1 failed, 2 usage error.
)";

// The last thing the agent did: the newest complete audit line that names a
// request, as "TIME EVENT VERB [ARG]" (an admin's event, such as
// `installed`, would hide it). Read from the newest two segments.
std::string last_event(const std::string& state_dir) {
    auto files = admin::audit_log_files(state_dir);
    std::vector<std::string> newest;
    if (files && !files->empty()) {
        for (auto it = files->rbegin(); it != files->rend() && newest.size() < 2; ++it)
            newest.push_back(*it);
    } else {
        newest.push_back(std::string(common::kAuditLogName));
    }
    for (const auto& file : newest) {
        std::ifstream in(state_dir + "/" + file, std::ios::binary);
        std::string line;
        std::string last;
        while (std::getline(in, line)) {
            if (in.eof()) break;  // an unterminated last line is being written
            if (line.find("\"request\":\"") != std::string::npos) last = line;
        }
        if (last.empty()) continue;
        auto j = nlohmann::json::parse(last, nullptr, false);
        if (!j.is_object()) return "(unreadable)";
        std::string out = j.value("ts", "?") + " " + j.value("event", "?");
        for (const char* key : {"verb", "arg"})
            if (j.contains(key) && j[key].is_string()) out += " " + j[key].get<std::string>();
        return out;
    }
    return "-";
}

}  // namespace

namespace {
int run_list(Invocation& in) {
    const HostDirs* dirs = &in.dirs;
    auto slugs = installed_slugs(*dirs);
    if (slugs.empty()) {
        std::cout << "no installs\n";
        return kExitOk;
    }
    auto systemctl = SystemctlUser::find();
    const bool manager = systemctl && systemctl->manager_reachable();
    std::cout << std::left << std::setw(20) << "SLUG"
              << "  " << std::setw(40) << "PROJECT"
              << "  " << std::setw(12) << "UNITS"
              << "  " << std::setw(10) << "VERSION"
              << "  LAST REQUEST\n";
    for (const auto& slug : slugs) {
        InstallPaths p = install_paths(*dirs, slug);
        auto config = load_config(p.config_file);
        std::string project = config ? config->project_dir : "(bridge.json unreadable)";
        std::string units;
        struct stat st {};
        if (config && !config->systemd.enabled) {
            units = "no-systemd";
        } else if (manager) {
            units = systemctl->query("is-enabled", p.path_unit_name);
        } else {
            units = ::lstat(p.wants_link.c_str(), &st) == 0 ? "enabled" : "disabled";
        }
        // The log and the config are host files, but quote what others chose,
        // one line a row (display/visible.hpp, table_cell).
        std::cout << std::left << std::setw(20) << table_cell(slug) << "  " << std::setw(40)
                  << table_cell(project) << "  " << std::setw(12) << table_cell(units) << "  "
                  << std::setw(10) << table_cell(binary_version(p.executor).value_or("?")) << "  "
                  << table_cell(last_event(config ? config->state_dir : p.state_dir)) << "\n";
        for (const std::string& line : grant_lines(config ? config->state_dir : p.state_dir)) {
            std::cout << "  " << line << "\n";
        }
    }
    return kExitOk;
}

}  // namespace

const Subcommand kList = {kCmd, kHelp, {}, Subcommand::Needs::Dirs, nullptr, run_list};

}  // namespace hb::admin
