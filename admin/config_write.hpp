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

namespace hb::exec {
// The text `install` seeds policy.conf with: every verb auto.
std::string_view default_policy_text();
}  // namespace hb::exec
