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
    if (hold.up == hold.rebuild && hold.restart.empty()) {
        return hold.up.empty() ? std::string()
                               : "up and rebuild are held for a person (ask): " + hold.up +
                                     " (SECURITY.md, \"Two postures\")";
    }
    if (hold.up == hold.rebuild && hold.rebuild == hold.restart) {
        return "up, rebuild and restart are held for a person (ask): " + hold.up +
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
