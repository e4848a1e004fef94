// Until builds run from host-owned snapshots (SECURITY.md, "What is not
// defended": the engine reads the agent's build inputs as you), a
// `rebuild`, and a compose `up` that builds a missing image, have the engine
// read the agent's Containerfile and build context as the host user, and
// Debian 12's builder lets one `RUN --mount` line of it reach the host's
// files. So `install` and `upgrade` hold both for a person: every `auto`
// for them in policy.conf becomes `ask`, and they say so.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/verbs.hpp"

namespace hb::cli {

// The verbs that have the engine read the agent's build inputs: the one
// list the guard, doctor and `policy suggest` hold for a person.
inline constexpr std::array<Verb, 2> kEngineVerbs = {Verb::Up, Verb::Rebuild};
bool is_engine_verb(Verb verb);

struct EngineGuarded {
    std::string text;                  // the file with those lines changed
    std::vector<std::string> changed;  // their keys, in file order
};

// `text` with each line that is exactly MODE_rebuild[.S]=auto or
// MODE_up[.S]=auto (blanks around it aside) made KEY=ask; every other byte
// as it was.
EngineGuarded hold_engine_verbs(std::string_view text);

// The sentence install and doctor give for it.
std::string_view engine_verbs_reason();

}  // namespace hb::cli
