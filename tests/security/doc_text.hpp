// Reading the security documents in tests: a file's text, and the lines
// between two markers, so a test can hold a table in a document to the code.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/support/files.hpp"

namespace hb::test {

inline std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The text after the line that starts with `begin` up to the start of the
// next line that starts with `end`; empty when either is missing.
inline std::string between_markers(const std::string& text, const std::string& begin,
                                   const std::string& end) {
    const auto b = text.find("\n" + begin);
    if (b == std::string::npos) return {};
    const auto start = text.find('\n', b + 1);
    if (start == std::string::npos) return {};
    const auto e = text.find("\n" + end, start);
    if (e == std::string::npos) return {};
    return text.substr(start + 1, e + 1 - (start + 1));
}

// The cells of a Markdown table row ("| a | b |" -> {"a", "b"}), trimmed;
// empty for a line that is not a row. A `|` inside backticks is text, so a
// cell can show `RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS`; so is an escaped `\|`.
inline std::vector<std::string> table_cells(const std::string& line) {
    std::vector<std::string> cells;
    if (line.size() < 2 || line.front() != '|') return cells;
    std::string cell;
    bool code = false;
    for (std::size_t i = 1; i < line.size(); ++i) {
        const char c = line[i];
        if (c == '`') code = !code;
        if (c == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
            cell += '|';
            ++i;
            continue;
        }
        if (c == '|' && !code) {
            const auto first = cell.find_first_not_of(' ');
            const auto last = cell.find_last_not_of(' ');
            cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
            cell.clear();
            continue;
        }
        cell += c;
    }
    return cells;
}

// Every `backticked` word of `text`, in order.
inline std::vector<std::string> backticked(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    for (;;) {
        const auto open = text.find('`', pos);
        if (open == std::string::npos) break;
        const auto close = text.find('`', open + 1);
        if (close == std::string::npos) break;
        out.push_back(text.substr(open + 1, close - open - 1));
        pos = close + 1;
    }
    return out;
}

}  // namespace hb::test
