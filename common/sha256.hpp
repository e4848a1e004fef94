// SHA-256 (OpenSSL EVP) as lowercase hex, for the integrity gate and the
// installer's pins.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace hb::common {

// Hashes bytes.
std::string sha256_hex(std::string_view bytes);

// Hashes everything read from `fd` from its current offset to end of file;
// an error once more than `max_bytes` were read (the gate's bound,
// common/integrity_gate.hpp).
Result<std::string> sha256_fd(int fd, std::uint64_t max_bytes = UINT64_MAX);

}  // namespace hb::common
