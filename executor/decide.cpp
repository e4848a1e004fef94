// TEMPORARY: the placeholder of the decide-and-run step until expiry, policy,
// the integrity gate, the rate limiter and the runner land. It answers
// `ping` and refuses everything else; it must not survive that change.
#include "executor/decide.hpp"

namespace hb::exec {

Decision decide_and_run(DrainContext& /*context*/, const Claimed& /*request*/,
                        const Verdict& verdict) {
    Decision decision;
    if (verdict.verb == Verb::Ping) {
        decision.state = FinalState::Done;
        decision.output = "pong";
        return decision;
    }
    decision.state = FinalState::Denied;
    decision.reason = ReasonCode::PolicyDeny;
    decision.reason_detail = "verb not yet supported by this build";
    return decision;
}

}  // namespace hb::exec
