// hostbridge-executor drain|watch: the command line (docs/COMMANDS.md), the
// exit status (docs/EXECUTOR-DRAIN.md, "Exit status") and the wait between drains.
// Nothing here touches the spool; drain.cpp does.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "engines/registry.hpp"
#include "executor/drain.hpp"
#include "executor/wakeup.hpp"
#include "packaging/version.hpp"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

constexpr const char* kUsage =
    "usage: hostbridge-executor drain --config FILE [--linger SECONDS] [--allow-root]\n"
    "       hostbridge-executor watch --config FILE [--allow-root]\n"
    "       hostbridge-executor --help | --version\n";

// The systemd unit runs `drain`; `watch` is the fallback without systemd.
constexpr const char* kHelp =
    "\n"
    "The trusted half of hostbridge: takes the requests up from one install's\n"
    "spool, validates each in the sandboxed hostbridge-parser, applies the policy,\n"
    "the rate limits and the integrity gate, runs one command from its fixed argv\n"
    "table, audits it and answers. `hostbridge install` copies it into\n"
    "~/.local/lib/hostbridge/SLUG/ and writes the units that start it.\n"
    "\n"
    "  drain              drain the spool once, then exit (what the .service runs)\n"
    "  watch              drain, then wait for requests until stopped (no systemd)\n"
    "  --config FILE      the install's bridge.json\n"
    "  --linger SECONDS   drain: wait this long for more requests before exiting\n"
    "  --allow-root       run even as root (installs made with --allow-root)\n"
    "  --help             this text\n"
    "  --version          print the version\n"
    "\n"
    "Exit: 0 drained (or another drain holds the spool), 1 failed, 2 usage error.\n";

struct Args {
    bool watch = false;
    hb::exec::DrainOptions drain;
    int linger_seconds = 0;
};

std::optional<int> parse_seconds(std::string_view text) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0 || value > 86400) {
        return std::nullopt;
    }
    return value;
}

std::optional<Args> parse_args(int argc, char** argv) {
    if (argc < 2) return std::nullopt;
    Args args;
    args.drain.engines = &hb::exec::registry();
    const std::string_view mode = argv[1];
    if (mode == "watch") {
        args.watch = true;
    } else if (mode != "drain") {
        return std::nullopt;
    }
    bool have_config = false;
    for (int i = 2; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--config" && i + 1 < argc && !have_config) {
            args.drain.config_path = argv[++i];
            have_config = !args.drain.config_path.empty();
            if (!have_config) return std::nullopt;
        } else if (arg == "--allow-root") {
            args.drain.allow_root = true;
        } else if (arg == "--linger" && !args.watch && i + 1 < argc) {
            const auto seconds = parse_seconds(argv[++i]);
            if (!seconds) return std::nullopt;
            args.linger_seconds = *seconds;
        } else {
            return std::nullopt;
        }
    }
    if (!have_config) return std::nullopt;
    return args;
}

int fail(const std::string& message) {
    std::fprintf(stderr, "hostbridge-executor: %s\n", message.c_str());
    return kExitFailure;
}

// fds 0-2 must exist, or the first file we open would become stdout.
void ensure_standard_fds() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) < 0) {
            const int null_fd = ::open("/dev/null", O_RDWR);
            if (null_fd >= 0 && null_fd != fd) ::close(null_fd);
        }
    }
}

// `watch` mirrors the audit log once it has been idle this long, so the
// mirror (up to 1 MiB) never sits between a request and its answer.
constexpr auto kMirrorWhenIdle = std::chrono::milliseconds(50);

int exit_status(hb::exec::CycleEnd end, hb::exec::Drain& drain) {
    drain.mirror_audit_log();
    if (end == hb::exec::CycleEnd::Failed) return fail(drain.failure());
    return kExitOk;  // drained, busy (another drain has it), budget, stopped
}

// A request held for a person is answered `expired` at its TTL: `watch`
// wakes for the first one (a drain run by systemd meets it on its next
// activation).
std::optional<std::chrono::steady_clock::time_point> held_expiry(const hb::exec::Drain& drain) {
    const auto expiry = drain.next_expiry();
    if (!expiry) return std::nullopt;
    const auto left = std::chrono::seconds(std::max<std::int64_t>(*expiry - std::time(nullptr), 0));
    return std::chrono::steady_clock::now() + left + std::chrono::milliseconds(100);
}

int run_watch(hb::exec::Drain& drain, hb::exec::Wakeup& wakeup) {
    using Event = hb::exec::Wakeup::Event;
    const auto stop = [&] { return wakeup.stop_requested(); };
    for (;;) {
        const auto end = drain.cycle(stop, /*enforce_budget=*/false);
        if (end == hb::exec::CycleEnd::Failed || end == hb::exec::CycleEnd::Stopped) {
            return exit_status(end, drain);
        }
        Event event = Event::Timeout;
        if (drain.mirror_due()) {
            event = wakeup.wait(std::chrono::steady_clock::now() + kMirrorWhenIdle);
            if (event == Event::Timeout) drain.mirror_audit_log();
        }
        if (event == Event::Timeout) event = wakeup.wait(held_expiry(drain));
        if (event == Event::Stop) return exit_status(hb::exec::CycleEnd::Stopped, drain);
    }
}

int run_drain(hb::exec::Drain& drain, hb::exec::Wakeup& wakeup, int linger_seconds) {
    const auto stop = [&] { return wakeup.stop_requested(); };
    const auto budget_end =
        drain.started() + std::chrono::seconds(drain.config().drain.time_budget_seconds);
    for (;;) {
        const auto end = drain.cycle(stop, /*enforce_budget=*/true);
        drain.mirror_audit_log();
        if (end != hb::exec::CycleEnd::Drained || linger_seconds == 0) {
            return exit_status(end, drain);
        }
        // Linger: one activation serves an agent that sends request after
        // request; the window restarts after each drain, within the budget.
        const auto deadline = std::min(
            std::chrono::steady_clock::now() + std::chrono::seconds(linger_seconds), budget_end);
        if (wakeup.wait(deadline) != hb::exec::Wakeup::Event::Request) return kExitOk;
    }
}

int run(const Args& args) {
    auto drain = hb::exec::Drain::prepare(args.drain);
    if (!drain) return fail(drain.error().message);
    auto wakeup =
        hb::exec::Wakeup::open((*drain)->spool().fd(hb::exec::SpoolDir::Requests),
                               (*drain)->held_fd(), args.watch || args.linger_seconds > 0);
    if (!wakeup) return fail(wakeup.error().message);
    return args.watch ? run_watch(**drain, *wakeup)
                      : run_drain(**drain, *wakeup, args.linger_seconds);
}

}  // namespace

int main(int argc, char** argv) {
    ensure_standard_fds();
    // A dead parser is an error value on its socket, never a signal.
    ::signal(SIGPIPE, SIG_IGN);
    if (argc == 2 && std::string_view(argv[1]) == "--version") {
        std::printf("hostbridge-executor %.*s\n", static_cast<int>(hb::kVersion.size()),
                    hb::kVersion.data());
        return kExitOk;
    }
    if (argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
        std::fputs(kUsage, stdout);
        std::fputs(kHelp, stdout);
        return kExitOk;
    }
    const auto args = parse_args(argc, argv);
    if (!args) {
        std::fputs(kUsage, stderr);
        return kExitUsage;
    }
    try {
        return run(*args);
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what());
    } catch (...) {
        return fail("internal error");
    }
}
