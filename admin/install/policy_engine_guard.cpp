#include "admin/install/policy_engine_guard.hpp"

namespace hb::admin {
namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

// MODE_<verb>, alone or with a .SERVICE (ipc/verbs.hpp's keys), for a verb
// that `hold` holds.
bool is_held_key(std::string_view key, const EngineHold& hold) {
    for (Verb verb : kEngineVerbs) {
        if (hold.of(verb).empty()) continue;
        const std::string_view name = verb_info(verb).policy_key;
        if (key == name) return true;
        if (key.size() > name.size() + 1 && key.starts_with(name) && key[name.size()] == '.') {
            return true;
        }
    }
    return false;
}

}  // namespace

bool is_engine_verb(Verb verb) {
    for (Verb engine : kEngineVerbs) {
        if (verb == engine) return true;
    }
    return false;
}

EngineHold engine_hold(const Config& config) {
    // Without an engine user the engine runs as the person: whatever a
    // builder feature no screen knew reaches is theirs (buildah followed a
    // link a build step planted in its own cache; SECURITY.md, "Postures").
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
                "command lets a FROM name (their ONBUILD triggers run unscreened)"};
    }
    // An engine user's podman resolves bind sources by path, as that user
    // (docs/ENGINE-USER.md); its builds are refused by the executor until a
    // remote ONBUILD check exists, which no policy needs to hold.
    if (config.engine) {
        if (config.unpinned_binds.empty()) return {};
        return {
            "bridge.json accepts bind sources unpinned (unpinned_binds), which the agent can "
            "swap while a container starts, and the engine user resolves them by path",
            ""};
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
    return {both, both};
}

EngineGuarded hold_engine_verbs(std::string_view text, const EngineHold& hold) {
    EngineGuarded out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find('\n', pos);
        const bool newline = end != std::string_view::npos;
        if (!newline) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        std::string_view core = line;
        while (!core.empty() && is_blank(core.front())) core.remove_prefix(1);
        while (!core.empty() && is_blank(core.back())) core.remove_suffix(1);
        const std::size_t eq = core.find('=');
        if (eq != std::string_view::npos && core.substr(eq + 1) == "auto" &&
            is_held_key(core.substr(0, eq), hold)) {
            out.changed.emplace_back(core.substr(0, eq));
            out.text += std::string(core.substr(0, eq)) + "=ask";
        } else {
            out.text += line;
        }
        if (newline) out.text += '\n';
        pos = end + 1;
    }
    return out;
}

std::string engine_hold_reason(const EngineHold& hold) {
    if (hold.up == hold.rebuild) {
        return hold.up.empty() ? std::string()
                               : "up and rebuild are held for a person (ask): " + hold.up +
                                     " (SECURITY.md, \"Two postures\")";
    }
    std::string out;
    for (Verb verb : kEngineVerbs) {
        if (hold.of(verb).empty()) continue;
        out += (out.empty() ? "" : "; ") + std::string(verb_name(verb)) +
               " is held for a person (ask): " + hold.of(verb);
    }
    return out + " (SECURITY.md, \"Two postures\")";
}

}  // namespace hb::admin
