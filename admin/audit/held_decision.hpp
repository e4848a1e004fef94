// A person's decision on a held request as `hostbridge allow|deny` writes
// it; the drain reads it with common::parse_decision (common/held.hpp), and
// tests/executor/test_decide_ask.cpp checks that the two agree.
#pragma once

#include <string>

#include "common/held.hpp"

namespace hb::admin {

std::string render_decision(const common::HeldDecision& decision);

}  // namespace hb::admin
