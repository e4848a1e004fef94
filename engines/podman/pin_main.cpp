// hostbridge-pin pin|check-pins: the two steps the executor's rows run
// inside rootless podman's namespaces by `podman unshare` (the pin before a
// start, engines/podman/bind_pin.hpp; the check after it,
// engines/podman/pin_compare.hpp), a binary of their own so the executor
// links neither. They need mounts there, so no Landlock (a landlocked
// process cannot mount); once the arguments are checked a seccomp filter
// (sandbox/seccomp_policy.hpp, pin_policy) leaves them what pinning and
// checking need and nothing else (SECURITY.md, the step table).
#include <unistd.h>

#include <cstdio>
#include <string_view>

#include "engines/podman/bind_pin.hpp"
#include "engines/podman/pin_compare.hpp"
#include "packaging/version.hpp"
#include "sandbox/seccomp_policy.hpp"

namespace {

constexpr const char* kUsage =
    "usage: hostbridge-pin pin PROJECT_DIR RUN_DIR SOURCE...\n"
    "       hostbridge-pin check-pins RUN_DIR PID (SOURCE TARGET)...\n"
    "       hostbridge-pin --help | --version\n";

constexpr const char* kHelp =
    "\n"
    "The pin steps of hostbridge's compose rows (docs/COMPOSE.md, \"Bind sources\n"
    "are pinned\"), run by `podman unshare` inside rootless podman's namespaces,\n"
    "never by a person. `hostbridge install` copies it next to the executor.\n"
    "\n"
    "  pin                bind each SOURCE of PROJECT_DIR onto RUN_DIR/.hostbridge-binds\n"
    "                     (a step of the argv table, before up, restart, rebuild)\n"
    "  check-pins         whether process PID finds each SOURCE's pin at TARGET\n"
    "                     (after a start, and from doctor)\n"
    "  --help             this text\n"
    "  --version          print the version\n"
    "\n"
    "Exit: 0 pinned (every target holds its pin), 1 failed (a target that does\n"
    "not), 2 usage error.\n";

// The filter goes on before the first file is opened; the arguments are
// only strings checked by then.
hb::Result<void> confine() {
    return hb::sandbox::install_seccomp(hb::sandbox::pin_policy(::getpid()));
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
// A sanitized test build only: LeakSanitizer's exit-time check stops the
// process with ptrace, which the filter forbids, and the engine rows run
// with a fixed environment, so ASAN_OPTIONS (run-tests) never reaches it.
extern "C" const char* __asan_default_options() {
    return "detect_leaks=0";
}
#endif

int main(int argc, char** argv) {
    const std::string_view mode = argc >= 2 ? argv[1] : "";
    if (mode == "pin") return hb::exec::run_pin(argc - 2, argv + 2, confine);
    if (mode == "check-pins") return hb::exec::run_check_pins(argc - 2, argv + 2, confine);
    if (argc == 2 && (mode == "--help" || mode == "-h")) {
        std::fputs(kUsage, stdout);
        std::fputs(kHelp, stdout);
        return 0;
    }
    if (argc == 2 && mode == "--version") {
        std::printf("hostbridge-pin %.*s\n", static_cast<int>(hb::kVersion.size()),
                    hb::kVersion.data());
        return 0;
    }
    std::fputs(kUsage, stderr);
    return 2;
}
