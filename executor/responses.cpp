#include "executor/responses.hpp"

#include <nlohmann/json.hpp>

#include <ctime>

#include "ipc/enum_names.hpp"

namespace hb::exec {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool is_continuation(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

// Length of the valid UTF-8 sequence starting at bytes[i], or 0 when the
// byte there does not start one (overlong forms, surrogates and code points
// above U+10FFFF are invalid, as RFC 3629 says).
std::size_t valid_sequence_length(std::string_view bytes, std::size_t i) {
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(bytes[i + k]); };
    const unsigned char lead = at(0);
    if (lead < 0x80) return 1;
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) {
        len = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        len = 3;
        if (lead == 0xE0) lo = 0xA0;  // overlong
        if (lead == 0xED) hi = 0x9F;  // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        len = 4;
        if (lead == 0xF0) lo = 0x90;  // overlong
        if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return 0;
    }
    if (i + len > bytes.size()) return 0;
    if (at(1) < lo || at(1) > hi) return 0;
    for (std::size_t k = 2; k < len; ++k) {
        if (!is_continuation(at(k))) return 0;
    }
    return len;
}

nlohmann::ordered_json optional_string(const std::optional<std::string>& value) {
    return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string_view response_state_name(ResponseState state) {
    static constexpr auto kNames = dense_names<ResponseState::Pending>(
        {"queued", "running", "done", "failed", "denied", "expired", "pending"}, "denied");
    return name_of(kNames, state);
}

std::string utf8_tail(std::string_view bytes, std::size_t max_bytes) {
    if (bytes.size() > max_bytes) {
        bytes.remove_prefix(bytes.size() - max_bytes);
        // The cut may land inside a character: drop its orphaned tail bytes
        // (at most three) rather than report them as invalid.
        for (int k = 0; k < 3 && !bytes.empty() && is_continuation(bytes.front()); ++k) {
            bytes.remove_prefix(1);
        }
    }
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size();) {
        const std::size_t len = valid_sequence_length(bytes, i);
        if (len == 0) {
            out += kReplacement;
            ++i;
        } else {
            out.append(bytes.substr(i, len));
            i += len;
        }
    }
    return out;
}

std::string response_file_name(std::string_view request) {
    return std::string(request) + ".response.json";
}

std::string render_response(const Response& r) {
    nlohmann::ordered_json j;
    j["state"] = response_state_name(r.state);
    j["request"] = r.request;
    j["verb"] = r.verb ? nlohmann::ordered_json(verb_name(*r.verb)) : nullptr;
    j["arg"] = optional_string(r.arg);
    j["requested_at"] = r.requested_at ? nlohmann::ordered_json(format_utc(*r.requested_at))
                                       : nlohmann::ordered_json(nullptr);
    j["updated_at"] = format_utc(r.updated_at);
    j["exit_code"] = r.exit_code ? nlohmann::ordered_json(*r.exit_code) : nullptr;
    j["reason"] = optional_string(r.reason);
    j["output"] = r.output ? nlohmann::ordered_json(utf8_tail(*r.output)) : nullptr;
    j["log"] = optional_string(r.log);
    j["expires_at"] = r.expires_at ? nlohmann::ordered_json(format_utc(*r.expires_at))
                                   : nlohmann::ordered_json(nullptr);
    j["services"] = r.services ? *r.services : nlohmann::ordered_json(nullptr);
    j["cursor"] = optional_string(r.cursor);
    j["more"] = r.more ? nlohmann::ordered_json(*r.more) : nlohmann::ordered_json(nullptr);
    // Every string is valid UTF-8 by now (names are ASCII, output repaired);
    // `replace` only guards a reason text that somehow is not.
    return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

Result<void> ResponseWriter::publish(const Response& response) const {
    auto done = spool_.publish(SpoolDir::Responses, response_file_name(response.request),
                               render_response(response), Publish::Replace, mode_);
    if (!done) return done.error();
    return {};
}

Result<bool> ResponseWriter::acknowledge(const std::string& request, std::time_t now) const {
    Response queued;
    queued.state = ResponseState::Queued;
    queued.request = request;
    queued.updated_at = now;
    return spool_.publish(SpoolDir::Responses, response_file_name(request), render_response(queued),
                          Publish::NoReplace, mode_);
}

bool ResponseWriter::has_response(const std::string& request) const {
    return spool_.contains(SpoolDir::Responses, response_file_name(request));
}

}  // namespace hb::exec
