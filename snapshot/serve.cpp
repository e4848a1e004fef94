#include "snapshot/serve.hpp"

#include <unistd.h>

#include <string>

#include "ipc/fd_passing.hpp"
#include "ipc/snapshot_wire.hpp"
#include "snapshot/copy.hpp"

namespace hb::snapshot {
namespace {

void say(const std::string& text) {
    const std::string line = "hostbridge-snapshot: " + text + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace

int serve(int sock, const ServeOptions& options) {
    auto asked = recv_message(sock, kSnapshotRequestMax, FdPolicy::ExactlyOne);
    auto dest = recv_message(sock, 1, FdPolicy::ExactlyOne);
    if (!asked || !dest || asked->kind != Received::Kind::Message ||
        dest->kind != Received::Kind::Message || dest->bytes.size() != 1 ||
        dest->bytes[0] != kSnapshotRootTag) {
        say("the executor's messages are out of shape");
        return kExitProtocol;
    }
    auto request = decode_snapshot_request(asked->bytes);
    if (!request) {
        say(request.error().message);
        return kExitProtocol;
    }
    const int context = asked->fd.get();
    const int root = dest->fd.get();
    // Before a byte of the checkout is read.
    auto confined = sandbox::confine_self({context, root, options.max_abi}, sock);
    Result<SnapshotCounts> copied =
        confined ? copy_context(context, root, *request)
                 : Result<SnapshotCounts>(make_error("the snapshot copy could not be confined: " +
                                                     confined.error().message));
    if (copied && options.after_copy) options.after_copy(root);
    if (auto sent = send_message(sock, encode_snapshot_answer(copied)); !sent) {
        say("cannot answer: " + sent.error().message);
        return kExitIo;
    }
    return 0;
}

}  // namespace hb::snapshot
