#include "admin/util/uid_processes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <optional>
#include <sstream>
#include <string_view>

#include "admin/util/args.hpp"

namespace hb::admin {
namespace {

constexpr long kMaxId = 4294967295L;  // uid_t and pid_t fit in 32 bits

// The four ids of /proc/PID/status's "Uid:" line; empty when it is gone or
// a zombie (it runs nothing; its parent reaps it).
std::vector<uid_t> ids_of(int proc_fd, const char* pid) {
    const std::string path = std::string(pid) + "/status";
    const int fd = ::openat(proc_fd, path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
    ::close(fd);
    if (n <= 0) return {};
    std::istringstream in(std::string(buffer, static_cast<std::size_t>(n)));
    std::vector<uid_t> ids;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("State:") && line.find('Z') != std::string::npos) return {};
        if (!line.starts_with("Uid:")) continue;
        std::istringstream fields(line.substr(4));
        for (unsigned long id = 0; fields >> id;) ids.push_back(static_cast<uid_t>(id));
    }
    return ids;
}

}  // namespace

std::vector<UidRange> subordinate_ranges(const std::string& text, const std::string& name,
                                         uid_t uid) {
    std::vector<UidRange> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const auto a = line.find(':');
        const auto b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        const std::string owner = line.substr(0, a);
        if (owner != name && owner != std::to_string(uid)) continue;
        const auto first = parse_number(std::string_view(line).substr(a + 1, b - a - 1), kMaxId);
        const auto count = parse_number(std::string_view(line).substr(b + 1), kMaxId);
        if (!first || !count || *count == 0) continue;
        out.push_back({static_cast<uid_t>(*first), static_cast<uid_t>(*count)});
    }
    return out;
}

std::vector<pid_t> processes_with_uid_in(const std::vector<UidRange>& ranges) {
    std::vector<pid_t> out;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return out;
    const pid_t self = ::getpid();
    while (const dirent* e = ::readdir(proc)) {
        const auto pid = parse_number(e->d_name, kMaxId);
        if (!pid || static_cast<pid_t>(*pid) == self) continue;
        for (const uid_t id : ids_of(::dirfd(proc), e->d_name)) {
            bool in_range = false;
            for (const UidRange& r : ranges) in_range = in_range || r.contains(id);
            if (in_range) {
                out.push_back(static_cast<pid_t>(*pid));
                break;
            }
        }
    }
    ::closedir(proc);
    return out;
}

bool end_processes_with_uid_in(const std::vector<UidRange>& ranges, int term_wait_ms) {
    for (const int sig : {SIGTERM, SIGKILL}) {
        const int wait_ms = sig == SIGTERM ? term_wait_ms : 3000;
        for (int waited = 0;; waited += 100) {
            const std::vector<pid_t> left = processes_with_uid_in(ranges);
            if (left.empty()) return true;
            if (waited >= wait_ms) break;
            // SIGKILL again each round: a process forked meanwhile gets it too.
            if (waited == 0 || sig == SIGKILL)
                for (const pid_t pid : left) (void)::kill(pid, sig);
            ::usleep(100 * 1000);
        }
    }
    return processes_with_uid_in(ranges).empty();
}

}  // namespace hb::admin
