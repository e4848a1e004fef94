#include "tests/support/files.hpp"

#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace hb::test {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& tag, const std::string& base) {
    std::string tmpl = base + "/hb-" + tag + "-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path_ = tmpl;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
    // A command orphaned by a killed drain may still be appending to a file
    // here (tests/faults): try again while it does.
    for (int attempt = 0; ec == std::errc::directory_not_empty && attempt < 100; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        fs::remove_all(path_, ec);
    }
    if (!ec) return;
    // A directory the test made unwritable or unsearchable: give the owner
    // its bits back (directories only, links not followed) and try again.
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    for (auto it = fs::recursive_directory_iterator(path_, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code ignored;
        if (it->is_directory(ignored) && !it->is_symlink(ignored)) {
            fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ignored);
        }
    }
    fs::remove_all(path_, ec);
}

void TempDir::write(const std::string& rel, const std::string& content) const {
    const fs::path p = path(rel);
    fs::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string TempDir::read(const std::string& rel) const {
    return read_file(path(rel));
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void write_file(const std::string& path, const std::string& content, std::optional<mode_t> mode) {
    if (const fs::path parent = fs::path(path).parent_path(); !parent.empty()) {
        fs::create_directories(parent);
    }
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << content;
        if (!out) throw std::runtime_error("cannot write " + path);
    }
    if (mode) fs::permissions(path, static_cast<fs::perms>(*mode));
}

void append_file(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << content;
    if (!out) throw std::runtime_error("cannot append to " + path);
}

std::vector<std::string> files_under(const std::string& dir) {
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_directory()) files.push_back(fs::relative(it->path(), dir).string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::size_t lines_of(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

ReadWatch::ReadWatch(const std::string& path) : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ < 0 || ::inotify_add_watch(fd_, path.c_str(), IN_ACCESS) < 0)
        throw std::runtime_error("cannot watch " + path + " for reads");
}

ReadWatch::~ReadWatch() {
    if (fd_ >= 0) ::close(fd_);
}

bool ReadWatch::read_since() const {
    alignas(inotify_event) char buf[4096];
    return ::read(fd_, buf, sizeof buf) > 0;
}

}  // namespace hb::test
