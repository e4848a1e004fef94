// Which of `up` and `rebuild` may run unattended on an install: only where
// an escape through the engine is contained, that is with an engine user
// (docs/ENGINE-USER.md) whose podman reads nothing of the agent's that the
// bridge did not make safe. Everywhere else (the engine run as the person,
// binds accepted unpinned, a stack's own build) each is held for a person. The executor holds them
// whatever policy.conf says (executor/decide.cpp) unless bridge.json says the person accepted it
// (accept_uncontained_engine); `install` and `upgrade` seed and set them `ask`
// (admin/install/policy_engine_guard.hpp) and `doctor` warns. One check, linked into both
// (SECURITY.md, "Two postures").
#pragma once

#include <array>
#include <string>

#include "common/config.hpp"
#include "common/policy.hpp"
#include "ipc/verbs.hpp"

namespace hb::common {

// The verbs that have the engine read the agent's build inputs or start
// containers from checkout paths: `restart` starts them again, resolving
// bind sources by path where nothing pins them.
inline constexpr std::array<Verb, 3> kEngineVerbs = {Verb::Up, Verb::Rebuild, Verb::Restart};
bool is_engine_verb(Verb verb);

// Why each engine verb is held for a person on an install: empty when it
// may run unattended. Which reasons an install has depends on its engine:
// the registry says (engine_hold, engines/registry.hpp).
struct EngineHold {
    std::string up;
    std::string rebuild;
    std::string restart;
    // Only for an engine verb; every other verb is never held by this.
    [[nodiscard]] const std::string& of(Verb verb) const {
        return verb == Verb::Up ? up : verb == Verb::Rebuild ? rebuild : restart;
    }
    std::string& of(Verb verb) {
        return verb == Verb::Up ? up : verb == Verb::Rebuild ? rebuild : restart;
    }
    [[nodiscard]] bool any() const { return !up.empty() || !rebuild.empty() || !restart.empty(); }
};

// Whether the executor holds `verb` for a person although the policy says
// auto: an engine verb with a reason above, on an install whose bridge.json
// does not say the person accepted an uncontained engine.
bool held_for_containment(const Config& config, const EngineHold& hold, Verb verb);

// policy.mode(verb, service) as the executor applies it: auto becomes ask
// where held_for_containment. What the agent is told (AGENT.md, its
// manifest) and what the drain does read this one answer.
Mode effective_mode(const Config& config, const EngineHold& hold, const Policy& policy, Verb verb,
                    std::string_view service = {});

}  // namespace hb::common
