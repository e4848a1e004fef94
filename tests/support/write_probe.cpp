#include "tests/support/write_probe.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <set>
#include <sstream>

#include "tests/support/files.hpp"

namespace hb::test {
namespace {

constexpr char kSecret[] = "the person's file";

int attempt(const std::function<int()>& call) {
    errno = 0;
    const int rc = call();
    return rc < 0 ? (errno == 0 ? -1 : errno) : 0;
}

int open_close(const std::string& path, int flags) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
    return fd;
}

}  // namespace

void prepare_probe_home(const std::string& home) {
    write_file(home + "/secret", kSecret, 0644);
    write_file(home + "/movable", kSecret, 0644);
    ::mkdir((home + "/dir").c_str(), 0755);
}

bool probe_home_untouched(const std::string& home) {
    struct stat st {};
    std::set<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(home)) {
        names.insert(entry.path().filename());
    }
    return read_file(home + "/secret") == kSecret && ::stat((home + "/secret").c_str(), &st) == 0 &&
           (st.st_mode & 07777) == 0644 &&
           names == std::set<std::string>{"dir", "movable", "secret"} &&
           ::getxattr((home + "/secret").c_str(), "user.hb", nullptr, 0) < 0;
}

std::vector<WriteAttempt> try_writes(const std::string& home) {
    const std::string secret = home + "/secret";
    const std::string dir = home + "/dir";
    // In an order where each succeeds unconfined (the control): the removals last.
    const std::vector<std::pair<std::string, std::function<int()>>> tries = {
        {"open for writing " + secret, [&] { return open_close(secret, O_WRONLY | O_APPEND); }},
        {"create " + home + "/new", [&] { return open_close(home + "/new", O_WRONLY | O_CREAT); }},
        {"truncate " + secret, [&] { return ::truncate(secret.c_str(), 0); }},
        {"open with O_TRUNC " + secret, [&] { return open_close(secret, O_RDONLY | O_TRUNC); }},
        {"chmod " + secret, [&] { return ::chmod(secret.c_str(), 0600); }},
        {"utimensat " + secret, [&] { return ::utimensat(AT_FDCWD, secret.c_str(), nullptr, 0); }},
        {"setxattr " + secret, [&] { return ::setxattr(secret.c_str(), "user.hb", "x", 1, 0); }},
        {"mkdir " + home + "/made", [&] { return ::mkdir((home + "/made").c_str(), 0755); }},
        {"symlink " + home + "/link", [&] { return ::symlink("/", (home + "/link").c_str()); }},
        {"mkfifo " + home + "/fifo", [&] { return ::mkfifo((home + "/fifo").c_str(), 0644); }},
        {"rmdir " + dir, [&] { return ::rmdir(dir.c_str()); }},
        {"rename " + home + "/movable",
         [&] { return ::rename((home + "/movable").c_str(), (home + "/moved").c_str()); }},
        {"unlink " + secret, [&] { return ::unlink(secret.c_str()); }},
    };
    std::vector<WriteAttempt> done;
    for (const auto& [what, call] : tries) done.push_back({what, attempt(call)});
    return done;
}

std::string encode_attempts(const std::vector<WriteAttempt>& attempts) {
    std::string text;
    for (const WriteAttempt& a : attempts) text += std::to_string(a.error) + " " + a.what + "\n";
    return text;
}

std::vector<WriteAttempt> decode_attempts(const std::string& text) {
    std::vector<WriteAttempt> attempts;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const auto space = line.find(' ');
        if (space == std::string::npos) continue;
        attempts.push_back({line.substr(space + 1), std::stoi(line.substr(0, space))});
    }
    return attempts;
}

}  // namespace hb::test
