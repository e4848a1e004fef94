#include "client/agent/tools.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "client/request/request_message.hpp"
#include "ipc/json_depth.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/verbs.hpp"
#include "ipc/wire.hpp"

namespace hb::agent {
namespace {

using nlohmann::json;

// What each verb is, for a model: what it does on each backend and the
// annotations that match it; its name, argument and whether it changes
// anything are the verb table's (ipc/verbs.hpp). The host's argv table is the truth
// (engines/argv_table.cpp, docs/ARGV-TABLE.md); tests/agent/test_tool_texts.cpp
// holds each compose text against the row it describes. `script` is what
// the project's stack script is asked; what it then does is the script's.
struct VerbText {
    Verb verb;
    const char* compose;  // backend "compose"
    const char* script;   // backend "script" (the stack), or no manifest
    // compose with verified outcomes (the manifest's `verified_outcomes`:
    // bridge.json has `settle`); nullptr: `compose`, plus kSettles for a verb
    // the settle step follows (engines/podman/settle.hpp).
    const char* verified;
    bool destructive;
    bool idempotent;
};
// The two verbs that do the same on either backend.
constexpr const char* kPingDoes =
    "Checks that the host bridge is alive: answers `pong` and runs nothing. Costs no rate limit.";
constexpr const char* kJoinNetworkDoes =
    "Connects the agent's own container to the application's network, so services answer by "
    "name.";
constexpr const char* kSettles =
    " The answer waits until the services it touched settled: done only when each runs "
    "(healthy where it has a healthcheck; restarted, or on the new image, where that was "
    "asked); otherwise failed, naming each service that is not, with its last log lines.";
// A stack's `status` and `health` where the manifest says `verified_outcomes`.
constexpr const char* kStackLooks =
    " Then reports each service: per container its state, health as last checked, restarts, "
    "image and start time (in `services`).";
constexpr const char* kStackChecks =
    " Then runs each running container's healthcheck once: done only when the script's check "
    "passed and every service runs, healthy or without a healthcheck; otherwise failed, naming "
    "each service that is not, with its last log lines.";
// `logs` where the manifest says `log_window`: how to follow a log.
constexpr const char* kFollows =
    " With `lines`, only the last N lines, each after its timestamp. To follow the log, pass "
    "the previous answer's `cursor` as `since` for only the lines after it; `more: true` means "
    "more are waiting: call again at once with the new cursor.";
constexpr std::array<VerbText, kAllVerbs.size()> kVerbs = {{
    {Verb::Ping, kPingDoes, kPingDoes, nullptr, false, true},
    {Verb::Status, "Lists this project's containers and their state (`compose ps`).",
     "Asks the project's stack script for the state of its services (`status`).",
     "Reports each service of this project: per container its state, health as last checked, "
     "restarts, image and start time (in `services`), and a line per service in the text.",
     false, true},
    {Verb::Health,
     "The same list as `status` (`compose ps`): a container's state, and its healthcheck's "
     "status where the engine shows one; it runs no check of its own.",
     "Asks the project's stack script whether the application is healthy (`health`).",
     "Runs each running container's healthcheck once, then answers done only when every "
     "service runs and is healthy or has no healthcheck (the text says which have none); "
     "otherwise failed, naming each service that is not, with its last log lines.",
     false, true},
    {Verb::Logs, "Returns the last 200 lines of one service's log.",
     "Asks the project's stack script for one service's logs.", nullptr, false, true},
    {Verb::Up,
     "Starts this project's containers (`compose up -d --no-build`). Builds nothing: a "
     "service whose image is missing does not start until `rebuild` made it.",
     "Asks the project's stack script to start the application (`start`).",
     "Starts this project's containers (`compose up -d --no-build`) and recreates exactly the "
     "services whose definition in the approved compose file changed since their containers "
     "were made (an edit a person approved: environment, command, image, ...); the others are "
     "left as they run. Each service in `services` says `recreated (definition changed)` or "
     "`unchanged`. Builds nothing: a service whose image is missing does not start until "
     "`rebuild` made it.",
     false, true},
    {Verb::Down, "Stops this project's containers (`compose stop`); they and their data stay.",
     "Asks the project's stack script to stop the application (`stop`).", nullptr, true, true},
    {Verb::Restart,
     "Restarts one service's container: it picks up code bind-mounted from the checkout, but "
     "not a new image (that is `rebuild`) nor a change of the compose file.",
     "Asks the project's stack script to restart one service.",
     "Restarts one service's container: it picks up code bind-mounted from the checkout, but "
     "not a new image (that is `rebuild`) nor an approved edit of its compose entry (that is "
     "`up`, which recreates the services whose definition changed).",
     true, false},
    {Verb::Rebuild,
     "Builds one service's image from a host-owned copy of its build context (its "
     "Containerfile is checked first: no bind, secret or ssh mounts, a cache mount only with "
     "`target=`, no `$` in flags, no heredocs, no ADD of URLs; no network during the build), "
     "then replaces that service's container with one from the new image; the others keep "
     "running. Slow (minutes): batch your edits, one rebuild after several changes.",
     "Asks the project's stack script to rebuild one service's image and recreate it (from a "
     "host-owned, checked copy of its build context where the install recorded one). Slow "
     "(minutes): batch your edits, one rebuild after several changes.",
     "Builds one service's image from a host-owned copy of its build context (its "
     "Containerfile is checked first: no bind, secret or ssh mounts, a cache mount only with "
     "`target=`, no `$` in flags, no heredocs, no ADD of URLs; no network during the build), "
     "then replaces that service's container with one from the new image; the others keep "
     "running. Where that copy, the build's settings and the service's definition are the ones "
     "its running container was made from, it builds and recreates nothing and says "
     "`unchanged: ... nothing recreated` (`build: unchanged` in `services`). Slow (minutes) "
     "when it builds: batch your edits, one rebuild after several changes.",
     true, false},
    {Verb::Init, "Not offered with compose: the host refuses it.",
     "Asks the project's stack script to initialise the application; this resets its seed "
     "data (destroys data).",
     nullptr, true, false},
    {Verb::JoinNetwork, kJoinNetworkDoes, kJoinNetworkDoes, nullptr, false, true},
}};
// One row per verb of the table, in its order: a verb added to ipc/verbs.hpp
// without a text here leaves a row of Verb{} and does not compile.
constexpr bool rows_follow_the_verb_table() {
    for (std::size_t i = 0; i < kVerbs.size(); ++i)
        if (kVerbs[i].verb != kAllVerbs[i]) return false;
    return true;
}
static_assert(rows_follow_the_verb_table(),
              "client/agent/tools.cpp: a text for every verb, in order");

std::string name_of(const VerbText& v) {
    return std::string(verb_name(v.verb));
}
bool is_read_only(const VerbText& v) {
    return !verb_info(v.verb).mutating;
}

std::string verb_does_without_window(const Manifest& m, const VerbText& v) {
    const std::string verb = name_of(v);
    const bool settles = v.verb == Verb::Up || v.verb == Verb::Restart || v.verb == Verb::Rebuild;
    if (m.backend != "compose") {
        // A stack whose containers the host finds (docs/COMPOSE.md, "A
        // stack's services"): its script runs, then the host looks.
        if (!m.verified_outcomes) return v.script;
        if (verb == "status") return std::string(v.script) + kStackLooks;
        if (verb == "health") return std::string(v.script) + kStackChecks;
        return std::string(v.script) + (settles ? kSettles : "");
    }
    if (!m.verified_outcomes) return v.compose;
    if (v.verified != nullptr) return std::string(v.verified) + (settles ? kSettles : "");
    return std::string(v.compose) + (settles ? kSettles : "");
}

bool takes_window(const Manifest& m, Verb verb) {
    return m.log_window && verb == Verb::Logs;
}

std::string verb_does(const Manifest& m, const VerbText& v) {
    return verb_does_without_window(m, v) + (takes_window(m, v.verb) ? kFollows : "");
}

// `lines` as the request carries it: a JSON integer from 1 to 1000.
std::optional<std::string> lines_of(const json& value) {
    if (value.is_number_unsigned()) {
        const auto n = value.get<std::uint64_t>();
        if (n >= 1 && n <= static_cast<std::uint64_t>(kMaxLogLines)) return std::to_string(n);
    } else if (value.is_number_integer()) {
        const auto n = value.get<std::int64_t>();
        if (n >= 1 && n <= kMaxLogLines) return std::to_string(n);
    }
    return std::nullopt;
}

const VerbText* verb_text(const std::string& verb) {
    const std::optional<Verb> known = verb_from_name(verb);
    for (const auto& v : kVerbs)
        if (known == v.verb) return &v;
    return nullptr;
}

Manifest default_manifest(std::string problem) {
    Manifest m;
    m.problem = std::move(problem);
    for (const auto& v : kVerbs) {
        OfferedVerb info;
        info.verb = name_of(v);
        info.arg = verb_arg_kind(v.verb);
        m.verbs.push_back(std::move(info));
    }
    return m;
}

std::vector<std::string> names_of(const json& j, const char* key) {
    std::vector<std::string> out;
    if (!j.contains(key) || !j[key].is_array()) return out;
    for (const auto& item : j[key])
        if (item.is_string() && is_valid_arg_shape(item.get<std::string>()))
            out.push_back(item.get<std::string>());
    return out;
}

int int_at(const json& j, std::initializer_list<const char*> path) {
    const json* at = &j;
    for (const char* key : path) {
        if (!at->is_object() || !at->contains(key)) return 0;
        at = &(*at)[key];
    }
    return at->is_number_integer() ? at->get<int>() : 0;
}

// Mode ask: the call blocks on a person, so the model should tell its person
// rather than take the wait for a hang and call again.
std::string ask_text(const Manifest& m, const OfferedVerb& info) {
    if (!info.ask && info.ask_services.empty()) return "";
    std::string who = "Each call";
    if (!info.ask) {
        who = "Each call for ";
        for (std::size_t i = 0; i < info.ask_services.size(); ++i)
            who += (i == 0 ? "`" : ", `") + info.ask_services[i] + "`";
    }
    return " " + who +
           " waits for a person's approval on the host (they run `hostbridge allow` or "
           "`hostbridge deny`)" +
           (m.ttl_seconds > 0 ? ", for at most " + std::to_string(m.ttl_seconds) + " s"
                              : std::string()) +
           ": tell the person you work with that it waits for them, and do not call again "
           "while it waits or after it expires unless they are there to approve it.";
}

std::string limits_text(const Manifest& m, const VerbText& v) {
    if (v.verb == Verb::Ping) return "";
    if (is_read_only(v) && m.read_only_count > 0)
        return " Rate limited on the host: at most " + std::to_string(m.read_only_count) +
               " read-only calls per " + std::to_string(m.read_only_seconds) + " s.";
    if (!is_read_only(v) && m.mutating_count > 0)
        return " Rate limited on the host: at most " + std::to_string(m.mutating_count) +
               " changing calls per " + std::to_string(m.mutating_seconds) + " s.";
    return "";
}

json service_schema(const Manifest& m, ArgKind kind) {
    const auto& names = kind == ArgKind::Buildable ? m.buildable : m.services;
    json schema = {{"type", "string"},
                   {"description", kind == ArgKind::Buildable
                                       ? "The service whose image to rebuild (a buildable one)."
                                       : "The service, one of this project's."}};
    if (m.found)
        schema["enum"] = names;
    else
        schema["pattern"] = "^[a-z][a-z0-9_-]*$";
    return schema;
}

}  // namespace

Manifest parse_manifest(const std::string& text) {
    if (!json_depth_within(text)) return default_manifest("it is nested too deeply");
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return default_manifest("it is not a JSON object");
    if (int_at(j, {"format"}) != 1) return default_manifest("its format is not 1");
    if (!j.contains("verbs") || !j["verbs"].is_array())
        return default_manifest("it has no verbs list");
    Manifest m;
    m.found = true;
    for (const auto& item : j["verbs"]) {
        if (!item.is_object() || !item.contains("verb") || !item["verb"].is_string()) continue;
        const auto* v = verb_text(item["verb"].get<std::string>());
        if (v == nullptr) continue;  // a verb of a newer host: this agent cannot describe it
        // A verb the policy denies may still be allowed for some services
        // (MODE_rebuild=deny, MODE_rebuild.api=auto): offered, and the host
        // decides each call.
        OfferedVerb info;
        info.verb = name_of(*v);
        info.arg = verb_arg_kind(v->verb);
        info.denied = item.contains("mode") && item["mode"] == "deny";
        info.ask = item.contains("mode") && item["mode"] == "ask";
        if (item.contains("service_modes") && item["service_modes"].is_object()) {
            for (const auto& [service, mode] : item["service_modes"].items()) {
                if (mode != "deny") info.denied = false;
                if (mode == "ask" && is_valid_arg_shape(service))
                    info.ask_services.push_back(service);
            }
        }
        m.verbs.push_back(std::move(info));
    }
    m.services = names_of(j, "services");
    m.buildable = names_of(j, "buildable");
    if (j.contains("backend") && j["backend"].is_string()) m.backend = j["backend"];
    m.verified_outcomes = j.contains("verified_outcomes") && j["verified_outcomes"] == true;
    m.log_window = j.contains("log_window") && j["log_window"] == true;
    m.mutating_count = int_at(j, {"limits", "mutating", "count"});
    m.mutating_seconds = int_at(j, {"limits", "mutating", "seconds"});
    m.read_only_count = int_at(j, {"limits", "read_only", "count"});
    m.read_only_seconds = int_at(j, {"limits", "read_only", "seconds"});
    m.ttl_seconds = int_at(j, {"ttl_seconds"});
    m.default_timeout_seconds = int_at(j, {"timeouts", "default_seconds"});
    m.rebuild_timeout_seconds = int_at(j, {"timeouts", "rebuild_seconds"});
    return m;
}

Manifest load_manifest(const std::string& path) {
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd) return default_manifest(path + " is missing");
    std::string text;
    char buf[8192];
    ssize_t n = 0;
    while ((n = ::read(fd.get(), buf, sizeof buf)) > 0 && text.size() < (1u << 20))
        text.append(buf, static_cast<std::size_t>(n));
    Manifest m = parse_manifest(text);
    if (!m.found) m.problem = path + ": " + m.problem;
    return m;
}

json tool_list(const Manifest& m, bool structured) {
    json tools = json::array();
    const json output_schema = {
        {"type", "object"},
        {"properties",
         {{"state",
           {{"type", "string"},
            {"enum", {"done", "failed", "denied", "expired", "pending", "no-answer"}},
            {"description",
             "The host's final answer; pending when no person decided before the request "
             "expired; no-answer when the bridge never took the request up."}}},
          {"exit_code", {{"type", {"integer", "null"}}}},
          {"reason", {{"type", {"string", "null"}}}},
          {"request", {{"type", "string"}, {"description", "The request file's name."}}},
          {"duration_ms", {{"type", "integer"}}},
          {"services",
           {{"type", "array"},
            {"description",
             "After up, restart, rebuild, status and health: per service, whether it is as "
             "it should be (ok, failed, waiting), its problem, its containers (state, health, "
             "restarts, image, started_at) and, when it failed a change or a health check, "
             "its last log lines; after up, `definition`: recreated (definition changed) or "
             "unchanged."},
            {"items", {{"type", "object"}}}}}}},
        {"required", {"state", "request", "duration_ms"}}};
    for (const auto& info : m.verbs) {
        if (info.denied) continue;
        const auto* v = verb_text(info.verb);
        if (v == nullptr) continue;
        // The compose backend refuses init in its argv table: never offered.
        if (m.backend == "compose" && info.verb == "init") continue;
        // What every call shares (refusals, rate limits, approvals) is said
        // once, in the server's instructions (client/agent/mcp_server.cpp).
        std::string description =
            std::string(verb_does(m, *v)) + ask_text(m, info) + limits_text(m, *v);
        json properties = json::object();
        json required = json::array();
        if (verb_arg_kind(v->verb) != ArgKind::None) {
            properties["service"] = service_schema(m, verb_arg_kind(v->verb));
            required.push_back("service");
        }
        if (takes_window(m, v->verb)) {
            properties["lines"] = {
                {"type", "integer"},
                {"minimum", 1},
                {"maximum", kMaxLogLines},
                {"description",
                 "Only the last N complete lines; with `since`, the first N after the cursor."}};
            properties["since"] = {
                {"type", "string"},
                {"pattern", "^(0|[1-9][0-9]{0,18}):(0|[1-9][0-9]{0,6})$"},
                {"description",
                 "The cursor a previous logs answer returned: only the lines after it."}};
        }
        json tool = {
            {"name", name_of(*v)},
            {"title", "hostbridge: " + name_of(*v)},
            {"description", description},
            {"inputSchema",
             {{"type", "object"},
              {"properties", properties},
              {"required", required},
              {"additionalProperties", false}}},
            {"annotations",
             {{"title", "hostbridge " + name_of(*v)},
              {"readOnlyHint", is_read_only(*v)},
              {"destructiveHint", v->destructive},
              {"idempotentHint", v->idempotent},
              {"openWorldHint", false}}},
        };
        if (structured) tool["outputSchema"] = output_schema;
        if (structured && takes_window(m, v->verb)) {
            tool["outputSchema"]["properties"]["cursor"] = {
                {"type", "string"},
                {"description",
                 "After `lines` or `since`: pass it as `since` to get only what is new."}};
            tool["outputSchema"]["properties"]["more"] = {
                {"type", "boolean"},
                {"description",
                 "true: lines after `cursor` were left out; call again at once with it as "
                 "`since`."}};
        }
        tools.push_back(std::move(tool));
    }
    return tools;
}

CallCheck check_call(const Manifest& m, const std::string& tool, const json& arguments) {
    CallCheck out;
    const auto it = std::find_if(m.verbs.begin(), m.verbs.end(),
                                 [&](const OfferedVerb& v) { return v.verb == tool && !v.denied; });
    if (it == m.verbs.end()) {
        out.unknown_tool = true;
        out.error = "unknown tool: " + tool.substr(0, 64);
        return out;
    }
    if (!arguments.is_null() && !arguments.is_object()) {
        out.error = "arguments must be an object";
        return out;
    }
    CallTarget target;
    target.verb = it->verb;
    const json args = arguments.is_object() ? arguments : json::object();
    const bool window = m.log_window && verb_from_name(it->verb) == Verb::Logs;
    for (const auto& [key, value] : args.items()) {
        if (window && key == "lines") {
            target.lines = lines_of(value);
            if (!target.lines) {
                out.error = "`lines` must be an integer from 1 to 1000";
                return out;
            }
            continue;
        }
        if (window && key == "since") {
            if (!value.is_string() || !client::check_since(value.get<std::string>())) {
                out.error =
                    "`since` must be the `cursor` a previous logs answer returned (NS:K), "
                    "unchanged";
                return out;
            }
            target.since = value.get<std::string>();
            continue;
        }
        if (key != "service" || it->arg == ArgKind::None) {
            out.error = "`" + it->verb + "` takes " +
                        (it->arg == ArgKind::None ? std::string("no arguments")
                         : window ? std::string("only `service`, `lines` and `since`")
                                  : std::string("only `service`")) +
                        "; drop `" + key.substr(0, 64) + "`";
            return out;
        }
        if (!value.is_string()) {
            out.error = "`service` must be a string";
            return out;
        }
        target.service = value.get<std::string>();
    }
    if (it->arg != ArgKind::None) {
        const auto& names = it->arg == ArgKind::Buildable ? m.buildable : m.services;
        if (!target.service) {
            out.error = "`" + it->verb + "` needs `service`" +
                        (m.found && !names.empty() ? ", one of the enum in its input schema" : "");
            return out;
        }
        if (!is_valid_arg_shape(*target.service)) {
            out.error = "`service` must match ^[a-z][a-z0-9_-]*$ (at most 64 bytes)";
            return out;
        }
        if (m.found && std::find(names.begin(), names.end(), *target.service) == names.end()) {
            std::string list;
            for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
            out.error = "`" + *target.service + "` is not " +
                        (it->arg == ArgKind::Buildable ? "a buildable service" : "a service") +
                        " of this project; use one of: " + (list.empty() ? "(none)" : list);
            return out;
        }
    }
    out.target = std::move(target);
    return out;
}

std::string_view tool_instructions() {
    return "These tools ask the host to act on this project's containers (status, logs, "
           "restart, rebuild, ...). The host checks every call and may refuse it, rate limits "
           "them, and records each one; a refusal or failure comes back as a tool error whose "
           "text says why and what to do. When rate limited, wait the time the answer names; "
           "never retry refused calls in a loop. When a trusted project file changed, or a "
           "call waits for a person's approval, tell the person you work with. If the bridge "
           "does not answer, it is not running: tell them too.";
}

std::string tool_description_of(const std::string& verb, const std::string& backend,
                                bool verified_outcomes, bool log_window) {
    const VerbText* v = verb_text(verb);
    if (v == nullptr) return {};
    Manifest m;
    m.backend = backend;
    m.verified_outcomes = verified_outcomes;
    m.log_window = log_window;
    return verb_does(m, *v);
}

}  // namespace hb::agent
