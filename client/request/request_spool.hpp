// The agent's view of the spool: finding it without any host config (so it
// works inside a container) or, run by a person on the host, from the
// person's own config (client/request/host_install.hpp); publishing a
// request atomically, withdrawing one the host never took up, and reading
// its response.
#pragma once

#include <optional>
#include <string>

#include "client/request/host_install.hpp"
#include "client/request/request_message.hpp"
#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::client {

inline constexpr const char* kDefaultSpoolRel = "untracked/hostbridge";

// True when `dir` holds requests/, tmp/ and responses/ directories.
[[nodiscard]] bool is_spool(const std::string& dir);

// Where a client's spool is. `install` is set on the host: the spool is
// that install's, opened beneath its project dir.
struct SpoolPlace {
    std::string path;
    std::optional<HostInstall> install;
};

// On the host (host_installs_root() exists): locate_host_install's
// install, or its error. Elsewhere (docs/agent-clients.md), first match wins:
//   1. `project_dir` (--project-dir DIR): DIR/untracked/hostbridge, or an
//      error when that is not a spool;
//   2. $HOSTBRIDGE_SPOOL, used as given, or an error when it is not a spool;
//   3. $REPO_ROOT/untracked/hostbridge;
//   4. untracked/hostbridge in the git top-level: the nearest directory
//      from the current one upwards that holds a `.git` entry (found
//      without running git, which a container may lack).
Result<SpoolPlace> find_spool(const std::optional<std::string>& project_dir);

class Spool {
  public:
    // With an install: its project dir, then every component of the spool
    // beneath it and tmp/, requests/ and responses/, each opened from the
    // one before with O_NOFOLLOW, so no link the agent planted in the
    // checkout is followed. Without: the spool itself and its three
    // directories no-follow (inside a container the path is the agent's
    // anyway).
    static Result<Spool> open(const SpoolPlace& place);

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string responses_path() const { return path_ + "/responses"; }
    [[nodiscard]] static std::string response_name(const std::string& request_name) {
        return request_name + ".response.json";
    }

    // Writes the body into a file created in tmp/ (O_EXCL, mode 0644 so a
    // host running as another uid can read it), then renames it into
    // requests/. Never writes in place in requests/.
    Result<void> publish(const RequestMessage& message) const;

    // Takes requests/NAME back (renamed into tmp/, then deleted). False when
    // it was no longer there: the host claimed it first.
    [[nodiscard]] bool withdraw(const std::string& name) const;

    // The text of responses/NAME.response.json; nullopt while there is none.
    Result<std::optional<std::string>> read_response(const std::string& name) const;

  private:
    Spool() = default;

    std::string path_;
    UniqueFd tmp_;
    UniqueFd requests_;
    UniqueFd responses_;
};

}  // namespace hb::client
