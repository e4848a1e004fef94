#include "admin/util/locate.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "admin/util/fs_util.hpp"
#include "admin/util/slug.hpp"
#include "common/config.hpp"

namespace hb::admin {

std::vector<std::string> installed_slugs(const HostDirs& dirs) {
    std::vector<std::string> slugs;
    const std::string root = installs_root(dirs);
    DIR* dir = ::opendir(root.c_str());
    if (dir == nullptr) return slugs;
    while (dirent* e = ::readdir(dir)) {
        std::string name = e->d_name;
        if (!is_valid_slug(name)) continue;
        struct stat st {};
        if (::lstat((root + "/" + name).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            slugs.push_back(name);
        }
    }
    ::closedir(dir);
    std::sort(slugs.begin(), slugs.end());
    return slugs;
}

Result<InstallPaths> locate_install(const HostDirs& dirs, const std::optional<std::string>& slug) {
    if (slug) {
        InstallPaths paths = install_paths(dirs, *slug);
        struct stat st {};
        if (::stat(paths.config_dir.c_str(), &st) != 0) {
            return make_error("no install named " + *slug + " (no " + paths.config_dir + ")");
        }
        return paths;
    }
    char buf[PATH_MAX];
    if (::getcwd(buf, sizeof buf) == nullptr)
        return make_error("cannot read the current directory");
    auto cwd = canonical_path(buf);
    if (!cwd) return cwd.error();
    std::optional<InstallPaths> best;
    std::size_t best_len = 0;
    for (const auto& candidate : installed_slugs(dirs)) {
        InstallPaths paths = install_paths(dirs, candidate);
        auto config = load_config(paths.config_file);
        if (!config) continue;
        if (path_is_within(*cwd, config->project_dir) && config->project_dir.size() >= best_len) {
            best = paths;
            best_len = config->project_dir.size();
        }
    }
    if (!best) {
        return make_error(
            "no install covers " + *cwd +
            "; run it inside an installed project or pass --slug (see hostbridge list)");
    }
    return *best;
}

}  // namespace hb::admin
