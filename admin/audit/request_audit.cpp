#include "admin/audit/request_audit.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "admin/audit/audit_verify.hpp"
#include "common/config.hpp"

namespace hb::admin {

using client::AuditCheck;
using client::RecordedAsk;
using client::RecordedOutcome;
using client::ResponseState;

namespace {

// What one segment says of a request.
struct Found {
    std::optional<RecordedOutcome> outcome;  // its last final event
    std::optional<RecordedAsk> final_ask;    // what that event names
    std::optional<RecordedAsk> started;      // what its `started` event names
};

// Verb and service an event names (a window only in a final event's
// detail, docs/AUDIT-LOG.md); nullopt when it names no verb (quarantined).
std::optional<RecordedAsk> ask_of(const nlohmann::json& j, bool started) {
    const auto verb = j.find("verb");
    if (verb == j.end() || !verb->is_string()) return std::nullopt;
    RecordedAsk ask;
    ask.started = started;
    ask.verb = verb->get<std::string>();
    if (const auto arg = j.find("arg"); arg != j.end() && arg->is_string())
        ask.arg = arg->get<std::string>();
    const auto detail = j.find("detail");
    if (!started && detail != j.end() && detail->is_object()) {
        if (const auto lines = detail->find("lines");
            lines != detail->end() && lines->is_number_integer())
            ask.lines = std::to_string(lines->get<std::int64_t>());
        if (const auto since = detail->find("since"); since != detail->end() && since->is_string())
            ask.since = since->get<std::string>();
    }
    return ask;
}

void scan_segment(const std::string& file, const std::string& name, Found& found) {
    std::ifstream in(file, std::ios::binary);
    std::string line;
    while (std::getline(in, line)) {
        // A cheap filter first: the name is plain ASCII and written as is.
        if (line.find(name) == std::string::npos) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (!j.is_object() || j.value("request", nlohmann::json()) != name) continue;
        const auto event = j.value("event", nlohmann::json());
        if (!event.is_string()) continue;
        if (event == "started") {
            found.started = ask_of(j, /*started=*/true);
            continue;
        }
        auto state = final_state_of(event.get<std::string>());
        if (!state) continue;
        RecordedOutcome outcome;
        outcome.state = *state;
        outcome.event = event.get<std::string>();
        if (j.contains("exit_code") && j["exit_code"].is_number_integer())
            outcome.exit_code = j["exit_code"].get<std::int64_t>();
        if (j.contains("reason") && j["reason"].is_string())
            outcome.reason = j["reason"].get<std::string>();
        found.outcome = std::move(outcome);
        found.final_ask = ask_of(j, /*started=*/false);
    }
}

// A final event that only a request which started can have: worth reading
// older segments for its `started` event.
bool ends_a_run(const RecordedOutcome& outcome) {
    return outcome.event == "succeeded" || outcome.event == "failed" ||
           outcome.event == "interrupted";
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

Result<AuditCheck> audit_check(const client::HostInstall& install,
                               const std::string& request_name) {
    auto config = load_config(install.config_file);
    if (!config) return config.error();
    auto files = admin::audit_log_files(config->state_dir);
    if (!files) return files.error();
    AuditCheck check;
    check.log = config->state_dir;
    // Newest first: the request just ended, and within a segment the last
    // final event of the name wins; older segments only for what is missing.
    Found found;
    for (auto file = files->rbegin(); file != files->rend(); ++file) {
        Found segment;
        scan_segment(config->state_dir + "/" + *file, request_name, segment);
        if (!found.outcome && segment.outcome) {
            found.outcome = std::move(segment.outcome);
            found.final_ask = std::move(segment.final_ask);
        }
        if (!found.started) found.started = std::move(segment.started);
        if (found.outcome && (found.started || !ends_a_run(*found.outcome))) break;
    }
    check.outcome = std::move(found.outcome);
    // The verb and service from `started`, what ran; the window is recorded
    // on the final event only.
    check.asked = found.started ? found.started : found.final_ask;
    if (check.asked && found.started && found.final_ask) {
        check.asked->lines = found.final_ask->lines;
        check.asked->since = found.final_ask->since;
    }
    return check;
}

}  // namespace hb::admin
