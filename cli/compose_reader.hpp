// Reads a compose file with a real YAML parser (yaml-cpp): the service
// enumeration (`services:` keys), the buildable ones (a `build:` key, as a
// string or a map, also through merge keys and `extends`), and every file
// compose pulls in (`include:`, `env_file:`, `extends.file`), which belong to
// the trusted computing base the integrity gate pins.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ipc/result.hpp"

namespace hb::cli {

// Gives the text of a file by absolute path (nullopt: it does not exist).
// Install reads approved copies through this when a pinned file changed, so
// an unapproved edit cannot steer what gets pinned.
using FileSource = std::function<Result<std::optional<std::string>>(const std::string&)>;
FileSource current_files();

struct ComposeModel {
    std::vector<std::string> services;   // sorted, unique, each a valid request arg
    std::vector<std::string> buildable;  // sorted, subset of services
    // Absolute, normal, sorted: every file pulled in besides the root file,
    // recursively (an absent env_file is listed too: it is pinned as absent).
    std::vector<std::string> referenced_files;
    std::vector<std::string> warnings;  // one sentence each
};

// `compose_file` is absolute. Errors name the file (and line, from YAML).
Result<ComposeModel> read_compose(const std::string& compose_file, const FileSource& source);

}  // namespace hb::cli
