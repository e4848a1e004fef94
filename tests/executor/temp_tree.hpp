// A scratch directory under /tmp for one test, removed (without following
// symlinks) when the test ends. Unique per process, so `ctest -j` is safe.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace hb::test {

class TempTree {
  public:
    TempTree() {
        std::string tmpl = "/tmp/hb-decide-XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
        root_ = tmpl;
    }
    ~TempTree() {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }
    TempTree(const TempTree&) = delete;
    TempTree& operator=(const TempTree&) = delete;

    [[nodiscard]] const std::string& root() const { return root_; }
    [[nodiscard]] std::string path(const std::string& rel) const { return root_ + "/" + rel; }

    // Writes `content` to `rel` (parents created), replacing any file there.
    void write(const std::string& rel, const std::string& content) const {
        const std::filesystem::path p = path(rel);
        std::filesystem::create_directories(p.parent_path());
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        out << content;
        if (!out) throw std::runtime_error("cannot write " + p.string());
    }
    [[nodiscard]] std::string read(const std::string& rel) const {
        std::ifstream in(path(rel), std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

  private:
    std::string root_;
};

}  // namespace hb::test
