#include "proc_status.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hb::sandbox::test {

namespace {
std::string proc_path(pid_t pid, const std::string& name) {
    return "/proc/" + std::to_string(pid) + "/" + name;
}
}  // namespace

std::string read_proc_file(pid_t pid, const std::string& name) {
    std::ifstream in(proc_path(pid, name));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::map<std::string, std::string> proc_status(pid_t pid) {
    std::map<std::string, std::string> fields;
    std::istringstream lines(read_proc_file(pid, "status"));
    for (std::string line; std::getline(lines, line);) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const auto value = line.find_first_not_of(" \t", colon + 1);
        fields[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
    }
    return fields;
}

std::string proc_soft_limit(pid_t pid, const std::string& row) {
    std::istringstream lines(read_proc_file(pid, "limits"));
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(row, 0) != 0) continue;
        std::istringstream rest(line.substr(row.size()));
        std::string soft;
        rest >> soft;
        return soft;
    }
    return "";
}

std::optional<std::set<int>> proc_fds(pid_t pid) {
    std::error_code error;
    std::filesystem::directory_iterator it(proc_path(pid, "fd"), error);
    if (error) return std::nullopt;
    std::set<int> fds;
    for (const auto& entry : it) fds.insert(std::stoi(entry.path().filename().string()));
    return fds;
}

std::string proc_namespace(pid_t pid, const std::string& ns) {
    char target[256];
    const ssize_t n = ::readlink(proc_path(pid, "ns/" + ns).c_str(), target, sizeof target - 1);
    return n < 0 ? "" : std::string(target, static_cast<std::size_t>(n));
}

}  // namespace hb::sandbox::test
