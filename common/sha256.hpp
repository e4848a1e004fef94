// SHA-256 (OpenSSL EVP) as lowercase hex, for the integrity gate and the
// installer's pins.
#pragma once

#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace hb::common {

// Hashes bytes.
std::string sha256_hex(std::string_view bytes);

// Hashes everything read from `fd` from its current offset to end of file.
Result<std::string> sha256_fd(int fd);

}  // namespace hb::common
