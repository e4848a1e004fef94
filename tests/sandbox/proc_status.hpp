// Reading another process's /proc entries, from the outside: the locked
// child itself can no longer open anything.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>

namespace hb::sandbox::test {

// "/proc/<pid>/<name>" as text ("" when it cannot be read).
std::string read_proc_file(pid_t pid, const std::string& name);

// /proc/<pid>/status as key -> value ("CapEff" -> "0000000000000000").
std::map<std::string, std::string> proc_status(pid_t pid);

// The soft limit of one /proc/<pid>/limits row ("Max open files" -> "8").
std::string proc_soft_limit(pid_t pid, const std::string& row);

// The fds in /proc/<pid>/fd; nothing when it cannot be listed.
std::optional<std::set<int>> proc_fds(pid_t pid);

// readlink("/proc/<pid>/ns/<ns>"), e.g. "user:[4026531837]"; "" on error.
std::string proc_namespace(pid_t pid, const std::string& ns);

}  // namespace hb::sandbox::test
