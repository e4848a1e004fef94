#include "common/engine_hold.hpp"

namespace hb::common {

bool is_engine_verb(Verb verb) {
    for (Verb engine : kEngineVerbs) {
        if (verb == engine) return true;
    }
    return false;
}

EngineHold engine_hold(const Config& config) {
    // Without an engine user the engine runs as the person: whatever a
    // builder feature no screen knew reaches is theirs (buildah followed a
    // link a build step planted in its own cache; SECURITY.md, "Two postures").
    constexpr const char* kSameUser =
        "the engine runs as you, so a builder feature the screen does not know reaches your "
        "files (it happened: buildah follows links a build step plants in its own cache); an "
        "engine user contains it (`hostbridge engine setup`, docs/ENGINE-USER.md)";
    if (config.backend.kind == BackendKind::Stack) {
        // A stack builds with its own command, whose base images the bridge
        // cannot check (docs/BUILDS.md); its `start` may build as well.
        return {config.engine ? "" : kSameUser,
                "a stack builds with its own command: the bridge hands it a screened snapshot "
                "where install recorded a context, but cannot check which base images that "
                "command lets a FROM name (their ONBUILD triggers run unscreened)",
                ""};
    }
    // An engine user contains an escape (SECURITY.md, "Two postures"): a
    // bind source swapped for a link mounts only what that user may read.
    // But podman-compose runs as the person and, creating a container,
    // makes the directories a swapped source names (its assert_volume,
    // measured in e2e_engine_user), so binds accepted unpinned hold `up`.
    // `restart` creates nothing (docs/ENGINE-USER.md).
    if (config.engine) {
        if (config.unpinned_binds.empty()) return {};
        return {
            "bridge.json accepts bind sources unpinned (unpinned_binds): the agent can swap one "
            "for a link while compose creates a container, and podman-compose, run as you, "
            "makes the directories the link names",
            "", ""};
    }
    // Where the engine runs as the person, a more particular reason first.
    const char* both = kSameUser;
    if (config.backend.flavour != ComposeFlavour::PodmanCompose) {
        both =
            "with docker, bind sources in the checkout are resolved by the daemon at every "
            "start, where the agent can swap them, and docker's builder was never tried "
            "against the screen";
    } else if (!config.pins) {
        both =
            "with rootful podman, bind sources in the checkout are resolved by path at every "
            "start, where the agent can swap them (only rootless podman's are pinned)";
    } else if (!config.unpinned_binds.empty()) {
        both =
            "bridge.json accepts bind sources unpinned (unpinned_binds), which the agent can "
            "swap while a container starts";
    }
    // A bind accepted unpinned is resolved again by every start, restart's
    // too, with the person's rights: a swap mounts their home.
    const std::string restart =
        config.unpinned_binds.empty()
            ? std::string()
            : "bridge.json accepts bind sources unpinned (unpinned_binds), which the agent can "
              "swap while restart starts a container again, as you";
    return {both, both, restart};
}

bool held_for_containment(const Config& config, Verb verb) {
    return is_engine_verb(verb) && !config.accept_uncontained_engine &&
           !engine_hold(config).of(verb).empty();
}

Mode effective_mode(const Config& config, const Policy& policy, Verb verb,
                    std::string_view service) {
    const Mode mode = policy.mode(verb, service);
    return mode == Mode::Auto && held_for_containment(config, verb) ? Mode::Ask : mode;
}

}  // namespace hb::common
