// Which of `up` and `rebuild` may run unattended on this install: only
// where an escape through the engine is contained, that is with an engine
// user (docs/ENGINE-USER.md) whose podman reads nothing of the agent's that
// the bridge did not make safe. Everywhere else (the engine run as the
// person, docker, rootful podman, binds accepted unpinned, a stack's own
// build) `install` seeds them `ask`, `install` and `upgrade` turn an `auto`
// for them back into `ask` and say why, and `doctor` warns about one set
// back by hand (SECURITY.md, "Postures").
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "ipc/verbs.hpp"

namespace hb::admin {

// The verbs that have the engine read the agent's build inputs or start
// containers from checkout paths.
inline constexpr std::array<Verb, 2> kEngineVerbs = {Verb::Up, Verb::Rebuild};
bool is_engine_verb(Verb verb);

// Why each engine verb is held for a person on `config`'s install: empty
// when it may run unattended.
struct EngineHold {
    std::string up;
    std::string rebuild;
    [[nodiscard]] const std::string& of(Verb verb) const { return verb == Verb::Up ? up : rebuild; }
    [[nodiscard]] bool any() const { return !up.empty() || !rebuild.empty(); }
};
EngineHold engine_hold(const Config& config);

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
