#include "cli/request_message.hpp"

#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "ipc/log_cursor.hpp"
#include "ipc/wire.hpp"

namespace hb::cli {
namespace {

bool is_lower(char c) {
    return c >= 'a' && c <= 'z';
}
bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

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
    if (verb.empty() || !is_lower(verb.front()))
        return make_error("VERB must start with a lowercase letter");
    for (char c : verb)
        if (!is_lower(c) && c != '-')
            return make_error("VERB must be lowercase letters and dashes");
    if (verb.size() > kMaxVerbBytes) return make_error("VERB is longer than 64 bytes");
    return {};
}

Result<void> check_arg_shape(std::string_view arg) {
    if (arg.empty() || !is_lower(arg.front()))
        return make_error("ARG must start with a lowercase letter");
    for (char c : arg)
        if (!is_lower(c) && !is_digit(c) && c != '_' && c != '-')
            return make_error("ARG must match ^[a-z][a-z0-9_-]*$");
    if (arg.size() > kMaxArgBytes) return make_error("ARG is longer than 64 bytes");
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
    // Validated values need no escaping; the layout matches the shell client.
    message.body = "{\"verb\":\"" + std::string(verb) + "\"";
    if (arg) message.body += ",\"arg\":\"" + *arg + "\"";
    if (window.lines) message.body += ",\"lines\":\"" + *window.lines + "\"";
    if (window.since) message.body += ",\"since\":\"" + *window.since + "\"";
    message.body += ",\"requested_at\":\"" + now.requested_at + "\"}\n";
    return message;
}

}  // namespace hb::cli
