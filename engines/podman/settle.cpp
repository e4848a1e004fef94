#include "engines/podman/settle.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <thread>

#include "engines/podman/engine_relay.hpp"
#include "engines/podman/inspect_client.hpp"
#include "engines/podman/pin_check.hpp"
#include "engines/podman/rows.hpp"
#include "executor/responses.hpp"
#include "executor/runner.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// One engine query may take this long; `podman ps` and `inspect` answer in
// a fraction of a second, a healthcheck runs its command.
constexpr milliseconds kQueryTimeout{30000};
constexpr milliseconds kPollInterval{1000};
// `ps -q --no-trunc` prints 65 bytes per container.
constexpr std::size_t kMaxListBytes = (kMaxInspectContainers + 1) * 65;
// The log lines a report carries.
constexpr std::size_t kMaxReportLog = 4096;

std::string short_hex(const std::array<std::uint8_t, 32>& id) {
    return hex_id(id).substr(0, 12);
}

bool zero(const std::array<std::uint8_t, 32>& id) {
    return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

Result<UniqueFd> scratch() {
    return scratch_file("hostbridge-settle");
}

// `ps -q --no-trunc` output: one 64-hex id per line, nothing else.
Result<std::vector<std::string>> container_ids(const std::string& text) {
    if (text.size() > kMaxListBytes - 65) {
        return make_error("the engine lists more than " + std::to_string(kMaxInspectContainers) +
                          " containers of the project; the bridge reads at most that many");
    }
    std::vector<std::string> ids;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = text.find('\n', at);
        if (end == std::string::npos) return make_error("the engine's container list is cut short");
        std::string id = text.substr(at, end - at);
        if (!sys::is_lower_hex(id, 64)) return make_error("the engine's container list is not ids");
        ids.push_back(std::move(id));
        at = end + 1;
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

}  // namespace

Result<std::vector<std::string>> list_containers(const Config& config, int log_fd,
                                                 Clock::time_point deadline) {
    auto list_out = scratch();
    if (!list_out) return list_out.error();
    const RunResult listed = run_query(config, settle_list(config), list_out->get(), log_fd,
                                       std::min(kQueryTimeout, time_left(deadline)));
    if (!listed.succeeded()) {
        return make_error("listing the project's containers " + run_failure(listed));
    }
    auto text = read_scratch(list_out->get(), kMaxListBytes);
    if (!text) return text.error();
    return container_ids(*text);
}

Result<std::vector<ContainerFacts>> describe_containers(const Config& config,
                                                        const Posture& posture,
                                                        const std::vector<std::string>& ids,
                                                        int log_fd, Clock::time_point deadline) {
    if (ids.empty()) return std::vector<ContainerFacts>{};
    const std::optional<Argv> inspect = settle_inspect(config, ids);
    if (!inspect) return make_error("no inspect row for these ids");
    auto json_out = scratch();
    if (!json_out) return json_out.error();
    const RunResult inspected = run_query(config, *inspect, json_out->get(), log_fd,
                                          std::min(kQueryTimeout, time_left(deadline)));
    // A container removed between the two queries makes inspect fail: the
    // next round asks again.
    if (!inspected.succeeded()) {
        return make_error("inspecting the project's containers " + run_failure(inspected));
    }
    if (::lseek(json_out->get(), 0, SEEK_SET) != 0) return make_error(sys::errno_text("lseek"));
    // Each service's definition (bridge.json's settle.definitions), which
    // `up` compares (recreate.hpp).
    std::vector<std::array<std::uint8_t, 32>> definitions;
    if (!config.settle->definitions.empty()) {
        for (const std::string& service : config.services) {
            auto& hash = definitions.emplace_back();
            const auto it = config.settle->definitions.find(service);
            if (it != config.settle->definitions.end()) (void)parse_hex_id(it->second, hash);
        }
    }
    return inspect_in_sandbox(config.parser, json_out->get(), config.settle->project,
                              config.services, posture.labelled, std::move(definitions));
}

Result<std::vector<ContainerFacts>> ask_engine(const Config& config, const Posture& posture,
                                               int log_fd, Clock::time_point deadline) {
    auto ids = list_containers(config, log_fd, deadline);
    if (!ids) return ids.error();
    return describe_containers(config, posture, *ids, log_fd, deadline);
}

namespace {

std::string last_lines(const Config& config, const ContainerFacts& c, Clock::time_point deadline) {
    const std::optional<Argv> row = settle_log(config, hex_id(c.id));
    auto out = scratch();
    if (!row || !out) return {};
    // Its stdout and stderr both: a container logs to either.
    const RunResult r = run_query(config, *row, out->get(), out->get(),
                                  std::min(kQueryTimeout, time_left(deadline)));
    auto text = read_scratch(out->get(), 1u << 20);
    if (!text) return {};
    if (text->size() > kMaxReportLog) text->erase(0, text->size() - kMaxReportLog);
    if (!r.succeeded()) {
        *text += "(the engine's logs " + run_failure(r) + ")\n";
    }
    return std::move(*text);
}

std::string utc_of_ns(std::int64_t ns) {
    return sys::format_utc(ns / 1000000000);
}

}  // namespace

SettleGoal settle_goal(Verb verb, std::optional<std::size_t> arg, const Config& config,
                       std::int64_t since_ns) {
    SettleGoal goal;
    goal.request_ns = since_ns;
    if (verb == Verb::Up) {
        for (std::size_t i = 0; i < config.services.size(); ++i) goal.services.push_back(i);
        return goal;
    }
    if (arg) goal.services.push_back(*arg);
    goal.since_ns = since_ns;
    return goal;
}

Judged judge_container(const ContainerFacts& c, const SettleGoal& goal) {
    const auto bad = [](std::string problem) { return Judged{Standing::Bad, std::move(problem)}; };
    switch (c.state) {
        case ContainerState::Running:
            break;
        case ContainerState::Exited:
        case ContainerState::Stopped:
        case ContainerState::Dead:
            return bad(std::string(container_state_name(c.state)) + " with status " +
                       std::to_string(c.exit_code));
        case ContainerState::Restarting:
            return bad("restarting (last exit status " + std::to_string(c.exit_code) + ", " +
                       std::to_string(c.restarts) + " restarts)");
        case ContainerState::Paused:
            return bad("paused");
        case ContainerState::Created:
        case ContainerState::Configured:
        case ContainerState::Removing:
        case ContainerState::Stopping:
        case ContainerState::Unknown:
            return Judged{Standing::Waiting,
                          std::string(container_state_name(c.state)) + ", not running"};
    }
    if (goal.since_ns != 0 && c.started_ns < goal.since_ns) {
        return bad("not restarted: running since " + utc_of_ns(c.started_ns) +
                   ", before the request");
    }
    if (goal.image && c.image != *goal.image) {
        // An unchanged rebuild built nothing: its image is the recorded one.
        const char* which = goal.build_live ? "its last build put live" : "just built";
        return bad("runs image " + short_hex(c.image) + ", not the one " + which + " (" +
                   short_hex(*goal.image) + ")");
    }
    switch (c.health) {
        case ContainerHealth::None:
        case ContainerHealth::Healthy:
            return Judged{Standing::Good, {}};
        case ContainerHealth::Unhealthy:
            return bad("unhealthy");
        case ContainerHealth::Starting:
        case ContainerHealth::Unknown:
            break;
    }
    return Judged{Standing::Waiting,
                  "running, health " + std::string(container_health_name(c.health))};
}

std::vector<ServiceReport> judge_services(const std::vector<ContainerFacts>& facts,
                                          const SettleGoal& goal, const Config& config) {
    std::vector<ServiceReport> reports;
    for (const std::size_t index : goal.services) {
        ServiceReport r;
        r.service = config.services.at(index);
        for (const ContainerFacts& c : facts) {
            if (c.labelled && c.service == index) r.containers.push_back(c);
        }
        if (r.containers.empty()) {
            r.standing = Standing::Bad;
            r.problem = "no container";
        } else {
            r.standing = Standing::Good;
            for (const ContainerFacts& c : r.containers) {
                Judged j = judge_container(c, goal);
                // Bad beats Waiting beats Good; the first problem of the worst is said.
                if (j.standing == Standing::Bad && r.standing != Standing::Bad) {
                    r.standing = Standing::Bad;
                    r.problem = std::move(j.problem);
                } else if (j.standing == Standing::Waiting && r.standing == Standing::Good) {
                    r.standing = Standing::Waiting;
                    r.problem = std::move(j.problem);
                }
            }
        }
        if (goal.recreated) {
            r.applied = std::binary_search(goal.recreated->begin(), goal.recreated->end(), index)
                            ? kRecreated
                            : kUnchanged;
        }
        r.build_unchanged = goal.build_live;
        reports.push_back(std::move(r));
    }
    return reports;
}

std::vector<std::size_t> changed_definitions(const std::vector<ContainerFacts>& facts,
                                             const Config& config) {
    std::vector<std::size_t> changed;
    for (std::size_t index = 0; index < config.services.size(); ++index) {
        if (std::any_of(facts.begin(), facts.end(), [&](const ContainerFacts& c) {
                return c.labelled && c.service == index && c.definition == DefinitionMatch::Changed;
            }))
            changed.push_back(index);
    }
    return changed;
}

namespace {

// "web: exited with status 1; db: no container": the services not Good.
std::string problems(const std::vector<ServiceReport>& services) {
    std::string list;
    for (const ServiceReport& r : services) {
        if (r.standing == Standing::Good) continue;
        list += (list.empty() ? "" : "; ") + r.service + ": " + r.problem;
    }
    return list;
}

bool any_waiting(const std::vector<ServiceReport>& services) {
    return std::any_of(services.begin(), services.end(),
                       [](const ServiceReport& r) { return r.standing == Standing::Waiting; });
}

bool all_good(const std::vector<ServiceReport>& services) {
    return !services.empty() &&
           std::all_of(services.begin(), services.end(),
                       [](const ServiceReport& r) { return r.standing == Standing::Good; });
}

// podman runs healthchecks from systemd timers; where none run (no systemd
// as PID 1), a check would never be run. Those of the reported services'
// running containers that `wanted` picks, once each and all at once (a
// `health` then takes its slowest check, not their sum); whether any ran.
template <typename Wanted>
bool run_healthchecks(const Config& config, const Posture& posture,
                      const std::vector<ServiceReport>& services, Wanted wanted, int log_fd,
                      Clock::time_point deadline) {
    std::vector<Argv> rows;
    for (const ServiceReport& r : services) {
        for (const ContainerFacts& c : r.containers) {
            if (c.state != ContainerState::Running || !wanted(c)) continue;
            if (auto row = settle_healthcheck(config, posture, hex_id(c.id)))
                rows.push_back(std::move(*row));
        }
    }
    if (rows.empty()) return false;
    // One relay to the engine user's socket serves every check.
    auto engine = engine_environment(config);
    if (!engine) {
        log_line(log_fd, "the healthchecks were not run: " + engine.error().message);
        return true;
    }
    std::vector<Child> checks;
    for (const Argv& row : rows) {
        auto check = Child::spawn(row, log_fd, {}, engine->env);
        if (check)
            checks.push_back(std::move(*check));
        else
            log_line(log_fd, "a healthcheck was not run: " + check.error().message);
    }
    const auto until = std::min(deadline, Clock::now() + kQueryTimeout);
    for (Child& check : checks) (void)check.wait(time_left(until), kDefaultKillGrace);
    return true;
}

// What the services that are not Good printed last, so the agent need not ask.
void attach_logs(const Config& config, std::vector<ServiceReport>& services,
                 Clock::time_point deadline) {
    const auto log_deadline = std::min(deadline, Clock::now() + kQueryTimeout);
    for (ServiceReport& r : services) {
        if (r.standing == Standing::Good || r.containers.empty()) continue;
        r.log = last_lines(config, r.containers.front(), log_deadline);
    }
}

// The services in words, for the text an agent or a person reads (the
// response's `output`): a line each, then the log lines of one that did
// not settle, control characters made visible (the container wrote them).
void tell_services(int log_fd, const std::vector<ServiceReport>& services) {
    for (const ServiceReport& r : services) {
        std::string line = r.service + ": ";
        if (r.standing != Standing::Good) {
            line += r.problem;
        } else {
            const bool checked = std::any_of(
                r.containers.begin(), r.containers.end(),
                [](const ContainerFacts& c) { return c.health != ContainerHealth::None; });
            line += checked ? "running, healthy" : "running, no healthcheck";
            if (!r.containers.empty() && !zero(r.containers.front().image))
                line += ", image " + short_hex(r.containers.front().image);
        }
        if (!r.applied.empty()) line += "; " + r.applied;
        if (r.build_unchanged) line += std::string("; ") + kBuildUnchanged;
        log_line(log_fd, line);
        std::size_t at = 0;
        while (at < r.log.size()) {
            std::size_t end = r.log.find('\n', at);
            if (end == std::string::npos) end = r.log.size();
            log_line(log_fd,
                     r.service + " | " + sys::escape_unprintable(r.log.substr(at, end - at)));
            at = end + 1;
        }
    }
}

// A container the pin check stopped (engines/podman/pin_check.hpp) is reported
// with why, whatever state the engine gives it from then on.
void mark_stopped(std::vector<ServiceReport>& services,
                  const std::map<std::string, std::string>& stopped) {
    for (ServiceReport& r : services) {
        for (const ContainerFacts& c : r.containers) {
            const auto it = stopped.find(hex_id(c.id));
            if (it == stopped.end()) continue;
            r.standing = Standing::Bad;
            r.problem = it->second;
            break;
        }
    }
}

// Stopped containers that no goal service reports (a dependency `up -d S`
// started): "; container 0123456789ab: its bind at ...".
std::string stopped_elsewhere(const std::vector<ServiceReport>& services,
                              const std::map<std::string, std::string>& stopped) {
    std::string out;
    for (const auto& [id, problem] : stopped) {
        const bool shown =
            std::any_of(services.begin(), services.end(), [&](const ServiceReport& r) {
                return std::any_of(r.containers.begin(), r.containers.end(),
                                   [&](const ContainerFacts& c) { return hex_id(c.id) == id; });
            });
        if (!shown) out += "; container " + id.substr(0, 12) + ": " + problem;
    }
    return out;
}

}  // namespace

SettleOutcome settle(const Config& config, const Posture& posture, const SettleGoal& goal,
                     int log_fd, Clock::time_point deadline) {
    const int seconds = config.settle->seconds;
    // Queries may run to the verb's own deadline; the waiting ends at `soft`,
    // so the last look at the services happens when the wait is over.
    const Clock::time_point soft = std::min(deadline, Clock::now() + std::chrono::seconds(seconds));
    log_line(log_fd, "waiting up to " + std::to_string(seconds) + " s for the services to settle");
    SettleOutcome out;
    std::string last_error;
    std::map<std::string, std::int64_t> checked;  // pin check: id -> start time checked
    std::map<std::string, std::string> stopped;
    for (;;) {
        // Every container of the project the request started is checked
        // before anything is judged, whatever the sandbox makes of the rest.
        auto ids = list_containers(config, log_fd, deadline);
        if (ids) {
            stopped.merge(
                check_started_pins(config, *ids, goal.request_ns, checked, log_fd, deadline));
        }
        auto facts = ids ? describe_containers(config, posture, *ids, log_fd, deadline)
                         : Result<std::vector<ContainerFacts>>(ids.error());
        if (facts) {
            last_error.clear();
            out.services = judge_services(*facts, goal, config);
            mark_stopped(out.services, stopped);
            // A failed service does not end the wait for the others: the
            // answer should say how every service ended, not "starting"
            // (tests/e2e/settle.sh caught web and sick cut short by crash).
            if (!any_waiting(out.services)) break;
        } else {
            last_error = facts.error().message;
            log_line(log_fd, last_error);
        }
        if (time_left(soft) <= milliseconds(0)) break;
        run_healthchecks(
            config, posture, out.services,
            [](const ContainerFacts& c) { return c.health == ContainerHealth::Starting; }, log_fd,
            deadline);
        std::this_thread::sleep_for(std::min(kPollInterval, time_left(soft)));
    }

    // What the pin check stopped is said even where nothing else could be.
    const std::string elsewhere = stopped_elsewhere(
        last_error.empty() ? out.services : std::vector<ServiceReport>{}, stopped);
    out.ok = last_error.empty() && all_good(out.services) && elsewhere.empty();
    if (out.ok) {
        tell_services(log_fd, out.services);
        return out;
    }
    if (!last_error.empty()) {
        out.reason = "cannot tell whether the services settled: " + last_error + elsewhere;
    } else {
        const std::string listed = problems(out.services);
        out.reason =
            (any_waiting(out.services) ? "did not settle within " + std::to_string(seconds) + " s: "
                                       : std::string("did not settle: ")) +
            (listed.empty() ? elsewhere.substr(2) : listed + elsewhere);
    }
    attach_logs(config, out.services, deadline);
    tell_services(log_fd, out.services);
    return out;
}

SettleOutcome look(const Config& config, const Posture& posture, Verb verb, int log_fd,
                   Clock::time_point deadline) {
    const bool health = verb == Verb::Health;
    SettleGoal goal;
    for (std::size_t i = 0; i < config.services.size(); ++i) goal.services.push_back(i);
    SettleOutcome out;
    auto facts = ask_engine(config, posture, log_fd, deadline);
    if (facts && health &&
        run_healthchecks(
            config, posture, judge_services(*facts, goal, config),
            [](const ContainerFacts& c) { return c.health != ContainerHealth::None; }, log_fd,
            deadline)) {
        facts = ask_engine(config, posture, log_fd, deadline);
    }
    if (!facts) {
        out.reason = "cannot tell how the services are: " + facts.error().message;
        log_line(log_fd, out.reason);
        return out;
    }
    out.services = judge_services(*facts, goal, config);
    if (!health) {
        out.ok = true;  // status reports; how the services are is its answer
        tell_services(log_fd, out.services);
        return out;
    }
    out.ok = all_good(out.services);
    if (!out.ok) {
        out.reason = (any_waiting(out.services) ? "not healthy yet: " : "not healthy: ") +
                     problems(out.services);
        attach_logs(config, out.services, deadline);
    }
    tell_services(log_fd, out.services);
    return out;
}

nlohmann::ordered_json settle_json(const SettleOutcome& outcome, bool with_logs) {
    nlohmann::ordered_json services = nlohmann::ordered_json::array();
    for (const ServiceReport& r : outcome.services) {
        nlohmann::ordered_json s;
        s["service"] = r.service;
        s["settled"] = r.standing == Standing::Good  ? "ok"
                       : r.standing == Standing::Bad ? "failed"
                                                     : "waiting";
        s["problem"] = r.problem.empty() ? nullptr : nlohmann::ordered_json(r.problem);
        if (!r.applied.empty()) s["definition"] = r.applied;
        if (r.build_unchanged) s["build"] = kUnchanged;
        nlohmann::ordered_json containers = nlohmann::ordered_json::array();
        for (const ContainerFacts& c : r.containers) {
            nlohmann::ordered_json j;
            j["container"] = short_hex(c.id);
            j["state"] = container_state_name(c.state);
            j["health"] = container_health_name(c.health);
            j["restarts"] = c.restarts;
            j["exit_code"] = c.exit_code;
            j["image"] = zero(c.image) ? nullptr : nlohmann::ordered_json(short_hex(c.image));
            j["started_at"] =
                c.started_ns == 0 ? nullptr : nlohmann::ordered_json(utc_of_ns(c.started_ns));
            containers.push_back(std::move(j));
        }
        s["containers"] = std::move(containers);
        if (with_logs)
            s["log"] = r.log.empty() ? nullptr : nlohmann::ordered_json(utf8_tail(r.log));
        services.push_back(std::move(s));
    }
    return services;
}

}  // namespace hb::exec
