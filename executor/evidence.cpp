#include "executor/evidence.hpp"

#include <unistd.h>

#include <cerrno>

#include "common/sha256.hpp"

#include "ipc/sys.hpp"

namespace hb::exec {

using common::sha256_hex;

std::string file_type_name(mode_t mode) {
    if (S_ISREG(mode)) return "regular file";
    if (S_ISDIR(mode)) return "directory";
    if (S_ISLNK(mode)) return "symlink";
    if (S_ISFIFO(mode)) return "fifo";
    if (S_ISSOCK(mode)) return "socket";
    if (S_ISCHR(mode)) return "character device";
    if (S_ISBLK(mode)) return "block device";
    return "unknown file type";
}

std::string describe_evidence(const struct stat& st, int read_fd) {
    std::string out = file_type_name(st.st_mode) + ", " + std::to_string(st.st_size) + " bytes, ";
    if (!S_ISREG(st.st_mode)) return out + "sha256 not computed (not a regular file)";
    if (read_fd < 0) return out + "sha256 not computed (not readable)";
    if (st.st_size > static_cast<off_t>(kMaxHashedBytes)) {
        return out + "sha256 not computed (over 1 MiB)";
    }
    // One byte over the size fstat saw tells a file that grew since; only
    // such a file is read again, up to one byte over the cap. A buffer of
    // the cap for every file cost a flood of 20,000 small junk names 20 GB
    // of zeroed pages (tests/executor/test_audit_budget.cpp).
    std::string bytes(static_cast<std::size_t>(st.st_size) + 1, '\0');
    ssize_t n = sys::pread_full(read_fd, bytes.data(), bytes.size(), 0);
    if (n == static_cast<ssize_t>(bytes.size()) && bytes.size() <= kMaxHashedBytes) {
        bytes.assign(kMaxHashedBytes + 1, '\0');
        n = sys::pread_full(read_fd, bytes.data(), bytes.size(), 0);
    }
    if (n < 0) return out + "sha256 not computed (read error)";
    const auto got = static_cast<std::size_t>(n);
    if (got > kMaxHashedBytes) return out + "sha256 not computed (over 1 MiB)";
    bytes.resize(got);
    return out + "sha256 " + sha256_hex(bytes);
}

}  // namespace hb::exec
