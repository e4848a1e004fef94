#include "executor/oneshot_reader.hpp"

#include "executor/parser_client.hpp"
#include "ipc/fd_passing.hpp"

namespace hb::exec {

Result<std::vector<std::uint8_t>> ask_oneshot_reader(const std::string& parser_path,
                                                     const OneshotReader& reader,
                                                     std::span<const std::uint8_t> request,
                                                     int fd) {
    const std::string name = reader.name;
    auto spawned = spawn_parser(parser_path, reader.mode);
    if (!spawned) return make_error("cannot start " + name + ": " + spawned.error().message);
    // The child is killed and reaped when `spawned` goes out of scope.
    if (auto sent = send_message_with_fd(spawned->sock.get(), request, fd); !sent)
        return make_error("cannot send the input to " + name + ": " + sent.error().message);
    auto received = recv_message_timeout(spawned->sock.get(), reader.answer_size, FdPolicy::None,
                                         reader.timeout_ms);
    if (!received) return make_error("bad answer from " + name + ": " + received.error().message);
    switch (received->kind) {
        case Received::Kind::Timeout:
            return make_error(name + " did not answer within " +
                              std::to_string(reader.timeout_ms / 1000) + " s");
        case Received::Kind::Eof:
            return make_error(name + " exited without an answer");
        case Received::Kind::Message:
            break;
    }
    return std::move(received->bytes);
}

}  // namespace hb::exec
