#include "display/visible.hpp"

#include <algorithm>

#include <cstdint>
#include <cstdio>

#include "display/marks.hpp"

namespace hb::display {
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

// Characters drawn as blank columns but not the ASCII space: a run of them
// lines up a forged table row (issue 45) or pushes a line off the screen.
bool is_blank(std::uint32_t cp) {
    return cp == 0xa0 || cp == 0x1680 ||                    // NBSP, Ogham space mark
           (cp >= 0x2000 && cp <= 0x200a) ||                // en quad..hair space
           cp == 0x202f || cp == 0x205f || cp == 0x3000 ||  // narrow NBSP, math, ideographic
           cp == 0x2800 ||                                  // braille pattern blank
           cp == 0x115f || cp == 0x1160 || cp == 0x3164 || cp == 0xffa0;  // Hangul fillers
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

enum class Mode {
    line,  // visible()
    text,  // visible_text(): newline and tab as they are
    cell,  // table_cell(): no run of blanks either
    json,  // visible_json(): JSON's escapes, no run shortened
};

// Appends escapes, a run of one escape shortened to it and its count.
class Writer {
  public:
    explicit Writer(std::string& out) : out_(out) {}
    void plain(std::string_view text) {
        flush();
        out_.append(text);
    }
    void escape(const std::string& e, bool runs) {
        if (runs && e == last_) {
            ++more_;
            return;
        }
        flush();
        out_ += e;
        last_ = e;
    }
    void flush() {
        if (more_ >= 3) {
            out_ += "{x" + std::to_string(more_ + 1) + "}";
        } else {
            for (std::size_t i = 0; i < more_; ++i) out_ += last_;
        }
        more_ = 0;
        last_.clear();
    }

  private:
    std::string& out_;
    std::string last_;      // the escape just written
    std::size_t more_ = 0;  // how many more of it came since
};

std::string render(std::string_view text, Mode mode) {
    const bool json = mode == Mode::json;
    std::string out;
    out.reserve(text.size());
    Writer writer(out);
    std::string e;
    bool after_blank = false;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        const Decoded d = decode(text.substr(i));
        const std::size_t len = d.len == 0 ? 1 : d.len;
        bool blank = false;
        e.clear();
        if (c == ' ') {
            blank = true;
            if (mode == Mode::cell && after_blank) e = "\\x20";
        } else if (c < 0x80) {
            const bool keep = mode == Mode::text && (c == '\n' || c == '\t');
            if (keep || (c >= 0x20 && c != 0x7f)) {
                // itself
            } else if (json) {
                code_point(e, c, true);
            } else if (c == '\t') {
                e = "\\t";
            } else if (c == '\n') {
                e = "\\n";
            } else if (c == '\r') {
                e = "\\r";
            } else {
                hex_byte(e, c);
            }
        } else if (d.len == 0) {
            // Not UTF-8: the byte itself, as evidence (JSON cannot carry it;
            // the log file keeps it).
            if (json) {
                e = "\\ufffd";
            } else {
                hex_byte(e, c);
            }
        } else if (is_invisible(d.cp) || is_blank(d.cp) || is_combining_mark(d.cp)) {
            blank = is_blank(d.cp);
            code_point(e, d.cp, json);
        }
        if (e.empty()) {
            writer.plain(text.substr(i, len));
        } else {
            writer.escape(e, !json);
        }
        after_blank = blank;
        i += len;
    }
    writer.flush();
    return out;
}

}  // namespace

std::string visible(std::string_view text) {
    return render(text, Mode::line);
}

std::string table_cell(std::string_view text, std::size_t width) {
    std::string out = render(text, Mode::cell);
    if (width == 0 || out.size() <= width) return out;
    constexpr std::string_view kCut = "...";
    std::size_t keep = width > kCut.size() ? width - kCut.size() : 0;
    // Never inside a UTF-8 character.
    while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) --keep;
    return out.substr(0, keep) + std::string(kCut.substr(0, std::min(width, kCut.size())));
}

std::string visible_text(std::string_view text) {
    return render(text, Mode::text);
}

bool is_plain_text(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        const Decoded d = decode(text.substr(i));
        if (d.len == 0 || is_invisible(d.cp)) return false;
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return false;
        i += d.len;
    }
    return true;
}

std::string visible_json(std::string_view line) {
    return render(line, Mode::json);
}

std::string word(std::string_view text, std::span<const std::string_view> known) {
    if (std::find(known.begin(), known.end(), text) != known.end()) return std::string(text);
    std::string shown;
    for (const char c : table_cell(text, 64)) {
        if (c == '"') {
            shown += "\\x22";
        } else {
            shown += c;
        }
    }
    return "?\"" + shown + "\"";
}

}  // namespace hb::display
