// The one reading of a compose model the bridge trusts (yaml-cpp, strict).
// It enumerates the services (`services:` keys) and the buildable ones (a
// `build:` key, also through merge keys and `extends`), lists every file
// compose pulls in (`include:`, `env_file:`, `extends.file`), which the
// integrity gate pins, and renders each compose file it read for the engine:
// the executor runs compose on the rendered copies in a host-only run tree,
// so the engine reads exactly what this reader read.
//
// What two YAML readers (yaml-cpp here, PyYAML or Go's in the engine) could
// take differently is refused, naming the file, line and key: duplicate
// keys, explicit tags, more than one document, interpolation (`$`) in a file
// reference, a reference that names the checkout under another spelling
// (compared by device and inode), anchors or merge keys expanding past a
// fixed node budget, and files over a size limit. The rendered text is this
// reader's tree written back as plain block YAML (merge keys resolved, no
// anchors, every non-plain scalar double-quoted), so nothing is left for a
// second reader to interpret.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ipc/result.hpp"

namespace hb::admin {

inline constexpr std::size_t kMaxComposeFileBytes = 1u << 20;
// Nodes visited while expanding one model (aliases count each time they are
// used): a merge-key bomb ends here with an error instead of spinning.
inline constexpr std::size_t kMaxComposeNodes = 100000;

// Gives the text of a file by absolute path (nullopt: it does not exist).
// Install reads approved copies through this when a pinned file changed, so
// an unapproved edit cannot steer what gets pinned.
using FileSource = std::function<Result<std::optional<std::string>>(const std::string&)>;
FileSource current_files();

struct RenderedCompose {
    std::string file;  // absolute path of the compose file it renders
    std::string text;  // what the engine reads instead, in the run tree
};

// A bind mount whose source lies inside the checkout (doctor warns).
struct CheckoutBind {
    std::string file;     // absolute compose file
    int line = 0;         // 1-based
    std::string service;  // the service it belongs to
    std::string source;   // relative to the project dir ("." for the whole)
};

// A service's own `build:` as the approved file says it (install turns it
// into bridge.json's build.services; docs/BUILDS.md).
struct ComposeBuild {
    std::string service;
    std::string context;     // relative to the project dir ("." for itself)
    std::string dockerfile;  // `build.dockerfile` as written, or empty
    std::string target;
    std::vector<std::string> args;  // KEY=VALUE or KEY, in file order
    std::string image;              // the service's `image:`, or empty
    std::string container_name;     // the service's `container_name:`, or empty
};

struct ComposeModel {
    std::vector<std::string> services;   // sorted, unique, each a valid request arg
    std::vector<std::string> buildable;  // sorted, subset of services
    // Absolute, normal, sorted: every file pulled in besides the root file,
    // recursively (an absent env_file is listed too: it is pinned as absent).
    std::vector<std::string> referenced_files;
    // Every compose file inside the project that was read (root first, then
    // by path), rendered: relative paths that must refer to the checkout
    // (build contexts, bind sources, secret and config files) made absolute
    // to the project dir; references to files the run tree mirrors
    // (env_file, extends.file, include) kept relative.
    std::vector<RenderedCompose> rendered;
    // Relative to the project dir ("." for itself), sorted, unique: what the
    // rendered files name inside the checkout; the executor walks each with
    // no-follow opens before it runs a command.
    std::vector<std::string> checkout_paths;
    std::vector<CheckoutBind> checkout_binds;
    // Relative, sorted, unique: the checkout paths the rendered files
    // bind-mount, named there by their pins (bind_pin_path); empty unless
    // read_compose was given a run dir to pin into.
    std::vector<std::string> pinned_sources;
    // Sorted by service: each buildable service whose build the bridge can
    // run from a snapshot (its own `build:` with a context in the project,
    // no `extends`, named once). The others are named in `warnings`.
    std::vector<ComposeBuild> builds;
    std::vector<std::string> warnings;  // one sentence each
    // With `install_project`: each service of the root (or an included)
    // file by the sha256 of its rendered definition, the value of the label
    // kDefinitionLabel it carries there (ipc/inspect_wire.hpp): its keys
    // sorted at every level, that label left out (docs/COMPOSE.md,
    // "Applying an approved edit").
    std::map<std::string, std::string> definitions;
};

// `compose_file` is absolute. Errors name the file, line and key.
// `project_dir` (canonical) defaults to the compose file's directory. With
// `pin_run_dir`, each bind source inside the project is rendered as its pin
// under that run dir (common/config.hpp, bind_pin_path) and listed in
// pinned_sources; without it, as the absolute checkout path. With
// `install_project` (the compose project name), every service of the
// rendered files carries the label kInstallLabel=install_project
// (ipc/inspect_wire.hpp), replacing any the file gives it, and
// kDefinitionLabel=its definition's hash (ComposeModel::definitions).
Result<ComposeModel> read_compose(const std::string& compose_file, const FileSource& source,
                                  const std::string& project_dir = "",
                                  const std::string& pin_run_dir = "",
                                  const std::string& install_project = "");

}  // namespace hb::admin
