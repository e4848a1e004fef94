#include "admin/audit/request_audit.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "admin/audit/audit_verify.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/locate.hpp"
#include "admin/util/paths.hpp"
#include "common/config.hpp"

namespace hb::admin {

using client::AuditCheck;
using client::RecordedOutcome;
using client::ResponseState;

namespace {

// The last final event naming `name` in one segment, into `found`.
void scan_segment(const std::string& file, const std::string& name,
                  std::optional<RecordedOutcome>& found) {
    std::ifstream in(file, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
        // A cheap filter first: the name is plain ASCII and written as is.
        if (line.find(name) == std::string::npos) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_object() || j.value("request", nlohmann::json()) != name) continue;
        const auto event = j.value("event", nlohmann::json());
        if (!event.is_string()) continue;
        auto state = final_state_of(event.get<std::string>());
        if (!state) continue;
        RecordedOutcome outcome;
        outcome.state = *state;
        outcome.event = event.get<std::string>();
        if (j.contains("exit_code") && j["exit_code"].is_number_integer())
            outcome.exit_code = j["exit_code"].get<std::int64_t>();
        if (j.contains("reason") && j["reason"].is_string())
            outcome.reason = j["reason"].get<std::string>();
        found = std::move(outcome);
    }
}

}  // namespace

std::optional<ResponseState> final_state_of(std::string_view event) {
    // As executor/drain_finish.hpp records each final state, plus the ends
    // the drain writes itself (executor/drain.cpp): an interrupted request
    // is answered `failed`, a quarantined one `denied`.
    if (event == "succeeded") return ResponseState::Done;
    if (event == "failed" || event == "interrupted") return ResponseState::Failed;
    if (event == "denied" || event == "quarantined") return ResponseState::Denied;
    if (event == "expired") return ResponseState::Expired;
    return std::nullopt;
}

Result<std::optional<AuditCheck>> audit_check(const std::string& spool_path,
                                              const std::string& request_name) {
    auto dirs = host_dirs_from_env();
    if (!dirs) return dirs.error();
    const auto spool = canonical_path(spool_path);
    if (!spool) return std::optional<AuditCheck>();
    for (const auto& slug : installed_slugs(*dirs)) {
        auto config = load_config(install_paths(*dirs, slug).config_file);
        if (!config) continue;
        const auto served = canonical_path(config->spool_dir);
        if (!served || *served != *spool) continue;
        auto files = admin::audit_log_files(config->state_dir);
        if (!files) return files.error();
        AuditCheck check;
        check.log = config->state_dir;
        // Newest first: the request just ended, and within a segment the
        // last final event of the name wins.
        for (auto file = files->rbegin(); file != files->rend() && !check.outcome; ++file)
            scan_segment(config->state_dir + "/" + *file, request_name, check.outcome);
        return std::optional<AuditCheck>(std::move(check));
    }
    return std::optional<AuditCheck>();
}

}  // namespace hb::admin
