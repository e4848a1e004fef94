#include "engines/podman/base_triggers.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "engines/podman/engine_relay.hpp"
#include "engines/podman/image_config_client.hpp"
#include "engines/podman/rows.hpp"
#include "executor/runner.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

using Clock = std::chrono::steady_clock;

// `images -a --no-trunc --format {{.ID}}` prints "sha256:" and 64 hex, 72
// bytes a line; a store this large is refused, not read in part.
constexpr std::size_t kMaxImages = 20000;
constexpr std::size_t kLine = 72;
constexpr std::size_t kMaxTriggers = 999999;  // what "{{len ...}}" may print
constexpr const char* kNoTriggersTemp = ".images-without-triggers.tmp";

// The image list: each line "sha256:" + 64 lowercase hex, sorted, unique.
Result<std::vector<std::string>> image_ids(const std::string& text) {
    if (text.size() > kMaxImages * kLine) {
        return make_error("the engine's store holds more than " + std::to_string(kMaxImages) +
                          " images; the bridge checks at most that many for ONBUILD triggers");
    }
    std::vector<std::string> ids;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = text.find('\n', at);
        if (end == std::string::npos) return make_error("the engine's image list is cut short");
        const std::string_view line = std::string_view(text).substr(at, end - at);
        if (!line.starts_with("sha256:") || !sys::is_lower_hex(line.substr(7), 64))
            return make_error("the engine's image list holds a line that is not an image id");
        ids.emplace_back(line.substr(7));
        at = end + 1;
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

// The ids checked before. Anything out of shape (a crash mid-write cannot
// leave one: it is renamed into place) counts as nothing checked.
std::set<std::string> read_checked(int builds_fd) {
    UniqueFd fd(
        ::openat(builds_fd, kNoTriggersFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    std::string text;
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
        !sys::read_all(fd.get(), text, kMaxImages * 65)) {
        return {};
    }
    std::set<std::string> ids;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = text.find('\n', at);
        if (end == std::string::npos || end - at != 64 ||
            !sys::is_lower_hex(std::string_view(text).substr(at, 64), 64))
            return {};
        ids.insert(text.substr(at, 64));
        at = end + 1;
    }
    return ids;
}

// Only ids still in the store are kept, so the file never outgrows it. A
// failed write costs the next build its questions again, nothing more.
void write_checked(int builds_fd, const std::vector<std::string>& ids) {
    std::string text;
    for (const std::string& id : ids) text += id + "\n";
    UniqueFd fd(::openat(builds_fd, kNoTriggersTemp,
                         O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd || !sys::write_all(fd.get(), text)) return;
    fd.reset();
    if (::renameat(builds_fd, kNoTriggersTemp, builds_fd, kNoTriggersFile) != 0)
        ::unlinkat(builds_fd, kNoTriggersTemp, 0);
}

// What a failed query wrote to stderr, for the sentence: its first line,
// short, control characters made visible.
std::string first_words(int err_fd) {
    auto text = read_scratch(err_fd, 4096);
    if (!text || text->empty()) return {};
    std::string line = text->substr(0, std::min(text->find('\n'), std::size_t{200}));
    return line.empty() ? std::string() : " (" + sys::escape_unprintable(line) + ")";
}

// Runs one query row: the scratch file of its stdout, or a sentence: `what`,
// how the row ended, its stderr's first words.
Result<UniqueFd> run_row(const Config& config, const Argv& row, const std::string& what,
                         Clock::time_point deadline) {
    auto out = scratch_file("hostbridge-triggers");
    auto err = scratch_file("hostbridge-triggers-err");
    if (!out) return out.error();
    if (!err) return err.error();
    const RunResult r = run_query(config, row, out->get(), err->get(), time_left(deadline));
    if (!r.succeeded()) return make_error(what + " " + run_failure(r) + first_words(err->get()));
    return std::move(*out);
}

// An engine user's image (docs/ENGINE-USER.md): saved through the socket
// as one tar in the builds dir, walked to its config in the sandbox, the
// copy removed. The tar is never extracted: not by the client, not by us.
Result<std::size_t> count_saved_triggers(const Config& config, int builds_fd, const std::string& id,
                                         Clock::time_point deadline) {
    const std::optional<Argv> row = trigger_save(config, id);
    if (!row) return make_error("no save row for image " + id);
    if (::unlinkat(builds_fd, kImageSaveName, 0) != 0 && errno != ENOENT)
        return make_error(sys::errno_text("cannot remove the last saved image"));
    struct Cleanup {
        int fd;
        ~Cleanup() { ::unlinkat(fd, kImageSaveName, 0); }
    } cleanup{builds_fd};
    auto saved =
        run_row(config, *row, "saving image " + id.substr(0, 12) + " to read its ONBUILD triggers",
                deadline);
    if (!saved) return saved.error();
    UniqueFd file(::openat(builds_fd, kImageSaveName,
                           O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct stat st {};
    if (!file || ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return make_error("image " + id.substr(0, 12) + ": the save wrote no regular file");
    auto n = image_triggers_in_sandbox(config.parser, file.get());
    if (!n) return make_error("image " + id.substr(0, 12) + " as saved: " + n.error().message);
    return *n;
}

Result<std::size_t> count_triggers(const Config& config, int builds_fd, const std::string& id,
                                   Clock::time_point deadline) {
    if (config.engine && !docker_compose(config.backend))
        return count_saved_triggers(config, builds_fd, id, deadline);
    const std::optional<Argv> row = trigger_count(config, id);
    if (!row) return make_error("no trigger row for image " + id);
    auto out = run_row(config, *row, "reading the ONBUILD triggers of image " + id.substr(0, 12),
                       deadline);
    if (!out) return out.error();
    auto text = read_scratch(out->get(), 64);
    if (!text) return text.error();
    if (!text->empty() && text->back() == '\n') text->pop_back();
    if (text->empty() || text->size() > 6 ||
        !std::all_of(text->begin(), text->end(), [](char c) { return c >= '0' && c <= '9'; }))
        return make_error("the answer for image " + id.substr(0, 12) +
                          " is not a count of ONBUILD triggers");
    const std::size_t n = std::stoul(*text);
    if (n > kMaxTriggers) return make_error("an out-of-range trigger count");
    return n;
}

}  // namespace

Result<std::vector<std::string>> present_images(const Config& config,
                                                const std::vector<std::string>& refs) {
    const auto deadline = Clock::now() + kTriggerCheckTimeout;
    std::vector<std::string> present;
    auto out = scratch_file("hostbridge-present");
    if (!out) return out.error();
    for (const std::string& ref : refs) {
        // Not one a FROM may name (the screen refuses it) whatever failed.
        if (run_query(config, image_present(config, ref), out->get(), out->get(),
                      time_left(deadline))
                .succeeded())
            present.push_back(ref);
    }
    return present;
}

Result<std::size_t> check_base_triggers(const Config& config, int builds_fd) {
    if (!config.build) return make_error("bridge.json records no builds");
    // buildah has no remote mode: with an engine user the configs are read
    // from the images it saves (count_saved_triggers).
    if (!config.engine && config.build->buildah.empty()) {
        return make_error(
            "bridge.json records no buildah, which alone shows a base image's ONBUILD "
            "triggers (podman 4.3 does not): install buildah, then `hostbridge upgrade`");
    }
    const auto deadline = Clock::now() + kTriggerCheckTimeout;
    auto out = run_row(config, trigger_images(config), "listing the engine's images", deadline);
    if (!out) return out.error();
    auto text = read_scratch(out->get(), kMaxImages * kLine + 1);
    if (!text) return text.error();
    auto ids = image_ids(*text);
    if (!ids) return ids.error();

    const std::set<std::string> before = read_checked(builds_fd);
    std::vector<std::string> clean;
    std::size_t asked = 0;
    // On a refusal, what is known stays known: the ids already asked about
    // and those checked before.
    const auto keep_known = [&](std::size_t from) {
        for (std::size_t j = from; j < ids->size(); ++j)
            if (before.count((*ids)[j]) != 0) clean.push_back((*ids)[j]);
        write_checked(builds_fd, clean);
    };
    for (std::size_t i = 0; i < ids->size(); ++i) {
        const std::string& id = (*ids)[i];
        if (before.count(id) == 0) {
            auto n = count_triggers(config, builds_fd, id, deadline);
            ++asked;
            if (!n) {
                keep_known(i + 1);
                return n.error();
            }
            if (*n != 0) {
                keep_known(i + 1);
                const std::string tool = docker_compose(config.backend) ? "docker" : "podman";
                return make_error(
                    "image " + id.substr(0, 12) + " on this host has " + std::to_string(*n) +
                    " ONBUILD trigger" + (*n == 1 ? "" : "s") +
                    ", which the builder would run unscreened in a build whose FROM names it; no "
                    "build runs while it is here (look: " +
                    tool + " image inspect " + id.substr(0, 12) + "; remove: " + tool + " rmi " +
                    id.substr(0, 12) + "; docs/BUILDS.md)");
            }
        }
        clean.push_back(id);
    }
    if (asked != 0 || clean.size() != before.size()) write_checked(builds_fd, clean);
    return asked;
}

}  // namespace hb::exec
