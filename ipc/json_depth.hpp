// A bound on JSON nesting, checked on the text before it is parsed.
// nlohmann::json builds, copies and destroys nested values recursively, so
// 100,000 nested arrays (200 KB) crashed `hostbridge-agent mcp` with
// SIGSEGV. Every JSON reader the agent can reach checks this first: MCP
// messages, responses/ and the tool manifest in the spool (client/, admin/),
// and the engine's `container inspect` output in the sandboxed parser
// (parser/container_inspect.cpp), one check linked into each.
#pragma once

#include <cstddef>
#include <string_view>

namespace hb {

// Deep enough for every message of ours (responses and MCP calls nest at
// most 5), far below what exhausts a thread's stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Whether no array or object in `text` lies deeper than `max_depth`
// (brackets inside strings do not count). Says nothing else about `text`.
bool json_depth_within(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

}  // namespace hb
