// The policy side of common/engine_hold.hpp: where an engine verb is held
// for a person, `install` seeds it `ask`, `install` and `upgrade` turn an
// `auto` for it back into `ask` and say why, and `doctor` warns about one
// set back by hand (SECURITY.md, "Two postures").
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "common/engine_hold.hpp"
#include "engines/registry.hpp"
#include "ipc/verbs.hpp"

namespace hb::admin {

using common::EngineHold;
using common::is_engine_verb;
using common::kEngineVerbs;
using exec::engine_hold;

struct EngineGuarded {
    std::string text;                  // the file with those lines changed
    std::vector<std::string> changed;  // their keys, in file order
};

// `text` with each line that is exactly MODE_<verb>[.S]=auto (blanks around
// it aside), for a verb `hold` holds, made KEY=ask; every other byte as it
// was.
EngineGuarded hold_engine_verbs(std::string_view text, const EngineHold& hold);

// The sentence install and doctor give: each held verb with its reason.
std::string engine_hold_reason(const EngineHold& hold);

}  // namespace hb::admin
