// What the audit log keeps about a quarantined file, since the agent can
// delete the quarantined copy but not the log: its type, size and SHA-256.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>

namespace hb::exec {

// Files larger than this are described without a hash: a drain never spends
// unbounded time on a file the agent planted.
inline constexpr std::size_t kMaxHashedBytes = 1 << 20;

// "fifo" / "regular file" / "directory" ...
std::string file_type_name(mode_t mode);

// "regular file, 57 bytes, sha256 <hex>". `read_fd` is open for reading on
// the same file (its offset is left alone: pread), or -1 when the file must
// not or could not be opened; then the hash is "not computed (why)".
std::string describe_evidence(const struct stat& st, int read_fd);

}  // namespace hb::exec
