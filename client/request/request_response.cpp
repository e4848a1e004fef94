#include "client/request/request_response.hpp"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "display/visible.hpp"
#include "ipc/json_depth.hpp"

namespace hb::client {
namespace {

constexpr std::array<std::pair<ResponseState, std::string_view>, 7> kStates = {{
    {ResponseState::Queued, "queued"},
    {ResponseState::Pending, "pending"},
    {ResponseState::Running, "running"},
    {ResponseState::Done, "done"},
    {ResponseState::Failed, "failed"},
    {ResponseState::Denied, "denied"},
    {ResponseState::Expired, "expired"},
}};

// A key that is absent or null gives nullopt; any other non-string is an
// error.
Result<std::optional<std::string>> optional_string(const nlohmann::json& object, const char* key) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return std::optional<std::string>{};
    if (!it->is_string()) return make_error(std::string("\"") + key + "\" is not a string");
    return std::optional<std::string>(it->get<std::string>());
}

}  // namespace

std::optional<std::chrono::sys_seconds> parse_utc(std::string_view text) {
    // 9999-99-99T99:99:99Z
    constexpr std::string_view kShape = "9999-99-99T99:99:99Z";
    if (text.size() != kShape.size()) return std::nullopt;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const bool digit = text[i] >= '0' && text[i] <= '9';
        if (kShape[i] == '9' ? !digit : text[i] != kShape[i]) return std::nullopt;
    }
    const auto number = [&](std::size_t at, std::size_t len) {
        int value = 0;
        for (std::size_t i = at; i < at + len; ++i) value = value * 10 + (text[i] - '0');
        return value;
    };
    const std::chrono::year_month_day date{std::chrono::year(number(0, 4)),
                                           std::chrono::month(static_cast<unsigned>(number(5, 2))),
                                           std::chrono::day(static_cast<unsigned>(number(8, 2)))};
    const int hours = number(11, 2), minutes = number(14, 2), seconds = number(17, 2);
    if (!date.ok() || hours > 23 || minutes > 59 || seconds > 60) return std::nullopt;
    return std::chrono::sys_days(date) + std::chrono::hours(hours) + std::chrono::minutes(minutes) +
           std::chrono::seconds(seconds);
}

bool is_terminal(ResponseState state) {
    return state == ResponseState::Done || state == ResponseState::Failed ||
           state == ResponseState::Denied || state == ResponseState::Expired;
}

std::string_view state_name(ResponseState state) {
    for (const auto& [value, name] : kStates)
        if (value == state) return name;
    return "unknown";
}

std::string shown_state(std::string_view text) {
    static constexpr std::array<std::string_view, kStates.size()> kNames = [] {
        std::array<std::string_view, kStates.size()> names{};
        for (std::size_t i = 0; i < kStates.size(); ++i) names[i] = kStates[i].second;
        return names;
    }();
    return display::word(text, kNames);
}

Result<Response> parse_response(std::string_view text) {
    // The agent can write anything into responses/ (ipc/json_depth.hpp).
    if (!json_depth_within(text)) return make_error("nested too deeply");
    nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object()) return make_error("not a JSON object");

    Response response;
    auto state = json.find("state");
    if (state == json.end() || !state->is_string()) return make_error("no \"state\" string");
    response.state_text = state->get<std::string>();
    for (const auto& [value, name] : kStates)
        if (name == response.state_text) response.state = value;

    auto reason = optional_string(json, "reason");
    if (!reason) return reason.error();
    response.reason = std::move(*reason);
    auto output = optional_string(json, "output");
    if (!output) return output.error();
    response.output = std::move(*output);

    // Lenient on purpose: a bad expires_at must not make a pending answer
    // unreadable (the client would then wait as if nothing took it up).
    auto expires = json.find("expires_at");
    if (expires != json.end() && expires->is_string()) {
        response.expires_at = parse_utc(expires->get<std::string>());
        if (response.expires_at) response.expires_at_text = expires->get<std::string>();
    }

    // Passed on as it is (to an MCP client's structuredContent); shown to a
    // person only through services_text, which makes it visible.
    if (auto services = json.find("services"); services != json.end() && services->is_array())
        response.services = *services;

    // Lenient like expires_at: a bad one must not make a done answer
    // unreadable; the caller only shows them (made visible).
    if (auto cursor = json.find("cursor"); cursor != json.end() && cursor->is_string())
        response.cursor = cursor->get<std::string>();
    if (auto more = json.find("more"); more != json.end() && more->is_boolean())
        response.more = more->get<bool>();

    auto exit_code = json.find("exit_code");
    if (exit_code != json.end() && !exit_code->is_null()) {
        // An unsigned beyond int64 would wrap in get<int64_t>().
        if (!exit_code->is_number_integer() ||
            (exit_code->is_number_unsigned() && exit_code->get<std::uint64_t>() > INT64_MAX))
            return make_error("\"exit_code\" is not an integer");
        response.exit_code = exit_code->get<std::int64_t>();
    }
    return response;
}

}  // namespace hb::client
