#include "admin/commands/adopt_containers.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "admin/compose/build_plan.hpp"
#include "admin/install/install_record.hpp"  // command_line
#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"
#include "common/integrity_gate.hpp"
#include "display/visible.hpp"
#include "engines/argv_table.hpp"
#include "engines/registry.hpp"
#include "executor/run_tree.hpp"
#include "executor/runner.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/sys.hpp"

namespace hb::admin {
namespace {

using display::visible;
using display::visible_text;

constexpr std::string_view kProjectLabel = "com.docker.compose.project";
constexpr std::string_view kWorkingDirLabel = "com.docker.compose.project.working_dir";
constexpr std::string_view kServiceLabel = "com.docker.compose.service";

// The engine's queries as the executor's rows run them: HOME from the
// password database (executor/runner.cpp, child_environment), where rootless
// podman finds its store whatever HOME the admin tool was started with.
RunOptions engine_options(int seconds) {
    RunOptions options;
    options.timeout = std::chrono::seconds(seconds);
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr)
        options.env_set.push_back(std::string("HOME=") + pw->pw_dir);
    return options;
}

std::string label_of(const nlohmann::json& labels, std::string_view key) {
    if (!labels.is_object()) return {};
    auto it = labels.find(std::string(key));
    return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string compose_dir_of(const Config& c) {
    return c.backend.file.substr(0, c.backend.file.rfind('/'));
}

// The compose dir's copy in the run tree, as podman-compose records it
// (the realpath() of the file's directory): where the bridge's rows run.
std::string run_tree_compose_dir(const Config& c) {
    std::string tree = exec::run_tree_dir(c) + compose_dir_of(c).substr(c.project_dir.size());
    if (char* real = ::realpath(tree.c_str(), nullptr); real != nullptr) {
        tree = real;
        std::free(real);
    }
    return tree;
}

// The project podman-compose 1.0.3 runs the checkout's file as, by hand
// without -p (docs/COMPOSE.md, "The project's name").
std::string plain_project_of(const Config& c) {
    const std::string dir = compose_dir_of(c);
    return compose_project_name(dir.substr(dir.rfind('/') + 1));
}

// Why a container of the bridge's own project, made from the checkout's
// compose dir or its run tree copy, is adopted; empty when it is the
// bridge's as `up` makes it.
std::string stale_reason(const Config& c, const nlohmann::json& container,
                         const nlohmann::json& labels, const std::string& service) {
    const std::string& project = c.settle->project;
    if (label_of(labels, kInstallLabel) != project)
        return "it lacks the bridge's label " + std::string(kInstallLabel) + "=" + project +
               " (made by hand with -p " + project +
               ", or before the label): the bridge neither reads nor settles it";
    const nlohmann::json mounts = container.value("Mounts", nlohmann::json::array());
    for (const nlohmann::json& m : mounts.is_array() ? mounts : nlohmann::json::array()) {
        if (!m.is_object() || m.value("Type", "") != "bind") continue;
        const std::string source = m.value("Source", "");
        const BindSourceOf of = bind_source_of(c, source);
        if (of.inside && !of.pinned)
            return "it bind-mounts " + visible(source) +
                   " of the checkout unpinned: each start resolves that path again, where the "
                   "agent can swap it for a link";
    }
    const auto wanted = c.settle->definitions.find(service);
    if (wanted != c.settle->definitions.end() &&
        label_of(labels, kDefinitionLabel) != wanted->second)
        return "it was made from another definition than the approved compose file's";
    return {};
}

Result<std::string> random_hex() {
    unsigned char bytes[8];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
        return make_error(sys::errno_text("cannot draw a nonce"));
    return sys::lower_hex(bytes, sizeof bytes);
}

// The drain's single-flight lock (executor/drain.cpp, open_lock): no
// request of the agent's runs while the containers are replaced. A drain
// that finds it taken leaves its requests for the next one.
Result<UniqueFd> take_drain_lock(const Config& c) {
    const std::string path = c.state_dir + "/drain.lock";
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return make_error(sys::errno_text("cannot open the drain's lock " + path));
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!sys::try_record_lock(fd.get())) {
        if (std::chrono::steady_clock::now() > until)
            return make_error("a drain has held its lock " + path + " for a minute");
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return fd;
}

// The services with a running container of the bridge's, labelled as its
// rows label them; nullopt when the engine cannot say.
std::optional<std::set<std::string>> running_services(const Config& c) {
    const std::string& project = c.settle->project;
    auto listed = run_process({c.settle->engine, "ps", "--filter", "status=running", "--filter",
                               "label=" + std::string(kProjectLabel) + "=" + project, "--filter",
                               "label=" + std::string(kInstallLabel) + "=" + project, "--format",
                               "{{index .Labels \"" + std::string(kServiceLabel) + "\"}}"},
                              engine_options(20));
    if (!listed || !listed->ok()) return std::nullopt;
    std::set<std::string> out;
    std::istringstream lines(listed->out);
    for (std::string line; std::getline(lines, line);) out.insert(line);
    return out;
}

// Every image the rows run that compose would otherwise build exists
// (`up --no-build`: a missing one fails the whole `up`). One a hand run
// built under the directory's project name is the image an adoptee ran:
// it is tagged with the bridge's name, which a later `rebuild` replaces.
Result<void> images_ready(const Config& c, const std::vector<Adoptee>& which,
                          const std::map<std::string, std::string>& image_of) {
    if (!c.build) return {};
    for (const ServiceBuild& build : c.build->services) {
        auto exists =
            run_process({c.settle->engine, "image", "exists", build.image}, engine_options(20));
        if (exists && exists->ok()) continue;
        const auto adoptee = std::find_if(which.begin(), which.end(), [&](const Adoptee& a) {
            return a.service == build.service && image_of.contains(a.id);
        });
        if (adoptee == which.end())
            return make_error("service " + build.service + "'s image " + build.image +
                              " is not built yet: the bridge's rebuild " + build.service +
                              " builds it");
        const std::string& image = image_of.at(adoptee->id);
        auto tagged =
            run_process({c.settle->engine, "tag", image, build.image}, engine_options(30));
        if (!tagged || !tagged->ok())
            return make_error("cannot tag the image " + build.service + " ran as " + build.image);
        std::cout << "  tagged the image " << build.service << " ran (" << image.substr(0, 12)
                  << ") " << visible(build.image)
                  << ", the name the bridge runs it by, until a rebuild replaces it\n";
    }
    return {};
}

}  // namespace

bool adopts_containers(const Config& c) {
    return podman_compose(c.backend) && c.pins && c.settle && !c.engine;
}

Result<std::vector<Adoptee>> adoptable_containers(const Config& c) {
    std::vector<Adoptee> found;
    if (!adopts_containers(c)) return found;
    const std::string& own = c.settle->project;
    const std::string plain = plain_project_of(c);
    const std::string dir = compose_dir_of(c);
    const std::string tree = run_tree_compose_dir(c);
    // Listed by the project label (podman compares it whole), then each
    // checked again from its inspect JSON, read as JSON.
    std::vector<std::string> argv = {c.settle->engine, "container", "inspect"};
    for (const std::string& project : std::set<std::string>{own, plain}) {
        if (project.empty()) continue;
        auto listed = run_process(
            {c.settle->engine, "ps", "-a", "--filter",
             "label=" + std::string(kProjectLabel) + "=" + project, "--format", "{{.ID}}"},
            engine_options(20));
        if (!listed || !listed->ok())
            return make_error(c.settle->engine + " ps -a failed" +
                              (listed ? ": " + visible(listed->err.substr(0, 300)) : ""));
        std::istringstream lines(listed->out);
        for (std::string id; std::getline(lines, id);)
            if (!id.empty() && std::find(argv.begin(), argv.end(), id) == argv.end())
                argv.push_back(id);
    }
    if (argv.size() == 3) return found;
    auto inspected = run_process(argv, engine_options(20));
    const nlohmann::json containers = inspected && inspected->ok()
                                          ? nlohmann::json::parse(inspected->out, nullptr, false)
                                          : nlohmann::json();
    if (!containers.is_array()) return make_error(c.settle->engine + " container inspect failed");
    for (const nlohmann::json& container : containers) {
        if (!container.is_object()) continue;
        const nlohmann::json config = container.value("Config", nlohmann::json::object());
        const nlohmann::json labels = config.is_object()
                                          ? config.value("Labels", nlohmann::json::object())
                                          : nlohmann::json::object();
        const std::string project = label_of(labels, kProjectLabel);
        const std::string from = label_of(labels, kWorkingDirLabel);
        const std::string service = label_of(labels, kServiceLabel);
        const std::string id = container.value("Id", "");
        std::array<std::uint8_t, 32> parsed{};
        if (!parse_hex_id(id, parsed) || service.empty() ||
            !std::binary_search(c.services.begin(), c.services.end(), service))
            continue;
        Adoptee a{id, container.value("Name", ""), service, {}};
        if (project == own && (from == dir || from == tree)) {
            a.why = stale_reason(c, container, labels, service);
        } else if (project == plain && from == dir) {
            a.why = "podman-compose made it from the checkout by hand, as the project " + plain +
                    ", not the bridge's " + own + ": the bridge's up would make a second " +
                    service + " beside it";
        }
        if (!a.why.empty()) found.push_back(std::move(a));
    }
    return found;
}

std::string remove_line(const Config& c, const std::vector<Adoptee>& which) {
    std::string rm = shell_quote(c.settle->engine) + " rm -f";
    for (const Adoptee& a : which) rm += " " + a.id.substr(0, 12);
    return rm;
}

Adoption adopt(const Config& c, const std::vector<Adoptee>& which) {
    Adoption out;
    std::set<std::string> services;
    for (const Adoptee& a : which) services.insert(a.service);
    const exec::Engines& engines = exec::registry();
    // --- what the rows need, before anything is removed ---
    auto lock = take_drain_lock(c);
    if (!lock) {
        out.error = lock.error().message;
        return out;
    }
    const sys::RecordLockGuard hold(lock->get());
    const common::GateReport gate = common::check_tcb(c.project_dir, c.tcb);
    if (!gate.passed()) {
        out.error =
            "the trusted files do not match their pins (" + gate.detail() + "): approve them first";
        return out;
    }
    if (auto walked = exec::check_checkout_paths(c); !walked) {
        out.error = walked.error().message;
        return out;
    }
    if (auto tree = exec::build_run_tree(c); !tree) {
        out.error = tree.error().message;
        return out;
    }
    const exec::VerbPlan plan = engines.plan(c, Verb::Up, std::nullopt, LogWindow{});
    const auto* steps = std::get_if<exec::Plan>(&plan.steps);
    auto environment = engines.step_environment(c);
    auto log = exec::scratch_file("hostbridge-adopt");
    auto nonce = random_hex();
    if (steps == nullptr || !environment || !log || !nonce) {
        out.error = "the bridge's up cannot run on this install";
        return out;
    }
    std::map<std::string, std::string> image_of;  // adoptee id -> its image id
    {
        std::vector<std::string> argv = {c.settle->engine, "container", "inspect", "--format",
                                         "{{.Id}} {{.Image}}"};
        for (const Adoptee& a : which) argv.push_back(a.id);
        auto images = run_process(argv, engine_options(20));
        std::istringstream lines(images && images->ok() ? images->out : "");
        for (std::string id, image; lines >> id >> image;) image_of[id] = image;
    }
    if (auto ready = images_ready(c, which, image_of); !ready) {
        out.error = ready.error().message;
        return out;
    }

    // --- removed by id, then made again by the bridge's rows ---
    for (const Adoptee& a : which) {
        auto rm = run_process({c.settle->engine, "rm", "-f", a.id}, engine_options(60));
        if (!rm || !rm->ok()) {
            out.error = "cannot remove " + visible(a.name) + " (" + a.id.substr(0, 12) + ")";
            break;
        }
        out.changed = true;
        std::cout << "  removed " << visible(a.name) << " (" << a.service << ")\n";
    }
    timespec wall{};
    ::clock_gettime(CLOCK_REALTIME, &wall);
    const std::int64_t since_ns =
        static_cast<std::int64_t>(wall.tv_sec) * 1000000000 + wall.tv_nsec;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(c.timeouts.for_verb(Verb::Up));
    std::vector<std::string> env = exec::run_tree_environment(c);
    env.insert(env.end(), environment->env.begin(), environment->env.end());
    std::size_t ran = 0;
    const auto run_rows = [&](const exec::Plan& rows) {
        for (const exec::Step& step : rows) {
            const std::string unit_nonce = *nonce + (ran == 0 ? "" : "-" + std::to_string(ran));
            ++ran;
            const exec::Argv argv = exec::scoped_argv(step.argv, Verb::Up, c, unit_nonce,
                                                      exec::user_manager_reachable());
            const exec::RunResult r =
                exec::run_command(argv, log->get(), exec::time_left(deadline),
                                  exec::kDefaultKillGrace, exec::run_tree_dir(c), env);
            if (!r.succeeded()) {
                out.error = "the bridge's up failed (" + exec::run_failure(r) + ")";
                return false;
            }
        }
        return true;
    };
    if (out.error.empty() && run_rows(*steps) && plan.then != exec::Then::Nothing) {
        const exec::Settled settled = engines.then(c, plan.then, Verb::Up, std::nullopt, since_ns,
                                                   false, log->get(), deadline, run_rows);
        if (!settled.ok && out.error.empty()) out.error = settled.reason;
    }
    const auto running = running_services(c);
    for (const std::string& service : services)
        if (!running || !running->contains(service)) out.down.push_back(service);
    if (!out.error.empty() || !out.down.empty()) {
        // The engine's last lines, from a line's start.
        if (auto tail = exec::read_tail(log->get(), 2000); tail && !tail->empty()) {
            const std::size_t from = tail->size() < 2000 ? 0 : tail->find('\n') + 1;
            const std::string lines = tail->substr(std::min(from, tail->size()));
            std::cout << visible_text(lines) << (lines.ends_with('\n') ? "" : "\n");
        }
        // The rows as they ran, from the run tree just built: run again once
        // the cause is gone (the run tree is the approved copies').
        std::string line = "cd " + shell_quote(exec::run_tree_dir(c)) + " && env";
        for (const std::string& e : exec::run_tree_environment(c)) line += " " + shell_quote(e);
        std::string rows;
        for (const exec::Step& step : *steps)
            rows += (rows.empty() ? "" : " && ") + command_line(step.argv);
        out.restart.push_back(line + " sh -c " + shell_quote(rows));
    }
    return out;
}

}  // namespace hb::admin
