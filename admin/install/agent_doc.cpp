#include "admin/install/agent_doc.hpp"

#include <algorithm>
#include <sstream>

#include "admin/util/args.hpp"
#include "client/request/request_wait.hpp"
#include "common/engine_hold.hpp"
#include "engines/argv_table.hpp"
#include "engines/registry.hpp"
#include "engines/registry_admin.hpp"

namespace hb::admin {

using client::kPendingGrace;

namespace {

// "`status`, `health` and `logs`": the verbs of the read-only window
// (ipc/verbs.hpp).
std::string read_only_verbs() {
    std::vector<std::string> names;
    for (const Verb verb : kAllVerbs) {
        if (rate_class(verb) == RateClass::ReadOnly)
            names.push_back("`" + std::string(verb_name(verb)) + "`");
    }
    return and_list(names);
}

std::string join(const std::vector<std::string>& items) {
    if (items.empty()) return "(none)";
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += ", ";
        out += "`" + item + "`";
    }
    return out;
}

std::string policy_section(const Config& config, const common::Policy& policy) {
    std::vector<std::string> denied;
    std::vector<std::string> dry_run;
    std::vector<std::string> ask;
    std::vector<std::string> allowed;  // a service excepted from its verb's refusal
    const auto file = [&](common::Mode mode, const std::string& what) {
        if (mode == common::Mode::Deny) denied.push_back(what);
        if (mode == common::Mode::DryRun) dry_run.push_back(what);
        if (mode == common::Mode::Ask) ask.push_back(what);
        if (mode == common::Mode::Auto) allowed.push_back(what);
    };
    // As the executor applies them (common/engine_hold.hpp).
    const common::EngineHold hold = exec::engine_hold(config);
    const auto mode_of = [&](Verb verb, std::string_view service = {}) {
        return common::effective_mode(config, hold, policy, verb, service);
    };
    for (Verb verb : kAllVerbs) {
        const common::Mode mode = mode_of(verb);
        if (verb_offered(verb, config) && mode != common::Mode::Auto) {
            file(mode, std::string(verb_name(verb)));
        }
    }
    for (const auto& rule : policy.service_rules) {
        if (!verb_offered(rule.verb, config)) continue;
        const common::Mode mode = mode_of(rule.verb, rule.service);
        if (mode == mode_of(rule.verb)) continue;
        file(mode, std::string(verb_name(rule.verb)) + " " + rule.service);
    }
    std::ostringstream o;
    o << "## This host's policy\n\n";
    if (denied.empty() && dry_run.empty() && ask.empty()) {
        o << "Today the host's policy allows every verb above. A person may change that;\n"
          << "a refusal then says so.\n\n";
        return o.str();
    }
    if (!denied.empty()) {
        o << "Refused by the host's policy: " << join(denied) << ". Asking again will not\n"
          << "help; if the work needs it, tell the person you work with.\n\n";
    }
    if (!dry_run.empty()) {
        o << "Dry run only: " << join(dry_run) << ". The host checks such a request as\n"
          << "usual, runs nothing, and answers `denied` with the reason\n"
          << "`dry run: would run ...`; if it must really run, tell the person you work with.\n\n";
    }
    if (!ask.empty()) {
        o << "Needs a person's approval on the host: " << join(ask) << ". The host checks\n"
          << "such a request as usual, then holds it (`pending`) until a person runs\n"
          << "`hostbridge allow NAME` or `hostbridge deny NAME` on the host, or until it\n"
          << "expires (" << config.limits.ttl_seconds << " s after it was sent). The client "
          << "says so once and waits;\ntell the person you work with, and do not send it "
          << "again while it waits.\n\n";
    }
    if (!allowed.empty()) {
        o << "Allowed all the same, for these services only: " << join(allowed) << ".\n\n";
    }
    return o.str();
}

}  // namespace

bool verb_offered(Verb verb, const Config& config) {
    if (verb == Verb::Init) return !compose_backend(config.backend.kind);
    if (verb == Verb::JoinNetwork && !config.join_network) return false;
    // Nor a verb this install's engine never runs (docker compose: down and
    // join-network; docs/DOCKER.md): the agent would only be refused. The
    // executor's own plan says, for the first service the verb may name.
    // A verb that names a buildable service, where none is, never runs either.
    std::optional<std::size_t> arg;
    const auto names = [&](std::size_t i) {
        return verb_arg_kind(verb) != ArgKind::Buildable ||
               std::binary_search(config.buildable.begin(), config.buildable.end(),
                                  config.services[i]);
    };
    for (std::size_t i = 0; verb_arg_kind(verb) != ArgKind::None && !arg; ++i) {
        if (i == config.services.size()) return false;
        if (names(i)) arg = i;
    }
    const exec::VerbPlan plan = exec::registry().plan(config, verb, arg, {});
    const auto* denied = std::get_if<exec::Denied>(&plan.steps);
    return denied == nullptr || denied->reason != ReasonCode::UntestedCompose;
}

int tool_timeout_seconds(const Config& config) {
    // Longest a call waits: held for a person until the TTL plus the
    // client's grace (client/request/request_wait.hpp), or up to the default 120 s to
    // be taken up, whichever is longer; then the longest verb's run, whose
    // timeout covers its settle step too (engines/podman/settle.hpp).
    int longest = std::max(config.timeouts.default_seconds, config.timeouts.rebuild_seconds);
    for (const auto& [verb, seconds] : config.timeouts.per_verb)
        longest = std::max(longest, seconds);
    const int wait =
        std::max(config.limits.ttl_seconds + static_cast<int>(kPendingGrace.count()), 120);
    return (wait + longest + 99) / 100 * 100;
}

std::string render_agent_doc(const Config& config, const common::Policy& policy,
                             const std::string& spool_rel) {
    const bool compose = compose_backend(config.backend.kind);
    // The settle step and the structured status and health (engines/podman/settle.hpp).
    const bool verified = config.settle.has_value();
    const std::string req = spool_rel + "/request";
    const std::string example = config.services.empty() ? "api" : config.services.front();
    // How long an MCP tool call may last: Codex takes seconds, Claude Code
    // milliseconds (MCP_TOOL_TIMEOUT, read from its environment).
    const int tool_timeout = tool_timeout_seconds(config);
    std::ostringstream o;
    o << "# Host actions for this project (hostbridge)\n\n"
      << "You have no container engine. To act on this project's containers, ask the\n"
      << "host through the request client in this directory. The host runs only the\n"
      << "fixed actions below, checks every request, and records each one.\n\n"
      << "## How to call\n\n"
      << "From the project root:\n\n"
      << "    " << req << " VERB [SERVICE]\n"
      << "    " << req << " --timeout 300 rebuild " << example << "\n"
      << "    " << req << " --no-wait up      # prints the request name, does not wait\n\n"
      << "The client writes one request file, waits for the answer and prints its\n"
      << "output on stdout: a read's or a failure's is the command's (its last 16 KiB),\n"
      << "a change that succeeded says only what the host found; the reason for a\n"
      << "refusal or failure goes to stderr. `--timeout` (default 120 s) bounds only\n"
      << "the wait for the host to take the request up; once it runs, the client waits\n"
      << "for the end.\n\n"
      << "## MCP\n\n"
      << "If your harness speaks MCP, register the tools instead, inside this container\n"
      << "(never on the host: the copy in the checkout is yours to replace):\n\n"
      << "    claude mcp add hostbridge -- " << spool_rel << "/bin/hostbridge-agent mcp\n\n"
      << "and start Claude Code with `MCP_TOOL_TIMEOUT=" << tool_timeout * 1000
      << "` (milliseconds) in its\nenvironment. "
      << "Codex (`~/.codex/config.toml`): `[mcp_servers.hostbridge]` with `command = \""
      << spool_rel << "/bin/hostbridge-agent\"`, `args = [\"mcp\"]` and\n"
      << "`tool_timeout_sec = " << tool_timeout
      << "` (a held request waits for a person, then runs up to its timeout). Each verb\nbelow is "
         "a "
      << "tool; refusals come back as tool errors that say why and what to do. Where\n"
      << "there is no shell, `" << spool_rel << "/bin/hostbridge-agent request VERB [SERVICE]`\n"
      << "is the same client as `request`.\n\n"
      << "## Verbs\n\n"
      << "| verb | argument | what the host does |\n|---|---|---|\n"
      << "| `ping` | none | answers `pong`; runs nothing (checks the bridge is alive) |\n"
      << "| `status` | none | " << agent_words(config, Verb::Status) << " |\n"
      << "| `health` | none | " << agent_words(config, Verb::Health) << " |\n"
      << "| `logs` | a service | " << agent_words(config, Verb::Logs)
      << (exec::accepts_log_window(config) ? " (fewer, or only the new ones: below)" : "") << " |\n"
      << "| `up` | none | " << agent_words(config, Verb::Up) << " |\n"
      << "| `down` | none | stops the application |\n"
      << "| `restart` | a service | " << agent_words(config, Verb::Restart) << " |\n"
      << "| `rebuild` | a buildable service | " << agent_words(config, Verb::Rebuild) << " |\n";
    if (verb_offered(Verb::Init, config))
        o << "| `init` | none | " << agent_words(config, Verb::Init) << " |\n";
    if (config.join_network) {
        o << "| `join-network` | none | connects this container to the `"
          << config.join_network->network << "` network, so services answer by name |\n";
    }
    o << "\nNothing else exists: there is no way to run another command, and "
      << "`exec`, `reset-db`\nand `shell*` are always refused. The host's policy may also "
      << "refuse a verb; the\nanswer then says why.\n\n"
      << "Services: " << join(config.services) << "\n\n"
      << "Buildable services (for `rebuild`): " << join(config.buildable) << "\n\n";
    if (exec::accepts_log_window(config)) {
        // The window's words: docs/PROTOCOL.md, "Following logs".
        o << "To read less of a log, or only what is new: `" << req << " --lines 50 logs "
          << example << "`\nanswers the last 50 lines, each after its timestamp, and prints "
          << "`cursor: NS:K` on\nstderr; `" << req << " --since NS:K logs " << example
          << "` answers only the lines\nafter that cursor, and a new cursor (`more: true` "
          << "means more lines wait: ask\nagain at once with the new cursor). Nothing is lost "
          << "or repeated between cursors.\n\n";
    }
    if (verified) {
        o << "After `up`, `restart` and `rebuild` exit 0, the host waits (at most "
          << config.settle->seconds << " s) until the\nservices they touched settled: the "
          << "answer is `done` only when each runs, healthy\nwhere it has a healthcheck, "
          << "restarted or on the new image where that was asked;\notherwise `failed`, naming "
          << "the service, with its last log lines. The answer's\n`services` (and the first "
          << "lines of the text) say what the engine found.\n\n";
    }
    if (compose) {
        // What the host's screen refuses (docs/BUILDS.md), so an honest
        // Containerfile is written to pass it.
        o << "A `rebuild` copies the service's build context first and builds from the "
          << "copy:\nsymlinks must stay inside the context, no FIFOs or sockets. Its "
          << "Containerfile may use\nno `RUN --mount` at all, no `$` in any flag, no "
          << "heredocs, no `ADD` of a URL.\n`FROM` and `COPY --from` may name only an "
          << "earlier stage, `scratch`, the\nservices' own images and the base images the "
          << "person listed (`hostbridge doctor`\nshows them): ask the person for another. "
          << "Build steps have no network, and base\nimages are never pulled: ask the "
          << "person to pull one you need. Finish your edits\nbefore you ask for a "
          << "`rebuild`: a file caught half-written when the host copies\nit is refused "
          << "(an empty Containerfile has no FROM).\n\n";
    }
    o << policy_section(config, policy) << "## Answers\n\n"
      << "| state | meaning |\n|---|---|\n"
      << "| `queued` | the host has seen the request (not final) |\n"
      << "| `pending` | held until a person on the host allows or denies it (not final) |\n"
      << "| `running` | the command has started (not final) |\n"
      << "| `done` | it ran and succeeded |\n"
      << "| `failed` | it ran and failed, timed out, or could not start; read the output |\n"
      << "| `denied` | refused before running; the reason says why |\n"
      << "| `expired` | the host took it up too late (over " << config.limits.ttl_seconds
      << " s); send it again if still needed |\n\n"
      << "| exit code | meaning |\n|---|---|\n"
      << "| 0 | `done` |\n"
      << "| 70 | `denied`, `expired` or `failed`: read the reason on stderr |\n"
      << "| 75 | no answer in time: the bridge may be down, or no person decided a "
      << "`pending` request before it expired; tell the person you work with |\n"
      << "| 64 | usage error: nothing was sent |\n\n"
      << "## Limits\n\n"
      << "Mutating verbs: at most " << config.limits.mutating.count << " per "
      << config.limits.mutating.seconds << " s. " << read_only_verbs() << ": at most "
      << config.limits.read_only.count << " per " << config.limits.read_only.seconds
      << " s. `ping` is free.\n\n"
      << "When rate limited the answer is `denied` with a reason saying when to retry.\n"
      << "Do not retry in a loop: wait that long, batch your changes (one `rebuild`\n"
      << "after several edits, not one per edit), and if the work cannot wait, tell\n"
      << "the person you work with.\n\n"
      << "A request refused because a trusted project file changed (the stack script,\n"
      << "the compose file and what it includes, `.env`) stays refused until a person\n"
      << "on the host approves the change: tell them; retrying will not help.\n";
    return o.str();
}

}  // namespace hb::admin
