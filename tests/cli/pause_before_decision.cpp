// LD_PRELOAD into the real `hostbridge allow|deny` by
// tests/cli/test_held_admin.cpp: where HB_TEST_PAUSE_DIR is set, the rename
// that publishes held/NAME.decision first creates DIR/reached and waits (at
// most 60 s) for DIR/go. The test so holds one person between reading the
// record and publishing a decision while another person's decision is taken
// up: the interleaving that made two allows both report success (issue 26),
// on every run instead of one in thirteen.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

using renameat2_fn = int (*)(int, const char*, int, const char*, unsigned int);

bool ends_with(const char* s, const char* suffix) {
    const std::size_t n = std::strlen(s), m = std::strlen(suffix);
    return n >= m && std::strcmp(s + n - m, suffix) == 0;
}

}  // namespace

extern "C" int renameat2(int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
                         unsigned int flags) {
    const char* dir = std::getenv("HB_TEST_PAUSE_DIR");
    if (dir != nullptr && ends_with(newpath, ".decision")) {
        char path[4096];
        std::snprintf(path, sizeof path, "%s/reached", dir);
        const int fd = ::open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) ::close(fd);
        std::snprintf(path, sizeof path, "%s/go", dir);
        const timespec tick = {0, 10 * 1000 * 1000};
        for (int i = 0; i < 6000 && ::access(path, F_OK) != 0; ++i) ::nanosleep(&tick, nullptr);
    }
    const auto real = reinterpret_cast<renameat2_fn>(::dlsym(RTLD_NEXT, "renameat2"));
    return real(olddirfd, oldpath, newdirfd, newpath, flags);
}
