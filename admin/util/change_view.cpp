#include "admin/util/change_view.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "admin/util/fs_util.hpp"
#include "admin/util/process.hpp"
#include "admin/util/resolve_binary.hpp"
#include "common/sha256.hpp"
#include "display/visible.hpp"

namespace hb::admin {

using display::is_plain_text;
using display::visible;
using display::visible_text;

namespace {

constexpr std::size_t kRow = 16;
// Rows that repeat the ones before them, from how many on said in one line.
constexpr std::size_t kRowsToFold = 4;

// A private temp file holding one side of the diff; removed on scope exit.
class TempFile {
  public:
    static Result<TempFile> with(const std::string& content) {
        const char* base = std::getenv("TMPDIR");
        std::string templ = std::string(base != nullptr && base[0] == '/' ? base : "/tmp") +
                            "/hostbridge-diff-XXXXXX";
        int fd = ::mkstemp(templ.data());
        if (fd < 0) return make_error("cannot create a temporary file for the diff");
        ::close(fd);
        TempFile file(templ);
        auto wrote = write_file_atomic(templ, content, 0600);
        if (!wrote) return wrote.error();
        return file;
    }
    TempFile(TempFile&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    TempFile& operator=(TempFile&&) = delete;
    ~TempFile() {
        if (!path_.empty()) ::unlink(path_.c_str());
    }
    [[nodiscard]] const std::string& path() const { return path_; }

  private:
    explicit TempFile(std::string path) : path_(std::move(path)) {}
    std::string path_;
};

// A unified diff between two versions of a file, by /usr/bin/diff -u (the
// admin tool may run diff; the executor never does). nullopt content stands
// for an absent file (diffed as /dev/null). --text: every file is diffed
// line by line, never "Binary files differ". The result is raw bytes.
Result<std::string> unified_diff(const std::string& old_label,
                                 const std::optional<std::string>& old_content,
                                 const std::string& new_label,
                                 const std::optional<std::string>& new_content) {
    std::string diff = "/usr/bin/diff";
    if (::access(diff.c_str(), X_OK) != 0) {
        auto found = find_on_path("diff", resolve_env_from_process().path_var);
        if (!found) return make_error("diff is not installed, so the change cannot be shown");
        diff = *found;
    }
    std::optional<TempFile> old_file;
    std::optional<TempFile> new_file;
    if (old_content) {
        auto made = TempFile::with(*old_content);
        if (!made) return made.error();
        old_file.emplace(std::move(*made));
    }
    if (new_content) {
        auto made = TempFile::with(*new_content);
        if (!made) return made.error();
        new_file.emplace(std::move(*made));
    }
    RunOptions options;
    options.timeout = std::chrono::seconds(30);
    options.env_set = {"LC_ALL=C"};
    auto ran = run_process(
        {diff, "-u", "--text", "--label", old_label, "--label", new_label,
         old_file ? old_file->path() : "/dev/null", new_file ? new_file->path() : "/dev/null"},
        options);
    if (!ran) return ran.error();
    // diff exits 0 (same), 1 (different), 2 (trouble).
    if (ran->timed_out || ran->exit_code < 0 || ran->exit_code > 1) {
        return make_error("diff failed: " + ran->err.substr(0, ran->err.find('\n')));
    }
    return ran->out;
}

std::string offset_text(std::size_t offset) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%zx", offset);
    return buf;
}

// Every changed byte of a non-text file: the region between the common
// prefix and the common suffix, on each side.
std::string changed_region(const std::string& old_label, const std::string& old_data,
                           const std::string& new_label, const std::string& new_data) {
    const std::size_t shorter = std::min(old_data.size(), new_data.size());
    std::size_t prefix = 0;
    while (prefix < shorter && old_data[prefix] == new_data[prefix]) ++prefix;
    std::size_t suffix = 0;
    while (suffix < shorter - prefix &&
           old_data[old_data.size() - 1 - suffix] == new_data[new_data.size() - 1 - suffix]) {
        ++suffix;
    }
    const std::size_t old_end = old_data.size() - suffix;
    const std::size_t new_end = new_data.size() - suffix;
    std::string out;
    auto side = [&](char sign, const std::string& label, const std::string& data, std::size_t end) {
        if (end == prefix) {
            out += std::string(1, sign) + " (" + visible(label) +
                   ": no bytes here; the other side " + (sign == '-' ? "inserts" : "removes") +
                   " bytes at offset " + offset_text(prefix) + ")\n";
            return;
        }
        out += std::string(1, sign) + " " + visible(label) + ": bytes " + offset_text(prefix) +
               " to " + offset_text(end - 1) + " (" + std::to_string(end - prefix) + " changed)\n";
        out += hex_dump(sign, data, prefix, end);
    };
    side('-', old_label, old_data, old_end);
    side('+', new_label, new_data, new_end);
    return out;
}

}  // namespace

std::string size_and_sha256(const std::optional<std::string>& content) {
    if (!content) return "absent";
    return std::to_string(content->size()) + " bytes, sha256 " + common::sha256_hex(*content);
}

std::string hex_dump(char sign, const std::string& data, std::size_t begin, std::size_t end) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    end = std::min(end, data.size());
    const std::size_t first = begin - begin % kRow;
    // How many whole rows from `row` on repeat the `period` rows before
    // them, byte for byte.
    const auto repeating = [&](std::size_t row, std::size_t period) {
        std::size_t rows = 0;
        while (row >= first + period * kRow && row + kRow <= end &&
               data.compare(row, kRow, data, row - period * kRow, kRow) == 0) {
            ++rows;
            row += kRow;
        }
        return rows;
    };
    for (std::size_t row = first; row < end; row += kRow) {
        // A flood (30,000 U+3000 are 5,625 rows) is said in one line, as
        // hexdump's `*` does, so the rows around it stay on the screen;
        // which bytes those rows hold is still exact.
        std::size_t period = 1;
        while (period <= 4 && repeating(row, period) < kRowsToFold) ++period;
        if (period <= 4) {
            const std::size_t rows = repeating(row, period);
            char line[128];
            std::snprintf(line, sizeof line,
                          "%c *         (%zu rows, to %08zx, repeat the %zu row%s above them)\n",
                          sign, rows, row + rows * kRow - 1, period, period == 1 ? "" : "s");
            out += line;
            row += (rows - 1) * kRow;
            continue;
        }
        char head[32];
        std::snprintf(head, sizeof head, "%c %08zx  ", sign, row);
        out += head;
        std::string ascii;
        for (std::size_t i = row; i < row + kRow; ++i) {
            if (i == row + kRow / 2) out += ' ';
            if (i < data.size()) {
                const auto c = static_cast<unsigned char>(data[i]);
                out += kHex[c >> 4];
                out += kHex[c & 0xf];
                out += ' ';
                // Only printable ASCII stands for itself on the right.
                ascii += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.';
            } else {
                out += "   ";
            }
        }
        out += " |" + ascii + "|\n";
    }
    return out;
}

Result<std::string> render_change(const std::string& old_label,
                                  const std::optional<std::string>& old_content,
                                  const std::string& new_label,
                                  const std::optional<std::string>& new_content) {
    std::string out;
    const std::size_t width = std::max(old_label.size(), new_label.size());
    auto size_line = [&](const std::string& label, const std::optional<std::string>& content) {
        out += "  " + visible(label) + ":" + std::string(width - label.size() + 1, ' ') +
               size_and_sha256(content) + "\n";
    };
    size_line(old_label, old_content);
    size_line(new_label, new_content);
    // diff --text: a diff of every byte (then made visible), never
    // "Binary files differ".
    auto diff = unified_diff(old_label, old_content, new_label, new_content);
    if (!diff) return diff.error();
    out += visible_text(*diff);
    if (!out.empty() && out.back() != '\n') out += "\n";
    const bool old_plain = !old_content || is_plain_text(*old_content);
    const bool new_plain = !new_content || is_plain_text(*new_content);
    if (!old_plain || !new_plain) {
        out +=
            "  not plain text (NUL or other control bytes, invalid UTF-8, bidirectional or "
            "zero-width characters): every changed byte in hex\n";
        out += changed_region(old_label, old_content.value_or(""), new_label,
                              new_content.value_or(""));
    }
    return out;
}

Result<void> show_change(const std::string& rel, const std::string& what,
                         const std::optional<std::string>& approved,
                         const std::optional<std::string>& now) {
    auto shown = render_change("approved/" + rel, approved, rel, now);
    if (!shown) return shown.error();
    std::cout << "=== " << visible(rel) << ": " << visible(what) << "\n" << *shown;
    return {};
}

}  // namespace hb::admin
