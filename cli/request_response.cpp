#include "cli/request_response.hpp"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

namespace hb::cli {
namespace {

constexpr std::array<std::pair<ResponseState, std::string_view>, 6> kStates = {{
    {ResponseState::Queued, "queued"},
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

bool is_terminal(ResponseState state) {
    return state == ResponseState::Done || state == ResponseState::Failed ||
           state == ResponseState::Denied || state == ResponseState::Expired;
}

std::string_view state_name(ResponseState state) {
    for (const auto& [value, name] : kStates)
        if (value == state) return name;
    return "unknown";
}

Result<Response> parse_response(std::string_view text) {
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

}  // namespace hb::cli
