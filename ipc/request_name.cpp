#include "ipc/request_name.hpp"

namespace hb {
namespace {

constexpr std::string_view kSuffix = ".json";
constexpr std::size_t kStampLen = 16;  // YYYYMMDDTHHMMSSZ
constexpr std::size_t kNonceLen = 16;  // 8 bytes, lowercase hex

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f');
}
bool is_verb_char(char c) {
    return (c >= 'a' && c <= 'z') || c == '-';
}

}  // namespace

bool is_request_name_verb(std::string_view verb) {
    if (verb.empty()) return false;
    for (char c : verb) {
        if (!is_verb_char(c)) return false;
    }
    return true;
}

std::optional<std::string_view> request_name_verb(std::string_view name) {
    // stamp '-' verb(>=1) '-' nonce ".json"
    constexpr std::size_t kFixed = kStampLen + 1 + 1 + kNonceLen + kSuffix.size();
    if (name.size() < kFixed + 1) return std::nullopt;
    for (std::size_t i = 0; i < kStampLen; ++i) {
        const char c = name[i];
        const bool ok = (i == 8) ? c == 'T' : (i == 15) ? c == 'Z' : is_digit(c);
        if (!ok) return std::nullopt;
    }
    if (name[kStampLen] != '-') return std::nullopt;
    if (name.substr(name.size() - kSuffix.size()) != kSuffix) return std::nullopt;
    // The nonce has a fixed length, so the split is unambiguous even though
    // the verb may itself contain '-'.
    const std::size_t nonce_at = name.size() - kSuffix.size() - kNonceLen;
    for (std::size_t i = nonce_at; i < nonce_at + kNonceLen; ++i) {
        if (!is_hex(name[i])) return std::nullopt;
    }
    if (name[nonce_at - 1] != '-') return std::nullopt;
    const std::string_view verb = name.substr(kStampLen + 1, nonce_at - 1 - (kStampLen + 1));
    if (!is_request_name_verb(verb)) return std::nullopt;
    return verb;
}

bool is_request_name(std::string_view name) {
    return request_name_verb(name).has_value();
}

}  // namespace hb
