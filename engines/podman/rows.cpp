#include "engines/podman/rows.hpp"

#include <array>

#include "executor/run_tree.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/rfc3339.hpp"

namespace hb::exec {
namespace {

bool is_container_id(const std::string& id) {
    std::array<std::uint8_t, 32> bytes{};
    return parse_hex_id(id, bytes);
}

}  // namespace

// By the project label alone: the post-start check of pinned binds
// (pin_check.hpp) must see every container of the project a command
// started, one made by hand with -p too (podman-compose's restart and up
// start a container by its name). Which of them are the install's is the
// sandboxed reader's answer (`labelled`, ipc/inspect_wire.hpp).
Argv settle_list(const Config& config) {
    const SettleSettings& s = *config.settle;
    return {s.engine,
            "ps",
            "-a",
            "-q",
            "--no-trunc",
            "--filter",
            "label=com.docker.compose.project=" + s.project};
}

std::optional<Argv> settle_inspect(const Config& config, const std::vector<std::string>& ids) {
    if (ids.empty()) return std::nullopt;
    Argv argv = {config.settle->engine, "container", "inspect"};
    for (const std::string& id : ids) {
        if (!is_container_id(id)) return std::nullopt;
        argv.push_back(id);
    }
    return argv;
}

std::optional<Argv> settle_healthcheck(const Config& config, const Posture& posture,
                                       const std::string& id) {
    if (!posture.healthchecks || !config.settle || !is_container_id(id)) return std::nullopt;
    return Argv{config.settle->engine, "healthcheck", "run", id};
}

std::optional<Argv> settle_log(const Config& config, const std::string& id) {
    if (!is_container_id(id)) return std::nullopt;
    return Argv{config.settle->engine, "logs", "--tail", std::to_string(kSettleLogLines), id};
}

std::optional<Argv> settle_mounts(const Config& config, const std::vector<std::string>& ids) {
    if (ids.empty() || !config.pins) return std::nullopt;
    Argv argv = {config.settle->engine, "container", "inspect", "--format",
                 std::string(kBindMountsFormat)};
    for (const std::string& id : ids) {
        if (!is_container_id(id)) return std::nullopt;
        argv.push_back(id);
    }
    return argv;
}

std::optional<Argv> settle_pin_check(
    const Config& config, std::uint32_t pid,
    const std::vector<std::pair<std::string, std::string>>& binds) {
    if (!config.pins || pid == 0 || binds.empty()) return std::nullopt;
    Argv argv = {config.pins->engine, "unshare",      config.pins->binary,
                 "check-pins",        config.run_dir, std::to_string(pid)};
    for (const auto& [source, target] : binds) {
        if (!is_checkout_path(source) || !is_container_path(target)) return std::nullopt;
        argv.insert(argv.end(), {source, target});
    }
    return argv;
}

std::optional<Argv> settle_stop(const Config& config, const std::string& id) {
    if (!is_container_id(id)) return std::nullopt;
    return Argv{config.settle->engine, "stop", "--time", "0", id};
}

Argv trigger_images(const Config& config) {
    return {config.build->engine, "images", "-a", "--no-trunc", "--format", "{{.ID}}"};
}

std::optional<Argv> trigger_count(const Config& config, const std::string& id) {
    if (!is_container_id(id)) return std::nullopt;
    if (docker_compose(config.backend)) {
        return Argv{config.build->engine,      "image", "inspect", "--format",
                    "{{len .Config.OnBuild}}", id};
    }
    if (config.build->buildah.empty()) return std::nullopt;
    return Argv{config.build->buildah,
                "inspect",
                "--type",
                "image",
                "--format",
                "{{len .Docker.Config.OnBuild}}",
                id};
}

Argv image_present(const Config& config, const std::string& ref) {
    return {config.build->engine, "image", "inspect", "--format", "{{.Id}}", ref};
}

std::optional<Argv> trigger_save(const Config& config, const std::string& id) {
    if (!is_container_id(id)) return std::nullopt;
    return Argv{config.build->engine,    "save", "--format", "docker-archive", "-o",
                image_save_file(config), id};
}

std::string image_save_file(const Config& config) {
    return config.run_dir + "/.hostbridge-build/" + kImageSaveName;
}

std::optional<Argv> window_log(const Config& config, const std::string& id,
                               const LogWindow& window) {
    if (!is_container_id(id) || !window.given()) return std::nullopt;
    Argv argv = {config.settle->engine, "logs", "--timestamps"};
    if (window.since_ns != kNoTime) {
        // One nanosecond before the cursor's instant, in UTC with nine
        // digits: podman 4.3 returns lines strictly after --since, and
        // reads a plain number as a float, losing the nanoseconds.
        if (window.since_ns > 0)
            argv.insert(argv.end(), {"--since", rfc3339_utc_ns(window.since_ns - 1)});
    } else {
        argv.insert(argv.end(), {"--tail", std::to_string(window.lines)});
    }
    argv.push_back(id);
    return argv;
}

}  // namespace hb::exec
