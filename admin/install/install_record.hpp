// install.json, beside bridge.json: what the admin tool itself remembers of
// an install (bridge.json is the executor's strict schema and stays so): the
// command that re-creates it, for doctor's fixes, and the SHA-256 of the
// binaries it installed, for doctor's "identical to what was installed".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "admin/util/fs_util.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

struct InstallRecord {
    std::vector<std::string> reinstall_argv;      // "hostbridge", "install", ...
    std::map<std::string, std::string> binaries;  // basename -> sha256
    bool no_systemd = false;
    // The compose file, relative to the project dir ("" when none): approve
    // reads it again to pin files a newly approved version pulls in.
    std::string compose_file;
};

Result<std::optional<InstallRecord>> load_install_record(const std::string& path);
Result<WriteOutcome> save_install_record(const std::string& path, const InstallRecord& record);

// The words joined, each quoted for a POSIX shell when it needs it.
std::string command_line(const std::vector<std::string>& argv);

// How to invoke this very binary in a printed command: "hostbridge" when that
// name on PATH is this binary, else its absolute path.
std::string self_command();
// The directory holding this binary (where the executor and parser were built).
std::string self_dir();

}  // namespace hb::admin
