#include "admin/audit/held_decision.hpp"

#include <nlohmann/json.hpp>

namespace hb::admin {

using common::HeldDecision;

std::string render_decision(const HeldDecision& d) {
    nlohmann::ordered_json j;
    j["decision"] = d.allow ? "allow" : "deny";
    j["generation"] = d.generation;
    j["reason"] = d.reason;
    j["record"] = d.record;
    j["nonce"] = d.nonce;
    return j.dump(2) + "\n";
}

}  // namespace hb::admin
