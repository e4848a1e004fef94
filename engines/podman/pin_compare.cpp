#include "engines/podman/pin_compare.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string_view>

#include "ipc/pin_paths.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {

std::vector<AtTarget> compare_targets(const std::string& run_dir, pid_t pid,
                                      const std::vector<std::pair<std::string, std::string>>& binds,
                                      std::string& out) {
    std::vector<AtTarget> at;
    const auto say = [&](AtTarget what, const std::string& why) {
        static constexpr const char* kWords[] = {"pinned", "other", "unreadable"};
        out += std::string(kWords[static_cast<int>(what)]) + " " + std::to_string(at.size()) +
               (why.empty() ? "" : " " + why) + "\n";
        at.push_back(what);
    };
    // The pins first, here in the engine's namespace where they are mounted.
    std::vector<Result<struct stat>> pins;
    for (const auto& [source, target] : binds) {
        struct stat st {};
        UniqueFd pin(
            ::open(bind_pin_path(run_dir, source).c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
        if (pin && ::fstat(pin.get(), &st) == 0) {
            pins.emplace_back(st);
        } else {
            pins.emplace_back(make_error(sys::errno_text("the pin of " + source)));
        }
    }
    // Then the container's mount namespace, whose root setns makes ours:
    // the namespace's, not whatever its process chrooted into.
    UniqueFd ns(::open(("/proc/" + std::to_string(pid) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    std::string entered;
    if (!ns) {
        entered = sys::errno_text("the container's mount namespace");
    } else if (::setns(ns.get(), CLONE_NEWNS) != 0) {
        entered = sys::errno_text("entering the container's mount namespace");
    }
    UniqueFd root(entered.empty() ? ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1);
    if (entered.empty() && !root) entered = sys::errno_text("the container's root");
    for (std::size_t i = 0; i < binds.size(); ++i) {
        const std::string& target = binds[i].second;
        if (!entered.empty()) {
            say(AtTarget::Unreadable, entered);
            continue;
        }
        if (!pins[i]) {
            say(AtTarget::Unreadable, pins[i].error().message);
            continue;
        }
        // Following no link: the container's process could rename the
        // target's parent and plant a link to another bind of the source.
        open_how how{};
        how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
        how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        const std::string inside = target == "/" ? "." : target.substr(1);
        const long fd = ::syscall(SYS_openat2, root.get(), inside.c_str(), &how, sizeof how);
        UniqueFd found(fd < 0 ? -1 : static_cast<int>(fd));
        struct stat there {};
        if (!found || ::fstat(found.get(), &there) != 0) {
            say(AtTarget::Unreadable, sys::errno_text(target));
        } else if (there.st_dev == pins[i]->st_dev && there.st_ino == pins[i]->st_ino) {
            say(AtTarget::Pinned, "");
        } else {
            say(AtTarget::Other, "device " + std::to_string(there.st_dev) + " inode " +
                                     std::to_string(there.st_ino) + ", the pin device " +
                                     std::to_string(pins[i]->st_dev) + " inode " +
                                     std::to_string(pins[i]->st_ino));
        }
    }
    return at;
}

int run_check_pins(int argc, char** argv, Result<void> (*confine)()) {
    const auto usage = [] {
        std::fputs("usage: hostbridge-pin check-pins RUN_DIR PID (SOURCE TARGET)...\n", stderr);
        return 2;
    };
    if (argc < 4 || argc % 2 != 0 || argv[0][0] != '/') return usage();
    const std::string_view pid_text = argv[1];
    pid_t pid = 0;
    const auto [end, ec] = std::from_chars(pid_text.data(), pid_text.data() + pid_text.size(), pid);
    if (ec != std::errc() || end != pid_text.data() + pid_text.size() || pid <= 0) return usage();
    std::vector<std::pair<std::string, std::string>> binds;
    for (int i = 2; i < argc; i += 2) {
        if (!is_checkout_path(argv[i]) || !is_container_path(argv[i + 1])) return usage();
        binds.emplace_back(argv[i], argv[i + 1]);
    }
    if (confine != nullptr) {
        if (auto confined = confine(); !confined) {
            std::fprintf(stderr, "hostbridge-pin check-pins: %s\n",
                         confined.error().message.c_str());
            return 1;
        }
    }
    std::string out;
    const std::vector<AtTarget> at = compare_targets(argv[0], pid, binds, out);
    std::fputs(out.c_str(), stdout);
    return std::all_of(at.begin(), at.end(), [](AtTarget a) { return a == AtTarget::Pinned; }) ? 0
                                                                                               : 1;
}

}  // namespace hb::exec
