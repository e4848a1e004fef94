#include "cli/policy_engine_guard.hpp"

namespace hb::cli {
namespace {

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

// MODE_<engine verb>, alone or with a .SERVICE (ipc/verbs.hpp's keys).
bool is_engine_key(std::string_view key) {
    for (Verb verb : kEngineVerbs) {
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

EngineGuarded hold_engine_verbs(std::string_view text) {
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
            is_engine_key(core.substr(0, eq))) {
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

std::string_view engine_verbs_reason() {
    return "rebuild and up are held for a person (ask): with the stack backend a build reads "
           "the agent's Containerfile and build context as you (compose builds run from "
           "screened snapshots), and with docker or rootful podman bind sources in the "
           "checkout can be swapped while the runtime resolves them (rootless podman's are "
           "pinned; SECURITY.md, \"What is not defended\")";
}

}  // namespace hb::cli
