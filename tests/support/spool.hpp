// The spool as the tests play either side of it (docs/PROTOCOL.md): the
// host's answer published, a client's request waited for.
#pragma once

#include <chrono>
#include <string>

namespace hb::test {

// Publishes `body` as the response to `request` the way the host does:
// written in tmp/, then renamed into responses/.
void publish_response(const std::string& spool, const std::string& request,
                      const std::string& body);
// Waits up to `limit` for an entry ending in .json in `dir`; its name, or
// empty when none came.
std::string wait_for_json(const std::string& dir,
                          std::chrono::milliseconds limit = std::chrono::seconds(20));

}  // namespace hb::test
