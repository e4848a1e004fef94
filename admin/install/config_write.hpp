// What `install` and `approve` write into the state dir: the canonical
// bridge.json text and the policy.conf seed. The drain only reads these
// (common/config.hpp, common/policy.hpp).
#pragma once

#include <string>
#include <string_view>

#include "common/config.hpp"

namespace hb {
// The canonical JSON text of a config (what install and approve write).
std::string serialize_config(const Config& config);
}  // namespace hb

namespace hb::admin {
// The text `install` seeds policy.conf with: every verb auto but down and
// init, and up and rebuild where the install holds them for a person
// (admin/install/policy_engine_guard.hpp): those ask.
std::string default_policy_text(bool up_auto = false, bool rebuild_auto = false);
}  // namespace hb::admin
