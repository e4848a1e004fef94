#include "client/request/audit_lookup.hpp"

#include <fcntl.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "display/visible.hpp"
#include "ipc/audit_segments.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::client {

using display::visible;

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

std::string answer_text(ResponseState state, std::optional<std::int64_t> exit_code) {
    return "`" + std::string(state_name(state)) + "`" +
           (exit_code ? " exit code " + std::to_string(*exit_code) : std::string());
}

// A request as a person would type it: "`logs api --lines 5`".
std::string described(std::string_view verb, const std::optional<std::string>& arg,
                      const std::optional<std::string>& lines,
                      const std::optional<std::string>& since) {
    std::string text = "`" + visible(verb);
    if (arg) text += " " + visible(*arg);
    if (lines) text += " --lines " + visible(*lines);
    if (since) text += " --since " + visible(*since);
    return text + "`";
}

// What the log says the executor took the request to ask, when that is not
// what this client sent: the agent replaced the file under the same name.
std::optional<std::string> asked_otherwise(const SentAsk& sent, const AuditCheck& check) {
    if (!check.asked) return std::nullopt;
    const RecordedAsk& asked = *check.asked;
    // A refusal records only what it understood: no service for an unknown
    // one, no window where it stopped before reading it. What ran records
    // both.
    const bool same_arg = (!asked.started && !asked.arg) || asked.arg == sent.arg;
    const bool window_recorded = asked.started || asked.lines || asked.since;
    const bool same_window =
        !window_recorded || (asked.lines == sent.lines && asked.since == sent.since);
    if (asked.verb == sent.verb && same_arg && same_window) return std::nullopt;
    return std::string(asked.started ? "the bridge ran " : "the bridge took the request as ") +
           described(asked.verb, asked.arg, asked.lines, asked.since) + ", not what you asked (" +
           described(sent.verb, sent.arg, sent.lines, sent.since) +
           "): the request file was replaced in requests/ (the agent can write there)";
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

Result<AuditCheck> audit_check(const HostInstall& install, const std::string& request_name) {
    if (install.state_dir.empty() || install.state_dir[0] != '/')
        return make_error(install.config_file + " names no state dir");
    UniqueFd dir(::open(install.state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return make_error(sys::errno_text("audit log: state dir " + install.state_dir));
    auto files = audit_log_files(dir.get());
    if (!files) return files.error();
    AuditCheck check;
    check.log = install.state_dir;
    // Newest first: the request just ended, and within a segment the last
    // final event of the name wins; older segments only for what is missing.
    Found found;
    for (auto file = files->rbegin(); file != files->rend(); ++file) {
        Found segment;
        scan_segment(install.state_dir + "/" + *file, request_name, segment);
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

Confirmed confirm_answer(const Response& response, const Result<AuditCheck>& checked,
                         const SentAsk& sent, const std::string& name) {
    Confirmed spools{response.state, response.exit_code, response.reason, std::nullopt, true};
    if (!checked) {
        spools.note = "cannot read the audit log to confirm this answer (" +
                      checked.error().message +
                      "); what follows is the spool's answer, unconfirmed";
        return spools;
    }
    const AuditCheck& check = *checked;
    if (!check.outcome) {
        spools.note =
            "the audit log (" + visible(check.log) + ") records no end of request " + name +
            ": the executor did not write the answer in responses/ (the agent can write any "
            "file there), or counted a refusal in a `summary` past the agent's audit budget; "
            "the spool says " +
            answer_text(response.state, response.exit_code);
        return spools;
    }
    const RecordedOutcome& recorded = *check.outcome;
    Confirmed logs{recorded.state, recorded.exit_code, recorded.reason, std::nullopt, false};
    if (auto otherwise = asked_otherwise(sent, check)) {
        logs.note = *otherwise + "; the log records `" + visible(recorded.event) + "`" +
                    (recorded.exit_code ? " exit code " + std::to_string(*recorded.exit_code)
                                        : std::string()) +
                    (response.output ? "; the output shown is the spool's and unconfirmed" : "");
        logs.refused = true;
        return logs;
    }
    if (recorded.state != response.state || recorded.exit_code != response.exit_code) {
        logs.note = "the spool's answer (" + answer_text(response.state, response.exit_code) +
                    ") is not what the audit log (" + visible(check.log) + ") records: `" +
                    visible(recorded.event) + "`" +
                    (recorded.exit_code ? " exit code " + std::to_string(*recorded.exit_code)
                                        : std::string()) +
                    "; reported as the log says" +
                    (response.output ? "; the output shown is the spool's and unconfirmed" : "");
    }
    return logs;
}

}  // namespace hb::client
