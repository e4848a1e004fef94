// What drain.cpp and drain_held.cpp share inside the drain: how one
// finished request is written down. Not a public interface.
#pragma once

#include <array>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

#include "common/audit_log.hpp"
#include "executor/decide.hpp"
#include "executor/drain.hpp"
#include "executor/responses.hpp"

namespace hb::exec {

inline std::time_t wall_now() {
    return std::time(nullptr);
}

// How each state of a decision is written down: the response's state and
// the audit event, side by side so that the two cannot disagree.
struct Recorded {
    FinalState state;
    ResponseState response;
    common::AuditEvent event;
};
inline constexpr std::array<Recorded, 5> kRecorded = {{
    {FinalState::Done, ResponseState::Done, common::AuditEvent::Succeeded},
    {FinalState::Failed, ResponseState::Failed, common::AuditEvent::Failed},
    {FinalState::Denied, ResponseState::Denied, common::AuditEvent::Denied},
    {FinalState::Expired, ResponseState::Expired, common::AuditEvent::Expired},
    {FinalState::Held, ResponseState::Pending, common::AuditEvent::Held},
}};

inline const Recorded& recorded_as(FinalState state) {
    for (const Recorded& row : kRecorded) {
        if (row.state == state) return row;
    }
    return kRecorded[2];  // denied, for a value outside the enum
}

// An audit failure stops the drain: nothing may run unlogged.
inline Result<void> logged_or_stop(const Result<void>& logged, std::string_view before) {
    if (logged) return {};
    return make_error("the audit log cannot be written (" + logged.error().message +
                      "); stopping before anything " + std::string(before) + "runs");
}

inline common::AuditRecord record(common::AuditEvent event, const std::string& name,
                                  std::optional<std::string> reason) {
    common::AuditRecord r;
    r.event = event;
    r.request = name;
    r.reason = std::move(reason);
    return r;
}

// One finished request: what the audit log records, what the agent is told
// and where the file goes, done in that order.
struct Drain::Finish {
    enum class To { Archive, Quarantine, Nowhere };
    SpoolDir from = SpoolDir::Processing;
    std::string name;
    common::AuditRecord record;
    std::optional<Response> response;
    To to = To::Archive;

    // A request that ran nothing: `event` and `reason` in the log.
    static Finish of(const std::string& name, common::AuditEvent event, std::string reason,
                     To to = To::Archive, SpoolDir from = SpoolDir::Processing) {
        return Finish{from, name, exec::record(event, name, std::move(reason)), std::nullopt, to};
    }
    // A decided request: the audit record and the response both from
    // `decision`; the file itself goes to archive/.
    static Finish decided(const std::string& name, std::optional<Verb> verb,
                          std::optional<std::string> arg, std::optional<std::int64_t> requested_at,
                          const Decision& decision) {
        const Recorded& as = recorded_as(decision.state);
        Finish f{SpoolDir::Processing, name,
                 exec::record(as.event, name, decision_reason(decision)), std::nullopt,
                 To::Archive};
        f.record.verb = verb;
        f.record.arg = arg;
        f.record.exit_code = decision.exit_code;
        f.record.duration_ms = decision.duration_ms;
        f.record.detail = decision.audit_detail;
        Response& r = *f.respond(as.response, f.record.reason).response;
        r.verb = verb;
        r.arg = std::move(arg);
        r.requested_at = requested_at;
        r.exit_code = decision.exit_code;
        r.output = decision.output;
        r.log = decision.log;
        r.services = decision.services;
        r.cursor = decision.cursor;
        r.more = decision.more;
        return f;
    }
    // ... and the agent told `state` with `reason`.
    Finish& respond(ResponseState state, std::optional<std::string> reason) {
        Response r;
        r.state = state;
        r.request = name;
        r.updated_at = wall_now();
        r.reason = std::move(reason);
        response = std::move(r);
        return *this;
    }
};

}  // namespace hb::exec
