// Resolves a command name to an absolute binary path at install time, the
// way the user's own prompt would: a path, a name on PATH, or an alias that
// only the user's interactive shell knows. The unit's PATH never sees the
// user's rc files, so the result is baked into bridge.json as a path.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ipc/result.hpp"

namespace hb::admin {

struct ResolveEnv {
    std::string path_var;  // $PATH
    std::string shell;     // $SHELL, else the passwd shell, else /bin/sh
    std::string home;      // for "~/" in an alias
};
ResolveEnv resolve_env_from_process();

// The first executable regular file called `name` on `path_var`.
std::optional<std::string> find_on_path(std::string_view name, std::string_view path_var);

// A path (relative to the cwd; it must be an executable regular file), then
// a name on PATH, then an alias of `$SHELL -i` naming a single binary. A
// shell function, a builtin or an alias with arguments is refused with a
// sentence that says so. A path keeps its last component (a multi-call
// binary cares about argv[0]); its directory is made canonical.
Result<std::string> resolve_binary(std::string_view name_or_path, const ResolveEnv& env);

}  // namespace hb::admin
