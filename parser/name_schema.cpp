// Hand-rolled rather than std::regex: the schema is fixed-width at both ends,
// and std::regex is slow and allocates on every match.
#include "parser/name_schema.hpp"

#include <algorithm>

namespace hb::parser {
namespace {

constexpr std::size_t kTsLen = 16;     // YYYYMMDDTHHMMSSZ
constexpr std::size_t kNonceLen = 16;  // 8 bytes, lowercase hex
constexpr std::string_view kSuffix = ".json";

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}
bool is_lower_hex(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f');
}
bool is_verb_char(char c) {
    return (c >= 'a' && c <= 'z') || c == '-';
}

}  // namespace

std::optional<std::string_view> request_name_verb(std::string_view name) {
    // ts '-' verb(1+) '-' nonce suffix
    constexpr std::size_t kFixed = kTsLen + 1 + 1 + kNonceLen + kSuffix.size();
    if (name.size() < kFixed + 1) return std::nullopt;

    const std::string_view ts = name.substr(0, kTsLen);
    for (std::size_t i = 0; i < kTsLen; ++i) {
        const bool ok = i == 8 ? ts[i] == 'T' : i == 15 ? ts[i] == 'Z' : is_digit(ts[i]);
        if (!ok) return std::nullopt;
    }
    if (name[kTsLen] != '-') return std::nullopt;
    if (name.substr(name.size() - kSuffix.size()) != kSuffix) return std::nullopt;
    const std::size_t nonce_at = name.size() - kSuffix.size() - kNonceLen;
    const std::string_view nonce = name.substr(nonce_at, kNonceLen);
    if (!std::all_of(nonce.begin(), nonce.end(), is_lower_hex)) return std::nullopt;
    if (name[nonce_at - 1] != '-') return std::nullopt;

    const std::string_view verb = name.substr(kTsLen + 1, nonce_at - 1 - (kTsLen + 1));
    if (verb.empty() || !std::all_of(verb.begin(), verb.end(), is_verb_char)) {
        return std::nullopt;
    }
    return verb;
}

}  // namespace hb::parser
