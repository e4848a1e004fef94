// The MCP server's message reader (client/agent/mcp_server.cpp) on one input: the
// bytes are its stdin, its answers go to /dev/null, and its spool does not
// exist, so a tools/call ends at once as a tool error instead of waiting.
// Issue 28: 100,000 nested arrays in a tools/call crashed it.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

#include "client/agent/mcp_server.hpp"
#include "fuzz/entry.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::fuzz {

void mcp_one(const std::uint8_t* data, std::size_t size) {
    UniqueFd in(::memfd_create("hb-fuzz-mcp", MFD_CLOEXEC));
    UniqueFd out(::open("/dev/null", O_WRONLY | O_CLOEXEC));
    if (!in || !out) std::abort();
    for (std::size_t done = 0; done < size;) {
        const ssize_t n = ::write(in.get(), data + done, size - done);
        if (n <= 0) std::abort();
        done += static_cast<std::size_t>(n);
    }
    if (::lseek(in.get(), 0, SEEK_SET) != 0) std::abort();
    agent::ServerOptions options;
    options.spool = "/nonexistent/hb-fuzz-spool";
    options.manifest = agent::parse_manifest("");
    options.take_up_timeout_seconds = 0;
    options.progress_interval_seconds = 1;
    if (agent::run_mcp_server(options, in.get(), out.get()) != 0) std::abort();
}

}  // namespace hb::fuzz
