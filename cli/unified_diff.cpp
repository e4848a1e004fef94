#include "cli/unified_diff.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>

#include "cli/fs_util.hpp"
#include "cli/process.hpp"
#include "cli/resolve_binary.hpp"

namespace hb::cli {
namespace {

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

}  // namespace

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

}  // namespace hb::cli
