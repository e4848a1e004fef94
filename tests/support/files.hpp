// Files and scratch directories for tests: one temporary directory type and
// one way to read and write a whole file, for every area (docs/TESTING.md,
// "Layout").
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace hb::test {

// A fresh directory, /tmp/hb-<tag>-XXXXXX by default, removed with all it
// holds (links not followed) when it goes out of scope. Unique per
// process, so `ctest -j` is safe. A test that took its owner's write or
// search bit away (a read-only state dir) still leaves nothing behind.
class TempDir {
  public:
    explicit TempDir(const std::string& tag = "test", const std::string& base = "/tmp");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::string& path() const { return path_; }
    [[nodiscard]] std::string path(const std::string& rel) const { return path_ + "/" + rel; }
    // Writes `content` to `rel` (parent directories created), replacing it.
    void write(const std::string& rel, const std::string& content) const;
    [[nodiscard]] std::string read(const std::string& rel) const;

  private:
    std::string path_;
};

// The whole file; empty when it cannot be read (a test then fails on what
// it expected to find there).
std::string read_file(const std::string& path);
// Creates or truncates `path` with `content`, and the directories above
// it that are missing; throws on failure. A file that existed keeps its
// mode (a stack script stays executable) unless `mode` is given.
void write_file(const std::string& path, const std::string& content,
                std::optional<mode_t> mode = std::nullopt);
void append_file(const std::string& path, const std::string& content);
// Every regular file below `dir`, relative to it, sorted.
std::vector<std::string> files_under(const std::string& dir);
// How many lines `text` ends ('\n' count).
std::size_t lines_of(const std::string& text);
// The lines of `text`, without their '\n'; a last line without one too.
std::vector<std::string> split_lines(const std::string& text);

// Whether anything read `path` (a read(2), sendfile, mmap fault... the
// kernel's IN_ACCESS) between its construction and read_since(): a test of
// a file that must be looked at but never read. Throws when it cannot watch.
class ReadWatch {
  public:
    explicit ReadWatch(const std::string& path);
    ~ReadWatch();
    ReadWatch(const ReadWatch&) = delete;
    ReadWatch& operator=(const ReadWatch&) = delete;
    [[nodiscard]] bool read_since() const;

  private:
    int fd_ = -1;
};

}  // namespace hb::test
