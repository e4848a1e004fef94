// The byte-level checks (BOM, NUL, UTF-8) run first, on the raw bytes; the
// grammar is nlohmann/json's, driven through its SAX interface so that we see
// every key (duplicates) and never build a DOM. nlohmann's SAX parser is
// iterative (its nesting stack is a heap bit-vector), and the body is at most
// 4096 bytes, so nesting depth is bounded by the size check that precedes
// this: a 2000-deep value costs O(size) and no stack.
#include "parser/body_json.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace hb::parser {
namespace {

using json = nlohmann::json;

bool is_json_ws(std::uint8_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above
// U+10FFFF.
bool is_valid_utf8(std::span<const std::uint8_t> s) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    while (i < n) {
        const std::uint8_t c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len;
        std::uint8_t lo = 0x80, hi = 0xBF;  // range of the first continuation byte
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c == 0xE0) {
            len = 3, lo = 0xA0;  // no overlong 3-byte forms
        } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
            len = 3;
        } else if (c == 0xED) {
            len = 3, hi = 0x9F;  // no UTF-16 surrogates
        } else if (c == 0xF0) {
            len = 4, lo = 0x90;  // no overlong 4-byte forms
        } else if (c >= 0xF1 && c <= 0xF3) {
            len = 4;
        } else if (c == 0xF4) {
            len = 4, hi = 0x8F;  // nothing above U+10FFFF
        } else {
            return false;  // continuation byte, C0/C1 (overlong), F5..FF
        }
        if (n - i < len) return false;
        if (s[i + 1] < lo || s[i + 1] > hi) return false;
        for (std::size_t k = 2; k < len; ++k) {
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return false;
        }
        i += len;
    }
    return true;
}

// SAX handler: records the top-level members and stops at the first sign of
// malformation. Refusals (unknown key, non-string value) are only recorded:
// the rest of the body must still be read, because a malformed body is
// quarantined whatever else is wrong with it.
class Handler {
  public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    bool null() { return scalar(nullptr); }
    bool boolean(bool) { return scalar(nullptr); }
    bool number_integer(number_integer_t) { return scalar(nullptr); }
    bool number_unsigned(number_unsigned_t) { return scalar(nullptr); }
    bool number_float(number_float_t, const string_t&) { return scalar(nullptr); }
    bool string(string_t& s) { return scalar(&s); }
    bool binary(binary_t&) { return scalar(nullptr); }  // never produced by JSON text

    bool start_object(std::size_t) {
        if (depth_ > 0) note_value(nullptr);
        ++depth_;
        keys_.emplace_back();
        return true;
    }
    bool key(string_t& k) {
        std::vector<std::string>& seen = keys_.back();
        if (std::find(seen.begin(), seen.end(), k) != seen.end()) {
            malformed_ = ReasonCode::DuplicateKey;
            return false;
        }
        seen.push_back(k);
        if (depth_ == 1) {
            slot_ = k == "verb"           ? &fields_.verb
                    : k == "arg"          ? &fields_.arg
                    : k == "requested_at" ? &fields_.requested_at
                    : k == "lines"        ? &fields_.lines
                    : k == "since"        ? &fields_.since
                                          : nullptr;
            if (slot_ == nullptr) fields_.unknown_key = true;
        }
        return true;
    }
    bool end_object() {
        keys_.pop_back();
        if (--depth_ == 0) object_done_ = true;
        return true;
    }
    bool start_array(std::size_t) {
        if (depth_ == 0) return not_an_object();
        note_value(nullptr);
        ++depth_;
        return true;
    }
    bool end_array() {
        --depth_;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
        // In strict mode nlohmann reports anything after the top-level value
        // as a parse error; once the object closed, that is trailing bytes.
        // Numbers beyond double range also land here: quarantined as
        // JsonSyntax, no client of ours writes one.
        if (malformed_ == ReasonCode::None) {
            malformed_ = object_done_ ? ReasonCode::TrailingBytes : ReasonCode::JsonSyntax;
        }
        return false;
    }

    [[nodiscard]] ReasonCode malformed() const { return malformed_; }
    BodyFields& fields() { return fields_; }

  private:
    bool scalar(string_t* s) {
        if (depth_ == 0) return not_an_object();
        note_value(s);
        return true;
    }
    // A value directly inside the top-level object (depth 1) is a member;
    // anything deeper belongs to a member that is already not a string.
    void note_value(string_t* s) {
        if (depth_ != 1) return;
        if (s == nullptr) {
            fields_.non_string_value = true;
        } else if (slot_ != nullptr) {
            *slot_ = std::move(*s);
        }
    }
    bool not_an_object() {
        malformed_ = ReasonCode::NotAnObject;
        return false;
    }

    int depth_ = 0;
    bool object_done_ = false;
    ReasonCode malformed_ = ReasonCode::None;
    std::optional<std::string>* slot_ = nullptr;  // member the current key names
    std::vector<std::vector<std::string>> keys_;  // keys seen, per open object
    BodyFields fields_;
};

}  // namespace

bool is_blank(std::span<const std::uint8_t> body) {
    return std::all_of(body.begin(), body.end(), is_json_ws);
}

BodyScan scan_body(std::span<const std::uint8_t> body) {
    BodyScan out;
    // nlohmann/json silently skips a leading BOM: refuse it first.
    if (body.size() >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF) {
        out.malformed = ReasonCode::ByteOrderMark;
        return out;
    }
    if (std::find(body.begin(), body.end(), 0) != body.end()) {
        out.malformed = ReasonCode::NulByte;
        return out;
    }
    if (!is_valid_utf8(body)) {
        out.malformed = ReasonCode::InvalidUtf8;
        return out;
    }

    // One final newline is allowed; nlohmann would also accept any other
    // trailing whitespace, which the protocol counts as trailing bytes.
    std::span<const std::uint8_t> text = body;
    if (!text.empty() && text.back() == '\n') text = text.first(text.size() - 1);
    const bool trailing_ws = !text.empty() && is_json_ws(text.back());

    Handler handler;
    const auto* first = reinterpret_cast<const char*>(text.data());
    const bool ok = json::sax_parse(first, first + text.size(), &handler,
                                    json::input_format_t::json, /*strict=*/true,
                                    /*ignore_comments=*/false);
    if (!ok) {
        // A handler refusal or a parse error always sets the reason; a bare
        // false without one would be a bug, and quarantine is the safe side.
        out.malformed =
            handler.malformed() == ReasonCode::None ? ReasonCode::JsonSyntax : handler.malformed();
        return out;
    }
    if (trailing_ws) {
        out.malformed = ReasonCode::TrailingBytes;
        return out;
    }
    out.fields = std::move(handler.fields());
    return out;
}

}  // namespace hb::parser
