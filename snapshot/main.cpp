// hostbridge-snapshot: a build's snapshot copy, confined. The executor
// starts it for each snapshot (engines/build_input/build_snapshot.cpp) with
// argv[0] only, an empty environment and its socket on fd 3, sends the
// request and the two directory fds, and reads one answer
// (ipc/snapshot_wire.hpp); snapshot/serve.hpp says what happens between.
// Exit codes: 0 answered, 2 the executor's messages out of shape, 3 the
// answer could not be sent, 64 an unknown argument, 70 an internal error.
#include <unistd.h>

#include <exception>
#include <string>
#include <string_view>

#include "packaging/version.hpp"
#include "snapshot/serve.hpp"

namespace {

constexpr int kSocket = 3;
constexpr int kExitUsage = 64;
constexpr int kExitInternal = 70;

int run(int argc, char** argv) {
    // --version is for people and `hostbridge doctor`.
    if (argc == 2 && std::string_view(argv[1]) == "--version") {
        std::string line = "hostbridge-snapshot ";
        line.append(hb::kVersion);
        line.push_back('\n');
        return ::write(STDOUT_FILENO, line.data(), line.size()) == static_cast<ssize_t>(line.size())
                   ? 0
                   : hb::snapshot::kExitIo;
    }
    if (argc > 1) return kExitUsage;
    try {
        return hb::snapshot::serve(kSocket, {});
    } catch (const std::exception&) {
        return kExitInternal;
    }
}

}  // namespace

int main(int argc, char** argv) {
    // _exit: no exit-time work (a sanitizer's leak check would ptrace, which
    // the confinement refuses); the answer is already sent.
    ::_exit(run(argc, argv));
}
