#include "common/engine_hold.hpp"

namespace hb::common {

bool is_engine_verb(Verb verb) {
    for (Verb engine : kEngineVerbs) {
        if (verb == engine) return true;
    }
    return false;
}

bool held_for_containment(const Config& config, const EngineHold& hold, Verb verb) {
    return is_engine_verb(verb) && !config.accept_uncontained_engine && !hold.of(verb).empty();
}

Mode effective_mode(const Config& config, const EngineHold& hold, const Policy& policy, Verb verb,
                    std::string_view service) {
    const Mode mode = policy.mode(verb, service);
    return mode == Mode::Auto && held_for_containment(config, hold, verb) ? Mode::Ask : mode;
}

}  // namespace hb::common
