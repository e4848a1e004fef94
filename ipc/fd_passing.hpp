// Whole messages over a SOCK_SEQPACKET socket, optionally carrying one fd
// (SCM_RIGHTS). Every received fd lands in a UniqueFd with O_CLOEXEC set
// atomically (MSG_CMSG_CLOEXEC); on any anomaly every fd that arrived is
// closed before the error is returned, so a hostile peer cannot leak fds
// into us.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb {

// Sends one message. Empty messages are refused: on a SEQPACKET socket the
// receiver could not tell one from the end of the stream.
Result<void> send_message(int sock, std::span<const std::uint8_t> bytes);
// Sends one message with exactly one fd attached.
Result<void> send_message_with_fd(int sock, std::span<const std::uint8_t> bytes, int fd);

// How many fds a received message must carry.
enum class FdPolicy { None, ExactlyOne };

struct Received {
    enum class Kind { Message, Eof, Timeout };
    Kind kind = Kind::Message;
    std::vector<std::uint8_t> bytes;  // the message, at most max_size bytes
    UniqueFd fd;                      // set only with FdPolicy::ExactlyOne
};

// Blocks until one whole message of at most `max_size` bytes arrives (Kind
// Message) or the peer closed the socket (Kind Eof). Errors: a message larger
// than max_size (MSG_TRUNC), a truncated control message (MSG_CTRUNC), any
// control message other than SCM_RIGHTS, or a number of fds other than the
// policy's. EINTR is retried.
Result<Received> recv_message(int sock, std::size_t max_size, FdPolicy fds);

// The same, waiting at most `timeout_ms` milliseconds (poll); Kind Timeout
// when nothing arrived in time.
Result<Received> recv_message_timeout(int sock, std::size_t max_size, FdPolicy fds, int timeout_ms);

}  // namespace hb
