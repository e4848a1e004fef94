#include "client/request/visible.hpp"

#include <algorithm>

#include <cstdint>
#include <cstdio>

namespace hb::client {
namespace {

// One UTF-8 sequence at the start of `s`: its code point and length, or a
// length of 0 when it is not valid (overlong, surrogate, beyond U+10FFFF,
// truncated, a stray continuation byte).
struct Decoded {
    std::uint32_t cp = 0;
    std::size_t len = 0;
};

Decoded decode(std::string_view s) {
    const auto b0 = static_cast<unsigned char>(s[0]);
    if (b0 < 0x80) return {b0, 1};
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min = 0;
    if ((b0 & 0xe0) == 0xc0) {
        len = 2, cp = b0 & 0x1fu, min = 0x80;
    } else if ((b0 & 0xf0) == 0xe0) {
        len = 3, cp = b0 & 0x0fu, min = 0x800;
    } else if ((b0 & 0xf8) == 0xf0) {
        len = 4, cp = b0 & 0x07u, min = 0x10000;
    } else {
        return {};
    }
    if (s.size() < len) return {};
    for (std::size_t i = 1; i < len; ++i) {
        const auto b = static_cast<unsigned char>(s[i]);
        if ((b & 0xc0) != 0x80) return {};
        cp = (cp << 6) | (b & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {};
    return {cp, len};
}

// Characters a terminal draws as nothing, or that reorder the text around
// them (Trojan Source): bidirectional controls and marks, zero-width and
// invisible formatting characters, line/paragraph separators, tags.
bool is_invisible(std::uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9f) ||                      // C1 controls
           cp == 0xad || cp == 0x061c || cp == 0x180e ||      // soft hyphen, ALM, MVS
           (cp >= 0x200b && cp <= 0x200f) ||                  // ZWSP..RLM
           (cp >= 0x2028 && cp <= 0x202e) ||                  // LS, PS, LRE..RLO
           (cp >= 0x2060 && cp <= 0x2069) ||                  // WJ.., LRI..PDI
           cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||  // BOM, annotations
           (cp >= 0xe0000 && cp <= 0xe007f);                  // tags
}

void hex_byte(std::string& out, unsigned char c) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
}

void code_point(std::string& out, std::uint32_t cp, bool json) {
    char buf[16];
    if (cp <= 0xffff) {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
    } else if (json) {
        // JSON spells a code point above the BMP as a surrogate pair.
        const std::uint32_t v = cp - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xd800 + (v >> 10)),
                      static_cast<unsigned>(0xdc00 + (v & 0x3ff)));
    } else {
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(cp));
    }
    out += buf;
}

// Copies `text`, escaping what a person could not see: an ASCII byte goes
// through `ascii`, a byte that is not UTF-8 through `not_utf8`, an invisible
// code point becomes an escape (JSON's spelling when `json`).
template <typename Ascii, typename NotUtf8>
std::string escaped(std::string_view text, bool json, Ascii ascii, NotUtf8 not_utf8) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        const Decoded d = decode(text.substr(i));
        if (c < 0x80) {
            ascii(out, c);
        } else if (d.len == 0) {
            not_utf8(out, c);
        } else if (is_invisible(d.cp)) {
            code_point(out, d.cp, json);
        } else {
            out.append(text.substr(i, d.len));
        }
        i += d.len == 0 ? 1 : d.len;
    }
    return out;
}

std::string render(std::string_view text, bool multiline) {
    const auto ascii = [multiline](std::string& out, unsigned char c) {
        if (c == '\n' && multiline) {
            out += '\n';
        } else if (c == '\t') {
            out += multiline ? "\t" : "\\t";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c < 0x20 || c == 0x7f) {
            hex_byte(out, c);
        } else {
            out += static_cast<char>(c);
        }
    };
    return escaped(text, false, ascii, hex_byte);  // not UTF-8: the byte itself, as evidence
}

}  // namespace

std::string visible(std::string_view text) {
    return render(text, false);
}

std::string table_cell(std::string_view text, std::size_t width) {
    const std::string shown = visible(text);
    std::string out;
    for (std::size_t i = 0; i < shown.size(); ++i) {
        const bool run = shown[i] == ' ' && i > 0 && shown[i - 1] == ' ';
        out += run ? std::string("\\x20") : std::string(1, shown[i]);
    }
    if (width == 0 || out.size() <= width) return out;
    constexpr std::string_view kCut = "...";
    std::size_t keep = width > kCut.size() ? width - kCut.size() : 0;
    // Never inside a UTF-8 character.
    while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) --keep;
    return out.substr(0, keep) + std::string(kCut.substr(0, std::min(width, kCut.size())));
}

std::string visible_text(std::string_view text) {
    return render(text, true);
}

bool is_plain_text(std::string_view text) {
    return visible_text(text) == text;
}

std::string visible_json(std::string_view line) {
    const auto ascii = [](std::string& out, unsigned char c) {
        if (c < 0x20 || c == 0x7f) {
            code_point(out, c, true);
        } else {
            out += static_cast<char>(c);
        }
    };
    // JSON cannot carry a byte that is not UTF-8; the log file keeps it.
    return escaped(line, true, ascii, [](std::string& out, unsigned char) { out += "\\ufffd"; });
}

}  // namespace hb::client
