#include "admin/install/versions.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>

#include "admin/install/install_record.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"
#include "packaging/version.hpp"

#ifndef HB_BUNDLED_REL_DIR
#error \
    "HB_BUNDLED_REL_DIR (the executor's dir relative to hostbridge's) comes from admin/install/CMakeLists.txt"
#endif

namespace hb::admin {

std::vector<std::string> bundled_binary_dirs() {
    const std::string self = self_dir();
    return {self, lexically_normal(self + "/" + HB_BUNDLED_REL_DIR)};
}

std::optional<std::string> bundled_binary(std::string_view name) {
    for (const auto& dir : bundled_binary_dirs()) {
        std::string candidate = dir + "/" + std::string(name);
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return std::nullopt;
}

std::optional<std::string> binary_version(const std::string& path) {
    if (::access(path.c_str(), X_OK) != 0) return std::nullopt;
    RunOptions options;
    options.timeout = std::chrono::seconds(10);
    options.err = Stream::Null;
    auto ran = run_process({path, "--version"}, options);
    if (!ran || !ran->ok()) return std::nullopt;
    // "NAME VERSION\n": the second word, digits and dots only.
    const std::string& out = ran->out;
    auto space = out.find(' ');
    auto end = out.find('\n');
    if (space == std::string::npos || end == std::string::npos || end <= space + 1) {
        return std::nullopt;
    }
    std::string version = out.substr(space + 1, end - space - 1);
    if (version.size() > 32 || version.find_first_not_of("0123456789.") != std::string::npos) {
        return std::nullopt;
    }
    return version;
}

int compare_versions(std::string_view a, std::string_view b) {
    auto next = [](std::string_view& s) {
        unsigned long n = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
        if (ec != std::errc()) n = 0;
        // A non-digit counts as 0 and is skipped, so every call makes progress.
        s.remove_prefix(end == s.data() ? 1 : static_cast<std::size_t>(end - s.data()));
        if (!s.empty() && s.front() == '.') s.remove_prefix(1);
        return n;
    };
    while (!a.empty() || !b.empty()) {
        unsigned long x = next(a);
        unsigned long y = next(b);
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

std::string_view own_version() {
    return kVersion;
}

}  // namespace hb::admin
