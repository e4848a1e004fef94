#include "admin/commands/stale_containers.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "admin/compose/build_plan.hpp"
#include "admin/compose/compose_render.hpp"
#include "admin/util/process.hpp"
#include "display/visible.hpp"
#include "engines/argv_table.hpp"
#include "engines/podman/pin_check.hpp"
#include "ipc/pin_paths.hpp"

namespace hb::admin {
namespace {

using display::visible;

// What a running container finds at each pinned target, by the
// executor's own post-start check (engines/podman/pin_check.hpp), run the same
// way: a container started outside the bridge, or one the bridge could
// not stop, is named.
void check_running_pins(const Config& c, const std::string& name, const nlohmann::json& inspected,
                        const nlohmann::json& mounts, std::vector<ContainerFinding>& found) {
    const nlohmann::json state = inspected.value("State", nlohmann::json::object());
    if (!state.is_object() || !state.value("Running", false)) return;
    const auto pid = state.value("Pid", std::uint32_t{0});
    std::vector<exec::BindMount> binds;
    for (const nlohmann::json& m : mounts) {
        if (!m.is_object() || m.value("Type", "") != "bind") continue;
        binds.push_back({m.value("Source", ""), m.value("Destination", "")});
    }
    const exec::PinCheckPlan plan = exec::plan_pin_check(c, binds);
    if (plan.compare.empty()) return;  // nothing pinned (or named by the caller)
    const auto row = exec::settle_pin_check(c, pid, plan.compare);
    RunOptions options;
    options.timeout = std::chrono::seconds(20);
    auto ran = row ? run_process(*row, options) : Result<RunResult>(make_error("no row"));
    auto problem_text = ran && (ran->exit_code == 0 || ran->exit_code == 1)
                            ? exec::check_answer_problem(ran->out, plan.compare)
                            : Result<std::string>(make_error("no answer"));
    if (!problem_text) {
        found.push_back({false,
                         "cannot check what container " + name +
                             " has at its pinned bind targets (podman unshare hostbridge-pin "
                             "check-pins): whether it holds the pins is unknown",
                         ""});
        return;
    }
    if (problem_text->empty()) return;
    found.push_back({true,
                     "container " + visible(name) + " is running and " + visible(*problem_text) +
                         ": it was started with a bind the agent could have swapped for a link "
                         "to your home. Stop it; the next up or restart through the bridge "
                         "checks it",
                     c.pins->engine + " stop " + name});
}

}  // namespace

std::string compose_project_of(const Config& c) {
    if (c.build) return c.build->project;
    if (c.settle) return c.settle->project;
    const std::string dir = c.backend.file.substr(0, c.backend.file.rfind('/'));
    return compose_project_name(dir.substr(dir.rfind('/') + 1));
}

std::vector<ContainerFinding> stale_containers(const Config& c, const InstallPaths& paths) {
    std::vector<ContainerFinding> found;
    const std::string project = compose_project_of(c);
    if (!c.pins || c.pins->sources.empty()) return found;
    const std::string& engine = c.pins->engine;
    RunOptions options;
    options.timeout = std::chrono::seconds(20);
    auto listed =
        run_process({engine, "ps", "-a", "--filter", "label=io.podman.compose.project=" + project,
                     "--format", "{{.Names}}"},
                    options);
    if (!listed || !listed->ok()) {
        found.push_back({false,
                         "cannot list the project's containers (" + engine +
                             " ps): whether any bind-mounts a path unpinned is unknown",
                         ""});
        return found;
    }
    // Only these names are ever offered to `rm`; inspect's JSON is read
    // as JSON, so no path in it can pose as another container's line.
    std::set<std::string> names;
    std::istringstream lines(listed->out);
    for (std::string name; std::getline(lines, name);) {
        if (!name.empty()) names.insert(name);
    }
    if (names.empty()) return found;
    std::vector<std::string> argv = {engine, "container", "inspect"};
    argv.insert(argv.end(), names.begin(), names.end());
    auto inspected = run_process(argv, options);
    const nlohmann::json containers = inspected && inspected->ok()
                                          ? nlohmann::json::parse(inspected->out, nullptr, false)
                                          : nlohmann::json();
    if (!containers.is_array()) {
        found.push_back(
            {false, "cannot inspect the project's containers (" + engine + " container inspect)",
             ""});
        return found;
    }
    std::string rendered;
    for (const TcbPin& file : c.rendered) {
        if (auto text = read_rendered_copy(paths, file.path); text && *text) rendered += **text;
    }
    const std::string pins = bind_pin_root(c.run_dir) + "/";
    for (const nlohmann::json& container : containers) {
        const std::string name = container.value("Name", "");
        const nlohmann::json mounts = container.value("Mounts", nlohmann::json::array());
        if (!names.contains(name) || !mounts.is_array()) continue;
        check_running_pins(c, name, container, mounts, found);
        for (const nlohmann::json& m : mounts) {
            if (!m.is_object() || m.value("Type", "") != "bind") continue;
            const std::string source = m.value("Source", "");
            if (source.starts_with(pins) ||
                rendered.find("\"" + source + ":") != std::string::npos ||
                rendered.find("\"" + source + "\"") != std::string::npos)
                continue;
            found.push_back(
                {true,
                 "container " + name + " bind-mounts " + source +
                     ", which is neither a pin nor a path the approved compose file names: it "
                     "was created before bind sources were pinned (or by hand, or the agent won "
                     "a swap then), and each start resolves that path again, so the agent can "
                     "swap it for a link to your home. Remove it; the next up creates it with "
                     "the pin",
                 engine + " rm -f " + name});
            break;
        }
    }
    return found;
}

Result<std::vector<PinnedContainer>> containers_on_pins(const Config& c) {
    std::vector<PinnedContainer> found;
    if (!c.pins) return found;
    const std::string& engine = c.pins->engine;
    RunOptions options;
    options.timeout = std::chrono::seconds(20);
    auto listed = run_process({engine, "ps", "-a", "--format", "{{.ID}}"}, options);
    if (!listed || !listed->ok()) {
        const std::string err = listed ? listed->err.substr(0, 300) : listed.error().message;
        return make_error(engine + " ps -a failed" + (err.empty() ? "" : ": " + visible(err)));
    }
    std::vector<std::string> argv = {engine, "container", "inspect"};
    std::istringstream lines(listed->out);
    for (std::string id; std::getline(lines, id);) {
        if (!id.empty()) argv.push_back(id);
    }
    if (argv.size() == 3) return found;
    auto inspected = run_process(argv, options);
    const nlohmann::json containers = inspected && inspected->ok()
                                          ? nlohmann::json::parse(inspected->out, nullptr, false)
                                          : nlohmann::json();
    if (!containers.is_array()) return make_error(engine + " container inspect failed");
    const std::string pins = bind_pin_root(c.run_dir) + "/";
    for (const nlohmann::json& container : containers) {
        if (!container.is_object()) continue;
        const nlohmann::json mounts = container.value("Mounts", nlohmann::json::array());
        if (!mounts.is_array()) continue;
        for (const nlohmann::json& m : mounts) {
            if (!m.is_object() || !m.value("Source", "").starts_with(pins)) continue;
            const nlohmann::json state = container.value("State", nlohmann::json::object());
            found.push_back(
                {container.value("Name", ""), state.is_object() && state.value("Running", false)});
            break;
        }
    }
    return found;
}

}  // namespace hb::admin
