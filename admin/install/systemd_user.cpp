#include "admin/install/systemd_user.hpp"

#include "admin/util/resolve_binary.hpp"

namespace hb::admin {

std::optional<SystemctlUser> SystemctlUser::find() {
    auto found = find_on_path("systemctl", resolve_env_from_process().path_var);
    if (!found) return std::nullopt;
    return SystemctlUser(*found);
}

Result<RunResult> SystemctlUser::run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {path_, "--user", "--no-pager"};
    argv.insert(argv.end(), args.begin(), args.end());
    RunOptions options;
    options.timeout = std::chrono::seconds(30);
    options.new_session = false;
    return run_process(argv, options);
}

bool SystemctlUser::manager_reachable() const {
    auto ran = run({"show-environment"});
    return ran && ran->ok();
}

std::string SystemctlUser::query(const std::string& query, const std::string& unit) const {
    auto ran = run({query, unit});
    if (!ran || ran->timed_out) return "unknown";
    std::string line = ran->out.substr(0, ran->out.find('\n'));
    return line.empty() ? "unknown" : line;
}

}  // namespace hb::admin
