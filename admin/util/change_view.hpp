// What a person sees of a change to a trusted file before pinning it
// (approve) or when it no longer matches its pin (doctor): both sides' size
// and SHA-256, a unified diff with every invisible character made visible,
// and, for a file that is not plain text (NUL or other control bytes,
// invalid UTF-8, bidirectional or zero-width characters), a hex dump of
// every changed byte. Never "Binary files differ".
#pragma once

#include <optional>
#include <string>

#include "ipc/result.hpp"

namespace hb::admin {

// nullopt content stands for an absent file. The labels name the two sides
// (they are made visible too). The result ends with a newline.
Result<std::string> render_change(const std::string& old_label,
                                  const std::optional<std::string>& old_content,
                                  const std::string& new_label,
                                  const std::optional<std::string>& new_content);

// approve's view of one file on stdout: "=== <rel>: <what>", then
// render_change of approved/<rel> against <rel>. Also for a file that is
// shown to a person but not pinned as such (a rendered compose file).
Result<void> show_change(const std::string& rel, const std::string& what,
                         const std::optional<std::string>& approved,
                         const std::optional<std::string>& now);

// "<size> bytes, sha256 <hex>" or "absent".
std::string size_and_sha256(const std::optional<std::string>& content);

// The bytes [begin, end) of `data` as hex dump lines ("<sign> OFFSET  hex  |ascii|"),
// whole 16-byte rows from the one holding `begin`.
std::string hex_dump(char sign, const std::string& data, std::size_t begin, std::size_t end);

}  // namespace hb::admin
