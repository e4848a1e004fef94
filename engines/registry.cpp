#include "engines/registry.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "common/sha256.hpp"
#include "engines/argv_table.hpp"
#include "engines/build_input/build_input.hpp"
#include "engines/podman/base_triggers.hpp"
#include "engines/podman/engine_relay.hpp"
#include "engines/podman/follow_log.hpp"
#include "engines/podman/settle.hpp"
#include "executor/runner.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/log_cursor.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

// podman-compose 1.0.3's `up -d` keeps a container whose definition
// changed: the sandbox compares each one's definition label, and exactly
// those services are recreated (docs/COMPOSE.md, "Applying an approved
// edit"), into goal.recreated. Why it could not, or empty.
std::string recreate_changed(const Config& config, SettleGoal& goal, int log_fd, Deadline deadline,
                             const std::function<bool(const Plan&)>& run_rows) {
    auto facts = ask_engine(config, posture(config), log_fd, deadline);
    if (!facts) return "cannot tell whose definition changed: " + facts.error().message;
    goal.recreated = changed_definitions(*facts, config);
    for (const std::size_t index : *goal.recreated) {
        const std::string& service = config.services[index];
        log_line(log_fd, service + ": its definition changed; recreating its container");
        if (!run_rows(*recreate_rows(config, index)))
            return "recreating " + service + " failed (its rows in the log above)";
    }
    return {};
}

// The build step of `rebuild services[index]`, its argv hashed: what else
// than the snapshot decides what it builds.
std::string build_step_sha(const Config& config, std::size_t index) {
    const ArgvOutcome rows = argv_for(Verb::Rebuild, index, config);
    const Plan* plan = std::get_if<Plan>(&rows);
    for (const Step& step : plan ? *plan : Plan{}) {
        if (!step.snapshot_of) continue;
        std::string words;
        for (const std::string& word : step.argv) words += word + '\0';
        return common::sha256_hex(words);
    }
    return {};
}

// Whether services[index] already runs what `snapshot` builds with `step`
// (docs/BUILDS.md, "An unchanged rebuild"): the last build that went live
// was of both, and every container of the service, as the sandbox read the
// engine's JSON, runs its image from the current definition, not unhealthy.
bool build_is_live(const Config& config, std::size_t index, const std::string& snapshot,
                   const std::string& step) {
    const auto record = read_build_record(config, config.services[index]);
    std::array<std::uint8_t, 32> image{};
    if (!record || record->snapshot_sha256 != snapshot || record->step_sha256 != step ||
        !parse_hex_id(std::string_view(record->image_id).substr(7), image)) {
        return false;
    }
    // The queries' error text, read by no one: a build follows if they fail.
    UniqueFd quiet(::memfd_create("hb-build-check", MFD_CLOEXEC));
    const auto facts = ask_engine(config, posture(config), quiet.get(),
                                  std::chrono::steady_clock::now() + std::chrono::seconds(10));
    if (!facts) return false;
    std::size_t found = 0;
    for (const ContainerFacts& c : *facts) {
        if (!c.labelled || c.service != index) continue;
        ++found;
        if (c.state != ContainerState::Running || c.image != image ||
            c.definition != DefinitionMatch::Same || c.health == ContainerHealth::Unhealthy) {
            return false;
        }
    }
    return found > 0;
}

class Registry final : public Engines {
  public:
    common::EngineHold hold(const Config& config) const override { return engine_hold(config); }

    VerbPlan plan(const Config& config, Verb verb, std::optional<std::size_t> arg,
                  const LogWindow& window) const override {
        VerbPlan plan;
        plan.steps = argv_for(verb, arg, config);
        if (std::holds_alternative<Denied>(plan.steps)) return plan;
        // The parser lets a window through on logs only; this install may
        // still have no way to follow one (docs/COMPOSE.md, "Following logs").
        if (window.given() && (verb != Verb::Logs || !accepts_log_window(config))) {
            plan.steps = Denied{ReasonCode::WindowNotSupported};
            return plan;
        }
        if (std::holds_alternative<NoCommand>(plan.steps)) return plan;
        // docker compose v2 runs only through a docker engine user, whose
        // engine the look and the settle step ask (docs/DOCKER.md;
        // e2e_bridge_docker); elsewhere none runs, held or dry-run either.
        if (docker_compose(config.backend) && (!config.engine || !config.settle)) {
            plan.steps = Denied{ReasonCode::UntestedCompose};
            return plan;
        }
        // A windowed logs, and every logs where the install reads it by
        // container, reads the engine's log of the service's one container
        // instead of running a fixed row (engines/podman/follow_log.hpp).
        plan.follows_log = window.given() || (verb == Verb::Logs && logs_by_container(config));
        if (settles(verb, config)) plan.then = Then::Settle;
        if (looks(verb, config)) plan.then = Then::Look;
        plan.shown = symbolic_command(verb, arg, config, window);
        return plan;
    }

    Result<StepEnvironment> step_environment(const Config& config) const override {
        // A pinned install's rows start with `podman unshare PIN pin`: a
        // missing pin binary is said here, before anything runs, not as
        // podman's exec error inside the engine's namespaces.
        if (config.pins) {
            struct stat st {};
            const std::string& pin = config.pins->binary;
            if (::stat(pin.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
                ::access(pin.c_str(), X_OK) != 0) {
                return make_error("the pin binary " + pin +
                                  " (bridge.json pins.binary) is missing or not executable: "
                                  "`hostbridge upgrade` installs it");
            }
        }
        auto engine = engine_environment(config);
        if (!engine) return engine.error();
        std::vector<std::string> env = engine->env;
        return StepEnvironment{std::make_shared<EngineEnvironment>(std::move(*engine)),
                               std::move(env)};
    }

    Result<nlohmann::ordered_json> prepare_build(const Config& config, std::size_t index,
                                                 const HeldBuild* held) const override {
        // The builder runs base images' ONBUILD triggers, which no screen
        // read (engines/podman/base_triggers.hpp); docker's build pulls a
        // FROM its daemon lacks, so its screen allows only what the daemon
        // holds (docs/DOCKER.md).
        if (docker_compose(config.backend)) {
            const std::vector<std::string> allowed = build_allowed_images(*config.build);
            auto present = present_images(config, allowed);
            if (!present) return present.error();
            const BaseCheck triggers = [&](int builds_fd, const std::string&) -> Result<void> {
                if (auto checked = check_base_triggers(config, builds_fd); !checked)
                    return checked.error();
                return {};
            };
            auto detail = exec::prepare_build(config, index, held, triggers, &*present);
            if (detail || present->size() == allowed.size()) return detail;
            std::string absent;  // sorted both: the first allowed one not held
            for (std::size_t i = 0; absent.empty() && i < allowed.size(); ++i)
                if (i >= present->size() || (*present)[i] != allowed[i]) absent = allowed[i];
            return make_error(detail.error().message + " (the daemon does not hold " + absent +
                              ", which docker's build would pull)");
        }
        // A snapshot the service already runs the build of builds nothing
        // (docs/BUILDS.md, "An unchanged rebuild"), so its base images are
        // not read either; any other build forgets that record first.
        BaseCheck base_check;
        bool live = false;
        const std::string step =
            podman_compose(config.backend) ? build_step_sha(config, index) : std::string();
        if (podman_compose(config.backend)) {
            base_check = [&](int builds_fd, const std::string& snapshot) -> Result<void> {
                if (recreates(config) && !step.empty() &&
                    build_is_live(config, index, snapshot, step)) {
                    live = true;
                    return {};
                }
                if (auto checked = check_base_triggers(config, builds_fd); !checked) {
                    return checked.error();
                }
                return {};
            };
        }
        auto detail = exec::prepare_build(config, index, held, base_check);
        if (!detail || step.empty()) return detail;
        if (live) {
            (*detail)[kBuildLive] = true;
        } else if (auto noted = note_build_input(config, config.services.at(index),
                                                 (*detail)["snapshot_sha256"], step);
                   !noted) {
            return noted.error();
        }
        return detail;
    }
    Result<std::string> hold_build(const Config& config, const std::string& request,
                                   std::size_t index) const override {
        return exec::hold_build(config, request, index);
    }
    void sweep_held_builds(const Config& config,
                           const std::function<bool(const std::string&)>& live) const override {
        exec::sweep_held_builds(config, live);
    }
    std::vector<std::string> build_environment(const Config& config,
                                               std::size_t index) const override {
        // A stack builds with its own command and is told where the snapshot
        // is (docs/BUILDS.md, "The stack backend"); the compose rows name it.
        return exec::build_environment(config, index, stack_backend(config.backend.kind));
    }
    std::string built_image(const Config& config, std::size_t index) const override {
        return read_image_id(config, config.services.at(index));
    }
    Result<void> discard_build_tmp(const Config& config) const override {
        return exec::discard_build_tmp(config);
    }

    Settled then(const Config& config, Then then, Verb verb, std::optional<std::size_t> arg,
                 std::int64_t since_ns, bool build_live, int log_fd, Deadline deadline,
                 const std::function<bool(const Plan&)>& run_rows) const override {
        SettleOutcome outcome;
        if (then == Then::Settle) {
            SettleGoal goal = settle_goal(verb, arg, config, since_ns);
            if (verb == Verb::Up && recreates(config)) {
                const std::string failed =
                    recreate_changed(config, goal, log_fd, deadline, run_rows);
                if (!failed.empty()) {
                    log_line(log_fd, failed);
                    return Settled{false, failed, nlohmann::ordered_json::array(),
                                   nlohmann::ordered_json::array()};
                }
            }
            std::string built;
            if (verb == Verb::Rebuild && arg) {
                // Live already: the recorded image, running since before.
                const auto record =
                    build_live ? read_build_record(config, config.services[*arg]) : std::nullopt;
                built = record ? record->image_id : built_image(config, *arg);
                std::array<std::uint8_t, 32> image{};
                if (built.size() == 71 && parse_hex_id(std::string_view(built).substr(7), image)) {
                    goal.image = image;
                }
                if (build_live) goal.since_ns = 0;
                goal.build_live = build_live;
            }
            outcome = settle(config, posture(config), goal, log_fd, deadline);
            if (outcome.ok && goal.image && !build_live) {
                if (auto recorded = record_build_live(config, config.services[*arg], built);
                    !recorded) {
                    log_line(log_fd, "the build went live but was not recorded: " +
                                         recorded.error().message);
                }
            }
        } else if (then == Then::Look) {
            outcome = look(config, posture(config), verb, log_fd, deadline);
        }
        return Settled{outcome.ok, outcome.reason, settle_json(outcome, /*with_logs=*/true),
                       settle_json(outcome, /*with_logs=*/false)};
    }

    Followed follow(const Config& config, std::size_t service, const LogWindow& window, int log_fd,
                    Deadline deadline) const override {
        // `logs S` alone: its last lines (engines/argv_table.hpp, logs_by_container).
        const LogWindow asked = window.given() ? window : LogWindow{kPlainLogLines, kNoTime, 0};
        const FollowOutcome followed =
            follow_log(config, posture(config), service, asked, log_fd, deadline);
        return Followed{followed.ok, followed.reason, followed.selection.text,
                        format_cursor(followed.selection.cursor), followed.selection.more};
    }
};

}  // namespace

common::EngineHold engine_hold(const Config& config) {
    // Without an engine user the engine runs as the person: whatever a
    // builder feature no screen knew reaches is theirs (buildah followed a
    // link a build step planted in its own cache; SECURITY.md, "Two postures").
    constexpr const char* kSameUser =
        "the engine runs as you, so a builder feature the screen does not know reaches your "
        "files (it happened: buildah follows links a build step plants in its own cache); an "
        "engine user contains it (`hostbridge engine setup`, docs/ENGINE-USER.md)";
    if (stack_backend(config.backend.kind)) {
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
    if (!podman_compose(config.backend)) {
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

const Engines& registry() {
    static const Registry instance;
    return instance;
}

}  // namespace hb::exec
