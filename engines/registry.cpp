#include "engines/registry.hpp"

#include <array>

#include "engines/argv_table.hpp"
#include "engines/build_input/build_input.hpp"
#include "engines/podman/base_triggers.hpp"
#include "engines/podman/engine_relay.hpp"
#include "engines/podman/follow_log.hpp"
#include "engines/podman/settle.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/log_cursor.hpp"

namespace hb::exec {
namespace {

bool podman_compose(const Config& config) {
    return config.backend.kind == BackendKind::Compose &&
           config.backend.flavour == ComposeFlavour::PodmanCompose;
}

class Registry final : public Engines {
  public:
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
        // docker compose v2 is not in Debian 12: no test runs its rows, so
        // none runs, held or dry-run either (docs/COMPOSE.md, "docker
        // compose"); docs/ARGV-TABLE.md shows what they would be.
        if (config.backend.kind == BackendKind::Compose &&
            config.backend.flavour == ComposeFlavour::Docker) {
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
        auto engine = engine_environment(config);
        if (!engine) return engine.error();
        std::vector<std::string> env = engine->env;
        return StepEnvironment{std::make_shared<EngineEnvironment>(std::move(*engine)),
                               std::move(env)};
    }

    Result<nlohmann::ordered_json> prepare_build(const Config& config, std::size_t index,
                                                 const HeldBuild* held) const override {
        // podman's builder runs base images' ONBUILD triggers, which no
        // screen read (engines/podman/base_triggers.hpp); docker's was never
        // measured, and its rebuild stays held for a person
        // (admin/install/policy_engine_guard.hpp).
        BaseCheck base_check;
        if (podman_compose(config)) {
            base_check = [&config](int builds_fd) -> Result<void> {
                if (auto checked = check_base_triggers(config, builds_fd); !checked) {
                    return checked.error();
                }
                return {};
            };
        }
        return exec::prepare_build(config, index, held, base_check);
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
        return exec::build_environment(config, index, config.backend.kind == BackendKind::Stack);
    }
    std::string built_image(const Config& config, std::size_t index) const override {
        return read_image_id(config, config.services.at(index));
    }
    Result<void> discard_build_tmp(const Config& config) const override {
        return exec::discard_build_tmp(config);
    }

    Settled then(const Config& config, Then then, Verb verb, std::optional<std::size_t> arg,
                 std::int64_t since_ns, int log_fd, Deadline deadline) const override {
        SettleOutcome outcome;
        if (then == Then::Settle) {
            SettleGoal goal = settle_goal(verb, arg, config, since_ns);
            if (verb == Verb::Rebuild && arg) {
                std::array<std::uint8_t, 32> image{};
                const std::string built = built_image(config, *arg);
                if (built.size() == 71 && parse_hex_id(std::string_view(built).substr(7), image)) {
                    goal.image = image;
                }
            }
            outcome = settle(config, posture(config), goal, log_fd, deadline);
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

const Engines& registry() {
    static const Registry instance;
    return instance;
}

}  // namespace hb::exec
