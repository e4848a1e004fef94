#include "admin/install/install_record.hpp"

#include <unistd.h>

#include <climits>
#include <nlohmann/json.hpp>

#include "admin/util/resolve_binary.hpp"

namespace hb::admin {
namespace {

std::string self_exe() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return {};
    return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

Result<std::optional<InstallRecord>> load_install_record(const std::string& path) {
    auto text = read_file_if_exists(path, 1u << 20);
    if (!text) return text.error();
    if (!text->has_value()) return std::optional<InstallRecord>{};
    try {
        auto json = nlohmann::json::parse(**text);
        InstallRecord record;
        record.reinstall_argv = json.at("reinstall").get<std::vector<std::string>>();
        record.binaries = json.at("binaries").get<std::map<std::string, std::string>>();
        record.no_systemd = json.at("no_systemd").get<bool>();
        record.compose_file = json.at("compose_file").get<std::string>();
        return std::optional<InstallRecord>(std::move(record));
    } catch (const nlohmann::json::exception& e) {
        return make_error(path + " is damaged: " + e.what());
    }
}

Result<WriteOutcome> save_install_record(const std::string& path, const InstallRecord& record) {
    nlohmann::ordered_json json;
    json["version"] = 1;
    json["reinstall"] = record.reinstall_argv;
    json["binaries"] = record.binaries;
    json["no_systemd"] = record.no_systemd;
    json["compose_file"] = record.compose_file;
    return write_file_if_changed(path, json.dump(2) + "\n", 0644);
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& word : argv) {
        if (!out.empty()) out.push_back(' ');
        out += shell_quote(word);
    }
    return out;
}

std::string self_command() {
    std::string exe = self_exe();
    auto env = resolve_env_from_process();
    if (auto found = find_on_path("hostbridge", env.path_var)) {
        char a[PATH_MAX];
        char b[PATH_MAX];
        if (::realpath(found->c_str(), a) != nullptr && ::realpath(exe.c_str(), b) != nullptr &&
            std::string(a) == b) {
            return "hostbridge";
        }
    }
    return exe.empty() ? "hostbridge" : exe;
}

std::string self_dir() {
    std::string exe = self_exe();
    auto slash = exe.rfind('/');
    return slash == std::string::npos ? "." : exe.substr(0, slash);
}

}  // namespace hb::admin
