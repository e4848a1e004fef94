#include "admin/install/agent_manifest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "admin/install/agent_doc.hpp"
#include "admin/util/fs_util.hpp"
#include "common/engine_hold.hpp"
#include "engines/argv_table.hpp"
#include "engines/registry.hpp"
#include "ipc/enum_names.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/wire.hpp"
#include "packaging/version.hpp"

namespace hb::admin {
namespace {

std::string_view arg_word(ArgKind kind) {
    static constexpr auto kWords =
        dense_names<ArgKind::Buildable>({"none", "service", "buildable"}, "none");
    return name_of(kWords, kind);
}

nlohmann::json window(const Window& w) {
    return {{"count", w.count}, {"seconds", w.seconds}};
}

}  // namespace

std::string render_agent_manifest(const Config& config, const common::Policy& policy,
                                  const std::string& spool_rel) {
    const bool compose = compose_backend(config.backend.kind);
    nlohmann::json verbs = nlohmann::json::array();
    // As the executor applies them (common/engine_hold.hpp).
    const common::EngineHold hold = exec::engine_hold(config);
    const auto mode_of = [&](Verb verb, std::string_view service = {}) {
        return common::effective_mode(config, hold, policy, verb, service);
    };
    for (Verb verb : kAllVerbs) {
        // The same verbs AGENT.md lists for this install.
        if (!verb_offered(verb, config)) continue;
        // Where a per-service rule differs from the verb's own mode, the
        // service is named with its mode, so the agent knows before it asks.
        nlohmann::json services = nlohmann::json::object();
        // Effective modes on both sides, as AGENT.md compares them
        // (admin/install/agent_doc.cpp): a line not understood denies both alike.
        for (const auto& rule : policy.service_rules) {
            if (rule.verb != verb) continue;
            const common::Mode mode = mode_of(verb, rule.service);
            if (mode != mode_of(verb))
                services[rule.service] = std::string(common::mode_name(mode));
        }
        nlohmann::json item = {{"verb", std::string(verb_name(verb))},
                               {"arg", arg_word(verb_arg_kind(verb))},
                               {"mode", std::string(common::mode_name(mode_of(verb)))}};
        if (!services.empty()) item["service_modes"] = services;
        verbs.push_back(item);
    }
    nlohmann::json out = {
        {"format", 1},
        {"hostbridge", std::string(kVersion)},
        {"spool", spool_rel},
        {"backend", compose ? "compose" : "script"},
        {"verified_outcomes", config.settle.has_value()},
        {"log_window", exec::accepts_log_window(config)},
        {"verbs", verbs},
        {"services", config.services},
        {"buildable", config.buildable},
        {"limits",
         {{"mutating", window(config.limits.mutating)},
          {"read_only", window(config.limits.read_only)}}},
        {"ttl_seconds", config.limits.ttl_seconds},
        {"timeouts",
         {{"default_seconds", config.timeouts.default_seconds},
          {"rebuild_seconds", config.timeouts.rebuild_seconds}}},
    };
    if (config.join_network) out["join_network"] = config.join_network->network;
    return out.dump(2) + "\n";
}

Result<std::vector<std::pair<std::string, std::string>>> drop_agent(
    int spool_fd, const std::string& spool_shown, const std::optional<std::string>& binary,
    const std::string& manifest) {
    std::vector<std::pair<std::string, std::string>> done;
    const std::string shown = spool_shown + "/" + kAgentBinDir;
    bool created = ::mkdirat(spool_fd, kAgentBinDir, 0755) == 0;
    if (!created && errno != EEXIST)
        return make_error("cannot create " + shown + ": " + std::strerror(errno));
    UniqueFd bin(::openat(spool_fd, kAgentBinDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!bin) return make_error(shown + " is a symlink or not a directory");
    struct stat st {};
    if (::fstat(bin.get(), &st) != 0) return make_error("cannot stat " + shown);
    if (st.st_uid != ::geteuid())
        return make_error(shown + " is owned by uid " + std::to_string(st.st_uid) + ", not by you");
    if ((st.st_mode & 07777) != 0755 && ::fchmod(bin.get(), 0755) != 0)
        return make_error("cannot set the mode of " + shown + ": " + std::strerror(errno));
    if (created) done.emplace_back(shown, "created");
    if (binary) {
        const std::string path = shown + "/" + kAgentBinary;
        auto wrote = write_file_at_if_changed(bin.get(), kAgentBinary, *binary, 0755, path);
        if (!wrote) return wrote.error();
        done.emplace_back(path, std::string(outcome_word(*wrote)));
    }
    const std::string path = shown + "/" + kAgentManifest;
    auto wrote = write_file_at_if_changed(bin.get(), kAgentManifest, manifest, 0644, path);
    if (!wrote) return wrote.error();
    done.emplace_back(path, std::string(outcome_word(*wrote)));
    return done;
}

}  // namespace hb::admin
