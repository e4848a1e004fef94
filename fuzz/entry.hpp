// The fuzz entry points, shared by the libFuzzer targets and the corpus
// replay test so the two cannot drift. Each runs one input and aborts (a
// crash to libFuzzer, a failure to the replay test) when an invariant breaks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hb::fuzz {

// Input: basename bytes, '\n', body bytes (no '\n': all name, empty body).
void validate_one(const std::uint8_t* data, std::size_t size);

// Input: a selector byte (0 verdict, 1 startup, 2 request, modulo 3); for a
// verdict one more byte gives the service count (modulo 65); the rest is the
// message.
void wire_one(const std::uint8_t* data, std::size_t size);

// Input: the bytes of a Containerfile.
void screen_one(const std::uint8_t* data, std::size_t size);

// Input: 8 bytes that choose the window, the cut and the budget, then the
// engine's `logs --timestamps` output.
void loglines_one(const std::uint8_t* data, std::size_t size);

// Input: the MCP server's stdin (JSON-RPC lines), answered to /dev/null.
void mcp_one(const std::uint8_t* data, std::size_t size);

// A base image saved as a docker-archive tar (parser/image_config.cpp).
void image_one(const std::uint8_t* data, std::size_t size);

}  // namespace hb::fuzz
