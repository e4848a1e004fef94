// Nothing in executor/ or common/ builds a shell string or hands one to a shell: no
// system(), no popen(), no "sh", no /bin/sh, no "-c" anywhere in its code
// (comments may talk about them). The sources are read from the tree this
// test was built from (HB_SOURCE_DIR).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// `source` with every comment blanked out (newlines kept, so line numbers
// stay right); string and character literals, raw strings included, are
// kept as they are.
std::string strip_comments(const std::string& source) {
    std::string out = source;
    enum class State { Code, Line, Block, String, Char, Raw } state = State::Code;
    std::string raw_end;  // )delim" of the raw string being read
    for (std::size_t i = 0; i < out.size(); ++i) {
        const char c = out[i];
        const char next = i + 1 < out.size() ? out[i + 1] : '\0';
        switch (state) {
            case State::Code:
                if (c == '/' && next == '/') {
                    state = State::Line;
                    out[i] = ' ';
                } else if (c == '/' && next == '*') {
                    state = State::Block;
                    out[i] = out[i + 1] = ' ';
                    ++i;
                } else if (c == 'R' && next == '"' &&
                           (i == 0 || !(std::isalnum(static_cast<unsigned char>(out[i - 1])) ||
                                        out[i - 1] == '_'))) {
                    const auto open = out.find('(', i + 2);
                    if (open == std::string::npos) return out;
                    raw_end = ")" + out.substr(i + 2, open - i - 2) + "\"";
                    state = State::Raw;
                    i = open;
                } else if (c == '"') {
                    state = State::String;
                } else if (c == '\'') {
                    state = State::Char;
                }
                break;
            case State::Line:
                if (c == '\n') {
                    state = State::Code;
                } else {
                    out[i] = ' ';
                }
                break;
            case State::Block:
                if (c == '*' && next == '/') {
                    out[i] = out[i + 1] = ' ';
                    ++i;
                    state = State::Code;
                } else if (c != '\n') {
                    out[i] = ' ';
                }
                break;
            case State::String:
            case State::Char:
                if (c == '\\') {
                    ++i;
                } else if ((state == State::String && c == '"') ||
                           (state == State::Char && c == '\'')) {
                    state = State::Code;
                }
                break;
            case State::Raw:
                if (out.compare(i, raw_end.size(), raw_end) == 0) {
                    i += raw_end.size() - 1;
                    state = State::Code;
                }
                break;
        }
    }
    return out;
}

bool identifier_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Every forbidden pattern in `code` (comments already stripped), as
// "line N: pattern". A call is the bare name, blanks, then "(": it must not
// be part of a longer identifier (filesystem( is not system().
std::vector<std::string> forbidden_in(const std::string& code) {
    const auto line_of = [&](std::size_t at) {
        return std::to_string(1 +
                              std::count(code.begin(), code.begin() + static_cast<long>(at), '\n'));
    };
    std::vector<std::string> hits;
    for (const std::string name : {"system", "popen"}) {
        for (auto at = code.find(name); at != std::string::npos; at = code.find(name, at + 1)) {
            if (at > 0 && identifier_char(code[at - 1])) continue;
            auto after = at + name.size();
            while (after < code.size() && std::isspace(static_cast<unsigned char>(code[after])))
                ++after;
            if (after < code.size() && code[after] == '(')
                hits.push_back("line " + line_of(at) + ": " + name + "(");
        }
    }
    for (const std::string text : {"\"sh\"", "/bin/sh", "\"-c\""}) {
        for (auto at = code.find(text); at != std::string::npos; at = code.find(text, at + 1)) {
            hits.push_back("line " + line_of(at) + ": " + text);
        }
    }
    return hits;
}

std::vector<std::string> scan(const std::string& source) {
    return forbidden_in(strip_comments(source));
}

TEST(ExecutorNoShell, TheScannerFindsWhatItMustAndOnlyThat) {
    EXPECT_EQ(scan("int main() { return std::system(\"ls\"); }").size(), 1U);
    EXPECT_EQ(scan("void f() { system (x); popen\n(cmd, \"r\"); }").size(), 2U);
    EXPECT_EQ(scan("auto p = ::popen(c, \"r\");").size(), 1U);
    EXPECT_EQ(scan("execl(\"/bin/sh\", \"sh\", \"-c\", cmd, nullptr);").size(), 3U);
    EXPECT_EQ(scan("const char* s = R\"x(/bin/sh)x\";").size(), 1U);
    EXPECT_EQ(scan("Argv a{\"/usr/bin/env\", \"sh\"};").size(), 1U);
    // Not code: comments, and identifiers that merely end in "system".
    EXPECT_TRUE(scan("// no system(), no popen(), no sh -c \"sh\" /bin/sh\nint x;").empty());
    EXPECT_TRUE(scan("/* system(\"x\") */ int y;").empty());
    EXPECT_TRUE(scan("std::filesystem::path p; ecosystem(1); auto q = filesystem(2);").empty());
    EXPECT_TRUE(scan("const char* url = \"http://x\"; // system(\n").empty());
    EXPECT_TRUE(scan("char c = '\"'; int z = 0; // \"sh\"").empty());
    // A comment opener inside a string is not a comment.
    EXPECT_EQ(scan("const char* s = \"// \"; system(s);").size(), 1U);
    EXPECT_EQ(strip_comments("a // b\nc /* d\ne */ f").find('b'), std::string::npos);
}

// common/ is linked into the executor too (common/CMakeLists.txt).
TEST(ExecutorNoShell, NothingInExecutorBuildsOrRunsAShellString) {
    std::size_t scanned = 0;
    bool saw_runner = false;
    for (const char* part : {"executor", "common"}) {
        const fs::path dir = fs::path(HB_SOURCE_DIR) / part;
        ASSERT_TRUE(fs::is_directory(dir)) << dir;
        for (const auto& entry : fs::recursive_directory_iterator(dir)) {
            if (!entry.is_regular_file()) continue;
            const std::string ext = entry.path().extension().string();
            if (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".cc" && ext != ".inc")
                continue;
            std::ifstream in(entry.path(), std::ios::binary);
            std::stringstream text;
            text << in.rdbuf();
            for (const auto& hit : scan(text.str()))
                ADD_FAILURE() << entry.path().string() << " " << hit;
            ++scanned;
            if (entry.path().filename() == "runner.cpp") saw_runner = true;
        }
    }
    // Guard against scanning the wrong tree and passing on nothing.
    EXPECT_GE(scanned, 30U);
    EXPECT_TRUE(saw_runner);
}

}  // namespace
