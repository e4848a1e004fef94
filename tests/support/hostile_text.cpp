#include "tests/support/hostile_text.hpp"

#include <random>

#include "display/visible.hpp"

namespace hb::test {

std::string utf8_of(std::uint32_t cp) {
    std::string out;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
    return out;
}

std::string repeated(const std::string& piece, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += piece;
    return out;
}

// The generator: every kind of string the agent could use to act on, hide
// or line up text on a terminal, then seeded random mixes of them.
std::vector<std::string> hostile_strings(std::size_t mixes) {
    std::vector<std::string> pieces = {
        "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUvc2h8c2g=\x07",  // OSC 52 clipboard write
        "\x1b]0;pwned\x07",                                // window title
        "\r\x1b[2K\x1b[1Aall good",                        // CSI erase, cursor up
        "\x1b[2J\x1b[H",                                   // clear screen
        "\x1bP+q\x1b\\",                                   // DCS
        std::string("\0\x01\x07\x08\x0b\x0c\x0e\x1f\x7f", 9),
        utf8_of(0x9b) + "2J" + utf8_of(0x9d) + "0;t" + utf8_of(0x9c),  // C1 CSI, OSC, ST
        "\x9b"
        "2J\x9d",                                                 // C1 as raw bytes (not UTF-8)
        utf8_of(0x202e) + "denied :llac siht" + utf8_of(0x202c),  // RLO .. PDF
        utf8_of(0x2066) + utf8_of(0x2067) + utf8_of(0x2068) + utf8_of(0x2069) + utf8_of(0x200e) +
            utf8_of(0x200f) + utf8_of(0x202a) + utf8_of(0x202b) + utf8_of(0x202d),
        utf8_of(0x200b) + utf8_of(0x200c) + utf8_of(0x200d) + utf8_of(0xfeff),
        repeated(utf8_of(0x3000), 400),
        repeated(utf8_of(0xa0), 300),
        repeated(utf8_of(0x2800), 300),
        utf8_of(0x2000) + utf8_of(0x2003) + utf8_of(0x2007) + utf8_of(0x200a) + utf8_of(0x202f) +
            utf8_of(0x205f) + utf8_of(0x3164) + utf8_of(0x115f),
        "a" + repeated(utf8_of(0x0336), 40) + repeated(utf8_of(0x20dd), 3),  // combining marks
        "\xff\xfe\xc0\xaf\xed\xa0\x80\xe3\x80",                              // not UTF-8
        std::string(65536, 'x') + "\x1b[2K",                                 // a 64 KiB line
    };
    std::mt19937 random(45);
    const std::size_t base = pieces.size();
    for (std::size_t i = 0; i < mixes; ++i) {
        std::string mix = "t" + std::to_string(i) + " ";
        for (int k = 0; k < 4; ++k) {
            std::string piece = pieces[random() % base];
            if (piece.size() > 4096) piece = piece.substr(piece.size() - 64);
            mix += piece.substr(0, 1 + random() % piece.size());
            mix += random() % 2 ? " " : "";
        }
        pieces.push_back(mix);
    }
    return pieces;
}

Cp decode_at(const std::string& s, std::size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return {b0, 1};
    std::size_t len = (b0 & 0xe0) == 0xc0   ? 2
                      : (b0 & 0xf0) == 0xe0 ? 3
                      : (b0 & 0xf8) == 0xf0 ? 4
                                            : 0;
    if (len == 0 || i + len > s.size()) return {};
    std::uint32_t cp = b0 & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    for (std::size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xc0) != 0x80) return {};
        cp = (cp << 6) | (b & 0x3f);
    }
    return {cp, len};
}

namespace {

bool is_blank_or_hidden(std::uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0xa0 || cp == 0xad || cp == 0x115f || cp == 0x1160 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) ||
           (cp >= 0x205f && cp <= 0x2069) || cp == 0x2800 || cp == 0x3000 || cp == 0x3164 ||
           cp == 0xfeff || cp == 0xffa0 || (cp >= 0x0300 && cp <= 0x036f) ||
           (cp >= 0x20d0 && cp <= 0x20ff);
}

}  // namespace

// What a terminal received holds nothing it would act on or draw blank:
// no ESC or other C0 but its own line ends and tabs, no DEL, no C1, no
// byte that is not UTF-8, no bidi, zero-width, Unicode blank or combining
// mark. The first offence, or empty.
std::string offence(const std::string& shown) {
    for (std::size_t i = 0; i < shown.size();) {
        const auto c = static_cast<unsigned char>(shown[i]);
        const Cp d = decode_at(shown, i);
        if (d.len == 0) return "a byte that is not UTF-8 at " + std::to_string(i);
        if ((c < 0x20 && c != '\r' && c != '\n' && c != '\t') || c == 0x7f)
            return "raw control byte " + std::to_string(c) + " at " + std::to_string(i);
        if (is_blank_or_hidden(d.cp))
            return "raw U+" + display::visible(utf8_of(d.cp)) + " at " + std::to_string(i);
        i += d.len;
    }
    return "";
}

}  // namespace hb::test
