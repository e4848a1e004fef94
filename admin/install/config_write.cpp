#include "admin/install/config_write.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "engines/registry_admin.hpp"

namespace hb {

using nlohmann::ordered_json;

std::string serialize_config(const Config& config) {
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(config.file_mode & 07777));
    // Objects are written as lists of {key, value}, in the schema's order.
    ordered_json j = {
        {"version", config.version},
        {"slug", config.slug},
        {"project_dir", config.project_dir},
        {"spool_dir", config.spool_dir},
        {"state_dir", config.state_dir},
        {"policy_file", config.policy_file},
        {"parser", config.parser},
        {"snapshot", config.snapshot},
        {"allow_root", config.allow_root},
        {"file_mode", mode},
        {"agent_gid", config.agent_gid ? ordered_json(*config.agent_gid) : ordered_json(nullptr)},
    };

    ordered_json backend_json = {
        {"kind", backend_kind_name(config.backend.kind)},
        {"argv", config.backend.argv},
    };
    if (compose_backend(config.backend.kind)) {
        backend_json["file"] = config.backend.file;
        backend_json["flavour"] = compose_flavour_name(config.backend.flavour);
    }
    j["backend"] = std::move(backend_json);

    j["services"] = config.services;
    j["buildable"] = config.buildable;
    // `tcb` and `rendered` are the same list of pins (tcb_list reads both).
    auto pins_json = [](const std::vector<TcbPin>& pins) {
        ordered_json out = ordered_json::array();
        for (const TcbPin& pin : pins) {
            out.push_back(
                {{"path", pin.path},
                 {"sha256", pin.sha256 ? ordered_json(*pin.sha256) : ordered_json(nullptr)}});
        }
        return out;
    };
    j["tcb"] = pins_json(config.tcb);
    j["run_dir"] = config.run_dir;
    if (!config.rendered.empty()) j["rendered"] = pins_json(config.rendered);
    if (!config.checkout_paths.empty()) j["checkout_paths"] = config.checkout_paths;

    auto window_json = [](const Window& w) {
        return ordered_json{{"count", w.count}, {"seconds", w.seconds}};
    };
    j["limits"] = {
        {"mutating", window_json(config.limits.mutating)},
        {"read_only", window_json(config.limits.read_only)},
        {"ttl_seconds", config.limits.ttl_seconds},
        {"future_skew_seconds", config.limits.future_skew_seconds},
    };
    if (config.limits.max_held != Limits{}.max_held)
        j["limits"]["max_held"] = config.limits.max_held;

    ordered_json timeouts_json = {
        {"default", config.timeouts.default_seconds},
        {"rebuild", config.timeouts.rebuild_seconds},
    };
    // Verb order, not insertion order, so equal configs serialize equally.
    // A Rebuild entry in per_verb overrides rebuild_seconds and is written
    // as "rebuild", exactly as for_verb reads it.
    for (Verb verb : kAllVerbs) {
        for (const auto& [v, seconds] : config.timeouts.per_verb) {
            if (v == verb) timeouts_json[std::string(verb_name(verb))] = seconds;
        }
    }
    j["timeouts"] = std::move(timeouts_json);

    j["drain"] = {{"time_budget_seconds", config.drain.time_budget_seconds},
                  {"linger_seconds", config.drain.linger_seconds}};
    j["retention"] = {{"archive_days", config.retention.archive_days},
                      {"responses_days", config.retention.responses_days}};
    // Written only when changed, so an install with the defaults keeps the
    // schema's exact text.
    if (config.audit_budget != AuditBudgetSettings{}) {
        j["audit_budget"] = {{"bytes", config.audit_budget.bytes},
                             {"seconds", config.audit_budget.seconds}};
    }
    j["systemd"] = {{"enabled", config.systemd.enabled},
                    {"systemd_run", config.systemd.systemd_run}};
    if (!config.systemd.notify_send.empty()) {
        j["systemd"]["notify_send"] = config.systemd.notify_send;
    }
    if (!config.notify_command.empty()) j["notify_command"] = config.notify_command;
    if (config.join_network) {
        j["join_network"] = {{"engine", config.join_network->engine},
                             {"network", config.join_network->network},
                             {"agent_container", config.join_network->agent_container}};
    } else {
        j["join_network"] = nullptr;
    }
    if (config.build) {
        const BuildSettings& b = *config.build;
        // A stack builds with its own command: only what common/config.cpp
        // reads for it (context and Containerfile).
        const bool stack = stack_backend(config.backend.kind);
        ordered_json services = ordered_json::array();
        for (const ServiceBuild& s : b.services) {
            ordered_json one = {
                {"service", s.service}, {"context", s.context}, {"containerfile", s.containerfile}};
            if (stack) {
                services.push_back(std::move(one));
                continue;
            }
            if (!s.target.empty()) one["target"] = s.target;
            if (!s.args.empty()) one["args"] = s.args;
            one["image"] = s.image;
            one["container"] = s.container;
            services.push_back(std::move(one));
        }
        if (stack) {
            j["build"] = {{"max_files", b.max_files},
                          {"max_bytes", b.max_bytes},
                          {"services", std::move(services)}};
            if (b.base_images) j["build"]["base_images"] = *b.base_images;
        } else {
            j["build"] = {{"engine", b.engine}};
            if (!b.buildah.empty()) j["build"]["buildah"] = b.buildah;
            j["build"]["project"] = b.project;
            j["build"]["network"] = b.network;
            j["build"]["max_files"] = b.max_files;
            j["build"]["max_bytes"] = b.max_bytes;
            j["build"]["services"] = std::move(services);
            if (b.base_images) j["build"]["base_images"] = *b.base_images;
        }
    }
    if (!config.unpinned_binds.empty()) j["unpinned_binds"] = config.unpinned_binds;
    if (config.accept_uncontained_engine) j["accept_uncontained_engine"] = true;
    if (config.pins) {
        j["pins"] = {{"engine", config.pins->engine},
                     {"binary", config.pins->binary},
                     {"sources", config.pins->sources}};
    }
    if (config.engine) {
        j["engine"] = {{"user", config.engine->user},
                       {"socket", config.engine->socket},
                       {"relay", config.engine->relay}};
    }
    if (config.settle) {
        j["settle"] = {{"engine", config.settle->engine},
                       {"project", config.settle->project},
                       {"seconds", config.settle->seconds}};
        if (!config.settle->definitions.empty())
            j["settle"]["definitions"] = config.settle->definitions;
    }
    return j.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace hb

namespace hb::admin {

namespace {

// Why a verb is seeded as it is, the comment above its line; empty for
// the plain ones. A switch with no default: a new verb (ipc/verbs.hpp) does
// not compile until it is given its words here.
std::string_view seed_comment(Verb verb) {
    switch (verb) {
        case Verb::Ping:
        case Verb::Status:
        case Verb::Health:
        case Verb::Logs:
        case Verb::Restart:
            return "";
        case Verb::Up:
            return "# up starts containers from checkout paths and rebuild builds from the\n"
                   "# agent's Containerfile. Where the bridge makes that safe (podman-compose,\n"
                   "# rootless: screened snapshots, no base image's triggers, pinned bind\n"
                   "# sources; docs/BUILDS.md) install seeds them auto; elsewhere ask, and\n"
                   "# `hostbridge install` and `upgrade` set them back to ask, saying why.\n";
        case Verb::Down:
            return "# down stops the whole application: a person decides first (flip to auto\n"
                   "# if an unattended agent may stop it).\n";
        case Verb::Rebuild:
            return "# rebuild: up's rule above, each held or not on its own.\n";
        case Verb::Init:
            return "# init resets seed data (destroys data): a person decides first.\n";
        case Verb::JoinNetwork:
            return "# join-network connects the agent's container to the application's\n"
                   "# network; it is denied anyway unless it was configured at install.\n";
    }
    return "";
}

}  // namespace

std::string default_policy_text(bool up_auto, bool rebuild_auto) {
    std::string text = R"(# hostbridge policy: per-verb execution mode.
# Parsed as KEY=value, never sourced; read again for every request.
#
# One MODE_<verb>=MODE per line, no spaces around '='. MODE is
#   auto     run it
#   deny     refuse it
#   dry-run  check it as usual, run nothing, answer what would have run
#   ask      check it as usual, then hold it until a person on this host
#            runs `hostbridge allow NAME` or `hostbridge deny NAME`
#            (`hostbridge pending` lists what waits); the agent is answered
#            `pending` meanwhile, and `expired` after the TTL
# MODE_<verb>.<service>=MODE (e.g. MODE_restart.db=deny) decides for that
# service and wins over MODE_<verb>.
# Fails CLOSED: a verb missing or listed twice is denied, and a line this
# hostbridge does not understand (an unknown key, verb, service or mode)
# denies every command until it is fixed. `hostbridge doctor` names it.
)";
    // One line per verb of ipc/verbs.hpp, in its order: a verb this text
    // left out would be denied on every new install.
    bool after_comment = true;
    for (const Verb verb : kAllVerbs) {
        const VerbInfo& info = verb_info(verb);
        const std::string_view comment = seed_comment(verb);
        const bool is_auto = verb == Verb::Up        ? up_auto
                             : verb == Verb::Rebuild ? rebuild_auto
                                                     : !info.asks_a_person;
        if (!comment.empty() || after_comment) text += "\n";
        text += std::string(comment) + std::string(info.policy_key) + "=" +
                (is_auto ? "auto" : "ask") + "\n";
        after_comment = !comment.empty();
    }
    return text;
}

}  // namespace hb::admin
