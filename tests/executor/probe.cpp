// A command for test_runner to run: prints what it inherited, one fact per
// line: "fd N -> TARGET" for every open fd, then its blocked and ignored
// signal masks. Test code only.
#include <dirent.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

int main() {
    DIR* dir = ::opendir("/proc/self/fd");
    if (!dir) return 2;
    const int own = ::dirfd(dir);  // the listing's own fd is not inherited
    while (const dirent* entry = ::readdir(dir)) {
        if (entry->d_name[0] == '.') continue;
        const int fd = std::atoi(entry->d_name);
        if (fd == own) continue;
        char target[PATH_MAX] = {};
        const std::string link = std::string("/proc/self/fd/") + entry->d_name;
        if (::readlink(link.c_str(), target, sizeof target - 1) < 0) std::strcpy(target, "?");
        std::printf("fd %d -> %s\n", fd, target);
    }
    ::closedir(dir);
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("SigBlk:", 0) == 0 || line.rfind("SigIgn:", 0) == 0) {
            std::printf("%s\n", line.c_str());
        }
    }
    std::printf("sid %d pgid %d pid %d\n", static_cast<int>(::getsid(0)),
                static_cast<int>(::getpgid(0)), static_cast<int>(::getpid()));
    return 0;
}
