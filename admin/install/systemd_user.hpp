// Talking to the systemd --user manager through `systemctl --user` (an argv,
// with a deadline). The unit dir is $XDG_CONFIG_HOME/systemd/user, which the
// manager and systemctl both read, so installs in a temporary home work.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "admin/util/process.hpp"
#include "ipc/result.hpp"

namespace hb::admin {

class SystemctlUser {
  public:
    // systemctl from PATH; nullopt when it is not installed.
    static std::optional<SystemctlUser> find();

    // Whether a user manager answers (`systemctl --user show-environment`).
    [[nodiscard]] bool manager_reachable() const;

    // `systemctl --user ARGS...`
    [[nodiscard]] Result<RunResult> run(const std::vector<std::string>& args) const;

    // The first line of `systemctl --user <query> <unit>` (is-enabled,
    // is-active), e.g. "enabled", "active", "failed"; "unknown" on error.
    [[nodiscard]] std::string query(const std::string& query, const std::string& unit) const;

  private:
    explicit SystemctlUser(std::string path) : path_(std::move(path)) {}
    std::string path_;
};

}  // namespace hb::admin
