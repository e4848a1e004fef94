// The container-facts reader, run in the sandbox: a fresh `hostbridge-parser
// --inspect` (locked down as the request parser is) reads the engine's
// `container inspect` output through the fd we attach and answers fixed
// records (ipc/inspect_wire.hpp). The executor never parses that JSON: it
// carries labels, environment and healthcheck output the agent chose.
#pragma once

#include <string>
#include <vector>

#include "ipc/inspect_wire.hpp"
#include "ipc/result.hpp"

namespace hb::exec {

// Reads the output open at `fd` (from its current offset). An error means
// the reader could not answer (crash, hang, garbage) or refused the output:
// the caller treats the containers as unknown. `install_label`: a compose
// install's, whose containers count as the project's only with
// kInstallLabel=project too. `definitions`: empty, or one per service, the
// definition its containers' kDefinitionLabel is compared with.
Result<std::vector<ContainerFacts>> inspect_in_sandbox(
    const std::string& parser_path, int fd, const std::string& project,
    const std::vector<std::string>& services, bool install_label,
    std::vector<std::array<std::uint8_t, 32>> definitions = {});

}  // namespace hb::exec
