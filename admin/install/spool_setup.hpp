// The spool as install creates it and doctor checks it (docs/PROTOCOL.md, "Spool
// layout"): real directories, no symlink anywhere below the project dir,
// owned by the host user, mode 0755; with --agent-gid, tmp/ and requests/
// are 2770 and owned by that group, so an agent of another uid can publish.
#pragma once

#include <sys/types.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {

inline constexpr std::array<std::string_view, 7> kSpoolSubdirs = {
    "tmp", "requests", "processing", "responses", "archive", "quarantine", "diagnostics"};

inline constexpr std::string_view kDefaultSpool = "untracked/hostbridge";

// A spool path relative to the project: not empty, not absolute, no "." or
// ".." component, only [A-Za-z0-9._-] in each component.
Result<void> validate_spool_rel(std::string_view rel);

mode_t expected_spool_mode(std::string_view subdir, std::optional<gid_t> agent_gid);

struct SpoolChange {
    std::string path;
    std::string what;  // "created", "mode set to 0755", ...
};

// Creates the spool (and the dirs above it inside the project) and its
// subdirectories, fixing modes and group; walks with O_NOFOLLOW dirfds so a
// symlink planted anywhere on the way is an error, never followed.
Result<std::vector<SpoolChange>> ensure_spool(const std::string& project_dir,
                                              const std::string& spool_rel,
                                              std::optional<gid_t> agent_gid);

// The spool as the admin tool touches it: opened from the project dir one
// component at a time with O_DIRECTORY|O_NOFOLLOW, then every read, write
// and removal goes through these fds (openat, unlinkat, renameat), never a
// path string. Nothing is created.
struct PinnedSpool {
    std::string path;                                    // for messages only
    UniqueFd parent;                                     // the directory holding the spool
    std::string name;                                    // the spool's own name in `parent`
    UniqueFd root;                                       // invalid when the spool does not exist
    std::array<UniqueFd, kSpoolSubdirs.size()> subdirs;  // invalid when absent
};
// A symlink or a non-directory on the way to the spool or as one of its
// subdirectories is an error naming it (the caller changes nothing then);
// an absent one is not.
Result<PinnedSpool> open_spool(const std::string& project_dir, const std::string& spool_rel);
// The sentence and fix for such an error, the same for every command.
std::string spool_refusal(const std::string& message);

struct SpoolProblem {
    std::string sentence;
    std::vector<std::string> fixes;  // bare commands
};
// What doctor reports about the spool dirs; empty when all is well.
std::vector<SpoolProblem> check_spool(const std::string& project_dir, const std::string& spool_dir,
                                      std::optional<gid_t> agent_gid);

std::string mode_text(mode_t mode);  // "0755", "2770"

}  // namespace hb::admin
