// The byte layout of the three messages, shared by the executor's half
// (ipc/wire_executor.cpp: encodes Startup and Request, decodes Verdict) and
// the parser's half (ipc/wire_parser.cpp: the inverse), so each process links
// only the code it runs and both hold the same checks. Explicit little-endian
// byte layout (never a memcpy of a struct), and decoders that accept exactly
// the bytes the encoder produces: every padding byte must be zero, every enum
// in range, every combination consistent. So encode(decode(x)) == x whenever
// decode succeeds (the wire fuzzer checks this).
//
// Layouts (offsets in bytes, all integers little-endian):
//
//   Startup (kStartupSize = 4176)
//     0  u32 magic     4  u16 version    6  u16 service count (0..64)
//     8  u64 buildable mask (bit i: services[i] is buildable)
//    16  64 slots of { u8 length (1..64), 64 bytes name, zero padded };
//        unused slots are all zero
//
//   Request (kRequestSize = 267)
//     0  u32 magic     4  u16 version    6  u16 basename length (1..255)
//     8  u32 seq      12  255 bytes basename, zero padded
//
//   Verdict (kVerdictSize = 40)
//     0  u32 magic     4  u16 version    6  u8 outcome    7  u8 verb (0: none)
//     8  u32 seq      12  u16 arg index  14  u16 reason  16  i64 requested_at
//    24  u16 lines (0: none)  26  u16 zero  28  u32 since_seen
//    32  i64 since_ns (INT64_MIN: none)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "ipc/le_bytes.hpp"
#include "ipc/wire.hpp"

namespace hb::wire_layout {

// Smallest and largest epoch a `YYYY-MM-DDTHH:MM:SSZ` time can denote
// (0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z).
inline constexpr std::int64_t kMinEpoch = -62167219200;
inline constexpr std::int64_t kMaxEpoch = 253402300799;
// One Startup slot: a length byte and the name, zero padded.
inline constexpr std::size_t kSlotSize = 1 + kMaxServiceName;

void put_header(std::uint8_t* p);
// Exactly `size` bytes, our magic and version; `what` names the message.
Result<void> check_header(std::span<const std::uint8_t> bytes, std::size_t size, const char* what);
bool all_zero(const std::uint8_t* p, std::size_t n);
// The invariants of a Startup (shapes, order, uniqueness, buildable a
// subset), checked by its encoder and its decoder alike; the buildable mask.
Result<std::uint64_t> buildable_mask(const Startup& startup);

}  // namespace hb::wire_layout
