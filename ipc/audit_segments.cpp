#include "ipc/audit_segments.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <map>
#include <set>

#include "ipc/sys.hpp"

namespace hb {

using sys::errno_text;

std::string audit_segment_name(std::uint64_t index) {
    if (index <= 1) return std::string(kAuditLogName);
    char text[40];
    std::snprintf(text, sizeof text, "audit-%06llu.jsonl", static_cast<unsigned long long>(index));
    return text;
}

std::optional<std::uint64_t> audit_segment_index(std::string_view name) {
    if (name == kAuditLogName) return 1;
    constexpr std::string_view kPrefix = "audit-";
    constexpr std::string_view kSuffix = ".jsonl";
    if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return std::nullopt;
    const std::string_view digits =
        name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
    if (digits.size() < 6 || digits.size() > 19) return std::nullopt;
    std::uint64_t index = 0;
    for (const char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        index = index * 10 + static_cast<std::uint64_t>(c - '0');
    }
    // One spelling per index: "audit-0000002.jsonl" is not segment 2.
    if (index < 2 || audit_segment_name(index) != name) return std::nullopt;
    return index;
}

std::string audit_legacy_rotated_name(int index) {
    return std::string(kAuditLogName) + "." + std::to_string(index);
}

Result<std::vector<std::string>> audit_log_files(int dir_fd) {
    const int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (copy < 0) return make_error(errno_text("audit log: open state dir"));
    DIR* dir = ::fdopendir(copy);
    if (dir == nullptr) {
        ::close(copy);
        return make_error(errno_text("audit log: read state dir"));
    }
    std::map<std::uint64_t, std::string> segments;
    std::set<int> legacy;
    errno = 0;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name(entry->d_name);
        if (auto index = audit_segment_index(name)) {
            segments.emplace(*index, std::string(name));
            continue;
        }
        for (int i = 1; i <= kAuditLegacyRotatedFiles; ++i) {
            if (name == audit_legacy_rotated_name(i)) legacy.insert(i);
        }
    }
    const int err = errno;
    ::closedir(dir);
    if (err != 0) {
        errno = err;
        return make_error(errno_text("audit log: read state dir"));
    }
    std::vector<std::string> files;
    for (auto it = legacy.rbegin(); it != legacy.rend(); ++it)
        files.push_back(audit_legacy_rotated_name(*it));
    for (const auto& [index, name] : segments) files.push_back(name);
    return files;
}

}  // namespace hb
