// `hostbridge pending`: the requests the policy holds for a person (`ask`),
// each as show_held prints it. Only reads <state_dir>/held (common/held.hpp).
#include "admin/commands/pending.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "admin/commands/commands.hpp"
#include "admin/commands/grants.hpp"
#include "admin/util/args.hpp"
#include "display/visible.hpp"
#include "ipc/screen_wire.hpp"
#include "ipc/sys.hpp"

namespace hb::admin {

using display::visible;

namespace {

const char* const kPendingHelp = R"(usage: hostbridge pending [--slug SLUG]

Lists the requests the policy holds for a person (MODE_<verb>=ask): name,
its digest, verb, service, how long ago it was held, when it expires, what
would run (in the names of docs/ARGV-TABLE.md) and how many later requests
were merged into it. `hostbridge allow NAME DIGEST` runs one, `hostbridge
deny NAME DIGEST` refuses it; one not decided by its expiry is answered
`expired`. Then the live grants (`hostbridge allow --for`): verb, service,
until when, how many runs are left, and the id `hostbridge revoke` takes.

Exit: 0 listed (possibly nothing), 1 failed, 2 usage error.
)";

const OptionSpec kSlugOnly[] = {{"slug", true, false}};

}  // namespace

std::string shown_duration(std::int64_t seconds) {
    if (seconds < 0) seconds = 0;
    if (seconds < 120) return std::to_string(seconds) + " s";
    if (seconds < 7200) return std::to_string(seconds / 60) + " min";
    return std::to_string(seconds / 3600) + " h";
}

namespace {

std::string service_of(const common::HeldRequest& held) {
    return held.service ? visible(*held.service) : "-";
}

// The Containerfile of the snapshot taken when `held` was held, the one
// that builds once allowed (engines/build_input/build_input.hpp, hold_build): read
// beneath it with no link followed, every line made visible.
void show_held_build(const Config& config, const common::HeldRequest& held) {
    const ServiceBuild* build = held.service ? find_build(config.build, *held.service) : nullptr;
    if (build == nullptr) return;
    std::cout << "snapshot:  " << held.snapshot << " (what builds once allowed)\n";
    const std::string dir =
        config.run_dir + "/.hostbridge-held/" + held.request + "/" + *held.service;
    UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    open_how how{};
    how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd =
        root ? ::syscall(SYS_openat2, root.get(), build->containerfile.c_str(), &how, sizeof how)
             : -1;
    UniqueFd file(static_cast<int>(fd));
    std::string text;
    if (!file || !sys::read_all(file.get(), text, kMaxContainerfileBytes)) {
        std::cout << "           (its " << visible(build->containerfile)
                  << " cannot be read: " << std::strerror(errno) << ")\n";
        return;
    }
    std::cout << visible(build->containerfile) << " as it builds (screened):\n";
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::cout << "  | " << visible(text.substr(start, end - start)) << "\n";
        start = end + 1;
    }
}

}  // namespace

Result<HeldInstall> open_held_install(const InstallPaths& paths) {
    auto config = load_config(paths.config_file);
    if (!config) return config.error();
    auto fd = common::open_held_dir(paths.state_dir);
    if (!fd) return fd.error();
    return HeldInstall{std::move(*config), std::move(*fd)};
}

Result<common::HeldRequest> read_held(int held_fd, const std::string& name) {
    auto text = common::read_held_file(held_fd, name);
    if (!text) return text.error();
    if (!*text) {
        const bool taken =
            sys::exists_at(held_fd, common::held_name(name, common::HeldFile::Taken));
        return make_error(name + (taken ? " is being run or refused by the executor now"
                                        : " is not held: it was decided or expired, or never "
                                          "held (`hostbridge pending` lists what is)"));
    }
    auto held = common::parse_held(**text);
    if (!held) return make_error("held/" + name + " cannot be read: " + held.error().message);
    return held;
}

void show_held(const common::HeldRequest& held, std::time_t now, const Config& config) {
    std::cout << "request:   " << held.request << "\n"
              << "digest:    " << common::held_short_digest(held) << "\n"
              << "verb:      " << verb_name(held.verb) << "\n"
              << "service:   " << service_of(held) << "\n"
              << "would run: " << visible(held.command) << "\n"
              << "held:      " << shown_duration(now - held.held_at) << " ago; expires in "
              << shown_duration(held.expires_at - now) << "\n";
    if (!held.merged.empty()) {
        std::cout << "merged:    " << held.merged.size()
                  << " later request(s) for the same get the same answer\n";
    }
    if (!held.snapshot.empty()) show_held_build(config, held);
}

namespace {

int run_pending(Invocation& in) {
    auto opened = open_held_install(in.paths);
    if (!opened) {
        print_error("pending", opened.error().message);
        return kExitFailure;
    }
    auto names = common::list_held(opened->held_fd.get());
    if (!names) {
        print_error("pending", names.error().message);
        return kExitFailure;
    }
    const std::time_t now = std::time(nullptr);
    std::size_t shown = 0;
    for (const std::string& name : *names) {
        const auto parsed = common::parse_held_name(name);
        if (!parsed || parsed->file != common::HeldFile::Record) continue;
        auto held = read_held(opened->held_fd.get(), name);
        if (!held) {
            print_warning("pending", held.error().message);
            continue;
        }
        if (shown++ > 0) std::cout << "\n";
        show_held(*held, now, opened->config);
    }
    if (shown == 0) std::cout << "no request waits for a person\n";
    for (const std::string& line : grant_lines(opened->config.state_dir)) {
        std::cout << line << "\n";
    }
    return kExitOk;
}

}  // namespace

const Subcommand kPending{"pending", kPendingHelp, kSlugOnly, Subcommand::Needs::Install,
                          nullptr,   run_pending};

}  // namespace hb::admin
