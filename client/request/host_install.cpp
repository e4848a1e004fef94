#include "client/request/host_install.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "ipc/json_depth.hpp"
#include "ipc/path_component.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/wire.hpp"

namespace hb::client {
namespace {

// bridge.json is a few KiB; anything past this is not one.
constexpr std::size_t kMaxConfigBytes = 1024 * 1024;

std::string normal(const std::string& path) {
    std::string out = std::filesystem::path(path).lexically_normal().string();
    while (out.size() > 1 && out.back() == '/') out.pop_back();
    return out;
}

bool is_dir(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// `path` equals `root` or lies beneath it.
bool within(const std::string& path, const std::string& root) {
    if (path == root) return true;
    if (root == "/") return !path.empty() && path[0] == '/';
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
           path[root.size()] == '/';
}

std::optional<HostInstall> read_install(const std::string& root, const std::string& slug) {
    HostInstall install;
    install.slug = slug;
    install.config_file = root + "/" + slug + "/bridge.json";
    UniqueFd fd(::open(install.config_file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    std::string text;
    if (!sys::read_all(fd.get(), text, kMaxConfigBytes) || text.size() > kMaxConfigBytes ||
        !json_depth_within(text))
        return std::nullopt;
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return std::nullopt;
    const auto project = j.find("project_dir");
    const auto spool = j.find("spool_dir");
    if (project == j.end() || spool == j.end() || !project->is_string() || !spool->is_string())
        return std::nullopt;
    install.project_dir = normal(project->get<std::string>());
    install.spool_dir = normal(spool->get<std::string>());
    if (const auto state = j.find("state_dir"); state != j.end() && state->is_string())
        install.state_dir = state->get<std::string>();
    if (install.project_dir.empty() || install.project_dir[0] != '/') return std::nullopt;
    const std::string prefix = install.project_dir == "/" ? "/" : install.project_dir + "/";
    if (install.spool_dir.compare(0, prefix.size(), prefix) != 0 ||
        !is_plain_relative(std::string_view(install.spool_dir).substr(prefix.size())))
        return std::nullopt;
    return install;
}

std::string see_list(const std::string& root) {
    return " (your installs are under " + root + "; `hostbridge list` shows them)";
}

}  // namespace

std::optional<std::string> host_installs_root() {
    std::string config_home;
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    const char* home = std::getenv("HOME");
    if (xdg != nullptr && xdg[0] == '/')
        config_home = xdg;
    else if (home != nullptr && home[0] == '/')
        config_home = std::string(home) + "/.config";
    else
        return std::nullopt;
    std::string root = normal(config_home) + "/hostbridge";
    if (!is_dir(root)) return std::nullopt;
    return root;
}

std::vector<HostInstall> host_installs(const std::string& root) {
    std::vector<std::string> slugs;
    if (DIR* dir = ::opendir(root.c_str())) {
        while (const dirent* e = ::readdir(dir)) {
            if (is_valid_slug(e->d_name)) slugs.emplace_back(e->d_name);
        }
        ::closedir(dir);
    }
    std::sort(slugs.begin(), slugs.end());
    std::vector<HostInstall> installs;
    for (const auto& slug : slugs) {
        if (auto install = read_install(root, slug)) installs.push_back(std::move(*install));
    }
    return installs;
}

Result<HostInstall> locate_host_install(const std::string& root,
                                        const std::optional<std::string>& project_dir) {
    const std::vector<HostInstall> installs = host_installs(root);
    if (project_dir) {
        // The person's own argument: a link in the path they typed is theirs.
        char buf[PATH_MAX];
        if (::realpath(project_dir->c_str(), buf) == nullptr)
            return make_error(sys::errno_text("--project-dir " + *project_dir));
        for (const auto& install : installs) {
            if (install.project_dir == buf) return install;
        }
        return make_error("--project-dir " + *project_dir +
                          " is not the project directory of any hostbridge install of yours" +
                          see_list(root));
    }
    if (const char* spool = std::getenv("HOSTBRIDGE_SPOOL"); spool != nullptr && *spool != '\0') {
        // Compared as written, never resolved: a link the agent planted in
        // the checkout must not turn one install's spool into another's.
        const std::string wanted = normal(spool);
        for (const auto& install : installs) {
            if (install.spool_dir == wanted) return install;
        }
        return make_error(std::string("HOSTBRIDGE_SPOOL=") + spool +
                          " is not the spool of any hostbridge install of yours" + see_list(root));
    }
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr)
        return make_error("cannot read the current directory");
    const std::string cwd = buf;
    const HostInstall* best = nullptr;
    for (const auto& install : installs) {
        if (within(cwd, install.project_dir) &&
            (best == nullptr || install.project_dir.size() > best->project_dir.size()))
            best = &install;
    }
    if (best != nullptr) return *best;
    return make_error("no hostbridge install of yours covers " + cwd +
                      ": run it inside an installed project, or pass --project-dir" +
                      see_list(root));
}

}  // namespace hb::client
