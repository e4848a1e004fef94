#include "client/request/request_message.hpp"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

#include "ipc/log_cursor.hpp"
#include "ipc/request_name.hpp"
#include "ipc/wire.hpp"

namespace hb::client {
namespace {

struct Stamps {
    std::string name;          // YYYYMMDDTHHMMSSZ
    std::string requested_at;  // YYYY-MM-DDTHH:MM:SSZ
};

Stamps utc_now() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    std::array<char, 64> name{};
    std::array<char, 64> rfc3339{};
    std::snprintf(name.data(), name.size(), "%04d%02d%02dT%02d%02d%02dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    std::snprintf(rfc3339.data(), rfc3339.size(), "%04d-%02d-%02dT%02d:%02d:%02dZ",
                  tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    return {name.data(), rfc3339.data()};
}

}  // namespace

Result<void> check_verb_shape(std::string_view verb) {
    if (verb.size() > kMaxVerbBytes) return make_error("VERB is longer than 64 bytes");
    if (!is_request_name_verb(verb) || verb.front() == '-')
        return make_error("VERB must be lowercase letters and dashes, starting with a letter");
    return {};
}

Result<void> check_arg_shape(std::string_view arg) {
    if (arg.size() > kMaxArgBytes) return make_error("ARG is longer than 64 bytes");
    if (!is_valid_arg_shape(arg)) return make_error("ARG must match ^[a-z][a-z0-9_-]*$");
    return {};
}

// The parser's own decoders (ipc/log_cursor.hpp): the client refuses
// exactly what the host would.
Result<void> check_lines(std::string_view lines) {
    if (!parse_lines(lines)) return make_error(std::string(reason_text(ReasonCode::BadLines)));
    return {};
}

Result<void> check_since(std::string_view since) {
    if (!parse_cursor(since)) return make_error(std::string(reason_text(ReasonCode::BadSince)));
    return {};
}

Result<RequestMessage> make_request(std::string_view verb, const std::optional<std::string>& arg,
                                    const LogWindow& window) {
    // Checked again here: what is not ASCII of these shapes never reaches the JSON writer.
    if (auto ok = check_verb_shape(verb); !ok) return ok.error();
    if (arg)
        if (auto ok = check_arg_shape(*arg); !ok) return ok.error();
    if (window.lines)
        if (auto ok = check_lines(*window.lines); !ok) return ok.error();
    if (window.since)
        if (auto ok = check_since(*window.since); !ok) return ok.error();
    std::array<unsigned char, 8> random{};
    ssize_t got = -1;
    do {
        got = getrandom(random.data(), random.size(), 0);
    } while (got < 0 && errno == EINTR);
    if (got != static_cast<ssize_t>(random.size()))
        return make_error("cannot read 8 random bytes from the kernel");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string nonce;
    for (unsigned char byte : random) {
        nonce += kHex[byte >> 4];
        nonce += kHex[byte & 0xf];
    }

    const Stamps now = utc_now();
    RequestMessage message;
    message.name = now.name + "-" + std::string(verb) + "-" + nonce + ".json";
    // The host's own name test (ipc/request_name.hpp) on what it will read.
    if (!is_request_name(message.name)) return make_error("VERB cannot name a request");
    // A JSON writer, in the spec's key order (docs/PROTOCOL.md, "Request files").
    nlohmann::ordered_json body;
    body["verb"] = verb;
    if (arg) body["arg"] = *arg;
    if (window.lines) body["lines"] = *window.lines;
    if (window.since) body["since"] = *window.since;
    body["requested_at"] = now.requested_at;
    message.body = body.dump() + "\n";
    return message;
}

}  // namespace hb::client
