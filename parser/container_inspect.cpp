#include "parser/container_inspect.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <string_view>

#include "ipc/json_depth.hpp"

namespace hb::parser {
namespace {

using nlohmann::json;

// The engine's inspect JSON is at most six levels deep; a deeper one is not
// the engine's, and nlohmann's parser recurses per level.
constexpr std::size_t kMaxDepth = 16;

constexpr std::pair<std::string_view, ContainerState> kStates[] = {
    {"created", ContainerState::Created},     {"configured", ContainerState::Configured},
    {"initialized", ContainerState::Created}, {"running", ContainerState::Running},
    {"paused", ContainerState::Paused},       {"restarting", ContainerState::Restarting},
    {"removing", ContainerState::Removing},   {"stopping", ContainerState::Stopping},
    {"stopped", ContainerState::Stopped},     {"exited", ContainerState::Exited},
    {"dead", ContainerState::Dead},
};
constexpr std::pair<std::string_view, ContainerHealth> kHealths[] = {
    {"starting", ContainerHealth::Starting},
    {"healthy", ContainerHealth::Healthy},
    {"unhealthy", ContainerHealth::Unhealthy},
};

const json* member(const json& object, const char* key) {
    if (!object.is_object()) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
}

const std::string* string_member(const json& object, const char* key) {
    const json* v = member(object, key);
    return v != nullptr && v->is_string() ? &v->get_ref<const std::string&>() : nullptr;
}

// An integer member within [lo, hi]; absent is `fallback`, anything else fails.
bool int_member(const json& object, const char* key, std::int64_t lo, std::int64_t hi,
                std::int64_t fallback, std::int64_t& out) {
    const json* v = member(object, key);
    if (v == nullptr || v->is_null()) {
        out = fallback;
        return true;
    }
    if (!v->is_number_integer()) return false;
    const std::int64_t n = v->get<std::int64_t>();
    if (n < lo || n > hi) return false;
    out = n;
    return true;
}

ContainerHealth health_of(const json& state, const json* config) {
    const json* health = member(state, "Health");
    if (health == nullptr || health->is_null()) health = member(state, "Healthcheck");
    const std::string* status = health ? string_member(*health, "Status") : nullptr;
    if (status != nullptr && !status->empty()) {
        for (const auto& [word, value] : kHealths) {
            if (*status == word) return value;
        }
        return ContainerHealth::Unknown;
    }
    // No status yet: a configured healthcheck that never ran is starting.
    const json* check = config ? member(*config, "Healthcheck") : nullptr;
    const json* test = check ? member(*check, "Test") : nullptr;
    if (test == nullptr || !test->is_array() || test->empty()) return ContainerHealth::None;
    const json& first = (*test)[0];
    if (first.is_string() && first.get_ref<const std::string&>() == "NONE") {
        return ContainerHealth::None;
    }
    return ContainerHealth::Starting;
}

// The container's definition label against what the request asks of its
// service; the label's text never leaves this process.
DefinitionMatch definition_of(const json& labels, const InspectRequest& request,
                              std::uint16_t service) {
    if (service == kNoService || service >= request.definitions.size()) {
        return DefinitionMatch::NotAsked;
    }
    const auto& asked = request.definitions[service];
    if (std::all_of(asked.begin(), asked.end(), [](std::uint8_t b) { return b == 0; })) {
        return DefinitionMatch::NotAsked;
    }
    const std::string* label = string_member(labels, std::string(kDefinitionLabel).c_str());
    return label != nullptr && *label == hex_id(asked) ? DefinitionMatch::Same
                                                       : DefinitionMatch::Changed;
}

bool read_one(const json& c, const InspectRequest& request, ContainerFacts& out) {
    if (!c.is_object()) return false;
    const std::string* id = string_member(c, "Id");
    if (id == nullptr || !parse_hex_id(*id, out.id)) return false;
    if (const std::string* image = string_member(c, "Image")) {
        std::string_view text = *image;
        if (text.starts_with("sha256:")) text.remove_prefix(7);
        if (!parse_hex_id(text, out.image)) out.image = {};
    }
    std::int64_t restarts = 0;
    if (!int_member(c, "RestartCount", 0, UINT32_MAX, 0, restarts)) return false;
    out.restarts = static_cast<std::uint32_t>(restarts);

    const json* state = member(c, "State");
    if (state == nullptr || !state->is_object()) return false;
    const std::string* status = string_member(*state, "Status");
    if (status == nullptr) return false;
    out.state = ContainerState::Unknown;
    for (const auto& [word, value] : kStates) {
        if (*status == word) out.state = value;
    }
    std::int64_t exit_code = 0, pid = 0;
    if (!int_member(*state, "ExitCode", INT32_MIN, INT32_MAX, 0, exit_code) ||
        !int_member(*state, "Pid", 0, UINT32_MAX, 0, pid)) {
        return false;
    }
    out.exit_code = static_cast<std::int32_t>(exit_code);
    out.pid = static_cast<std::uint32_t>(pid);
    if (const std::string* started = string_member(*state, "StartedAt")) {
        out.started_ns = rfc3339_ns(*started);
    }

    const json* config = member(c, "Config");
    out.health = health_of(*state, config);
    const json* labels = config ? member(*config, "Labels") : nullptr;
    if (labels != nullptr && labels->is_object()) {
        const std::string* project = string_member(*labels, "com.docker.compose.project");
        out.labelled = project != nullptr && *project == request.project;
        if (request.install_label) {
            const std::string* install = string_member(*labels, std::string(kInstallLabel).c_str());
            out.labelled = out.labelled && install != nullptr && *install == request.project;
        }
        if (const std::string* service = string_member(*labels, "com.docker.compose.service")) {
            const auto it = std::find(request.services.begin(), request.services.end(), *service);
            if (it != request.services.end()) {
                out.service = static_cast<std::uint16_t>(it - request.services.begin());
            }
        }
        out.definition = definition_of(*labels, request, out.service);
    }
    return true;
}

}  // namespace

InspectAnswer read_container_inspect(std::span<const std::uint8_t> bytes,
                                     const InspectRequest& request) {
    InspectAnswer answer;
    answer.seq = request.seq;
    if (bytes.size() > kMaxInspectBytes) {
        answer.status = InspectStatus::TooLarge;
        return answer;
    }
    if (!json_depth_within(
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
            kMaxDepth)) {
        answer.status = InspectStatus::NotJson;
        return answer;
    }
    const json doc = json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) {
        answer.status = InspectStatus::NotJson;
        return answer;
    }
    if (!doc.is_array()) {
        answer.status = InspectStatus::BadShape;
        return answer;
    }
    for (const json& c : doc) {
        ContainerFacts facts;
        if (!read_one(c, request, facts)) {
            answer = InspectAnswer{};
            answer.seq = request.seq;
            answer.status = InspectStatus::BadShape;
            return answer;
        }
        ++answer.total;
        if (answer.containers.size() < kMaxInspectContainers) answer.containers.push_back(facts);
    }
    return answer;
}

}  // namespace hb::parser
