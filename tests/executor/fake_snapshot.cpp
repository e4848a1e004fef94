// Stand-ins for a broken, compromised or buggy hostbridge-snapshot, so the
// executor's side of the snapshot copy (engines/build_input/build_snapshot.cpp)
// can be tested against real processes. One binary; its behaviour is the
// name it is executed by, fake-snapshot-<behaviour> (links made by
// tests/executor/CMakeLists.txt), as fake_parser.cpp's: the executor gives
// the copy a fixed argv, the path is the one argument a test has.
//   garbage    answers 105 bytes of 0xFF
//   oversized  answers a refusal one byte longer than the wire allows
//   truncated  answers a snapshot cut short (75 of its 105 bytes)
//   overbudget answers a well-formed snapshot of 2^40 files
//   hostile    refuses with a sentence holding an escape sequence and a newline
//   silent     exits without answering
//   crash      aborts once the request arrived
//   plantlink  answers a well-formed snapshot after planting h -> /home in it
//   probe-abi1, probe-abi2: the real copy (snapshot/serve.hpp) confined at
//              that Landlock ABI, with a bug after the copy: it tries every
//              way of writing a file in the home beside the snapshot
//              (<tree>/home for <tree>/snap, tests/support/write_probe.hpp)
//              and leaves what happened in the snapshot's file "probe"
// It speaks the real wire (ipc/snapshot_wire.hpp), so only the behaviour is fake.
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/fd_passing.hpp"
#include "ipc/snapshot_wire.hpp"
#include "snapshot/serve.hpp"
#include "tests/support/stand_in.hpp"
#include "tests/support/write_probe.hpp"

namespace {

constexpr int kSocket = 3;
constexpr std::string_view kPrefix = "fake-snapshot-";

void send(const std::vector<std::uint8_t>& bytes) {
    (void)hb::send_message(kSocket, bytes);
}

std::vector<std::uint8_t> taken(std::uint64_t files) {
    return hb::encode_snapshot_answer(hb::SnapshotCounts{std::string(64, 'a'), files, 0, 0, 0, 0});
}

// <tree>/home for the snapshot root <tree>/snap, read from the root's fd
// (readlink is no file access Landlock ABI 2 governs).
std::string home_beside(int root) {
    char path[PATH_MAX];
    const std::string link = "/proc/self/fd/" + std::to_string(root);
    const ssize_t n = ::readlink(link.c_str(), path, sizeof path - 1);
    if (n <= 0) return {};
    std::string dir(path, static_cast<std::size_t>(n));
    return dir.substr(0, dir.rfind('/')) + "/home";
}

}  // namespace

int main() {
    const std::string_view mode = hb::test::behaviour_from_name(kPrefix);
    if (mode == "probe-abi1" || mode == "probe-abi2") {
        hb::snapshot::ServeOptions options;
        options.max_abi = mode.back() - '0';
        options.after_copy = [](int root) {
            const std::string found =
                hb::test::encode_attempts(hb::test::try_writes(home_beside(root)));
            const int fd = ::openat(root, "probe", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
            if (fd < 0) return;
            (void)!::write(fd, found.data(), found.size());
            ::close(fd);
        };
        ::_exit(hb::snapshot::serve(kSocket, options));
    }
    auto request = hb::recv_message(kSocket, hb::kSnapshotRequestMax, hb::FdPolicy::ExactlyOne);
    auto root = hb::recv_message(kSocket, 1, hb::FdPolicy::ExactlyOne);
    if (!request || !root || !root->fd) return 2;
    if (mode == "garbage") {
        send(std::vector<std::uint8_t>(hb::kSnapshotTakenSize, 0xFF));
    } else if (mode == "oversized") {
        std::vector<std::uint8_t> bytes(hb::kSnapshotAnswerMax + 1, 'x');
        bytes[0] = 'e';
        send(bytes);
    } else if (mode == "truncated") {
        auto bytes = taken(1);
        bytes.resize(75);
        send(bytes);
    } else if (mode == "overbudget") {
        send(taken(1ull << 40));
    } else if (mode == "hostile") {
        send(hb::encode_snapshot_answer(hb::make_error("name\x1b[2Jgone\n")));
    } else if (mode == "silent") {
        return 0;
    } else if (mode == "crash") {
        std::abort();
    } else if (mode == "plantlink") {
        if (::symlinkat("/home", root->fd.get(), "h") != 0) return 1;
        send(taken(1));
    } else {
        return 64;
    }
    return 0;
}
