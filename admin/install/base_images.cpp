#include "admin/install/base_images.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "ipc/image_ref.hpp"
#include "ipc/screen_wire.hpp"
#include "ipc/unique_fd.hpp"
#include "parser/containerfile_screen.hpp"

namespace hb::admin {
namespace {

// The checkout is the agent's: a link or a FIFO in it must not make the
// person's admin tool read elsewhere or hang (as common/integrity_gate.cpp).
Result<std::vector<std::uint8_t>> read_beneath(const std::string& dir, const std::string& rel) {
    UniqueFd root(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root) return make_error(dir + ": " + std::strerror(errno));
    open_how how{};
    how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long raw = ::syscall(SYS_openat2, root.get(), rel.c_str(), &how, sizeof how);
    if (raw < 0) return make_error(rel + ": " + std::strerror(errno));
    UniqueFd fd(static_cast<int>(raw));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return make_error(rel + ": not a regular file");
    std::vector<std::uint8_t> bytes;
    std::uint8_t buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return make_error(rel + ": " + std::strerror(errno));
        if (n == 0) break;
        bytes.insert(bytes.end(), buf, buf + n);
        if (bytes.size() > kMaxContainerfileBytes) break;  // the screen refuses it
    }
    return bytes;
}

bool allowed_by(const std::vector<std::string>& allowed, const std::string& image) {
    return std::any_of(allowed.begin(), allowed.end(),
                       [&](const std::string& a) { return image_refs_match(image, a); });
}

}  // namespace

BaseImagePlan plan_base_images(const std::string& project_dir, const BuildSettings& build,
                               const std::optional<BuildSettings>* previous,
                               const std::vector<std::string>& options,
                               const std::vector<std::string>& drops) {
    BaseImagePlan plan;
    const bool had_install = previous != nullptr && previous->has_value();
    const bool had_list = had_install && (*previous)->base_images.has_value();
    if (had_list) plan.images = *(*previous)->base_images;
    plan.images.insert(plan.images.end(), options.begin(), options.end());

    BuildSettings with_services = build;
    std::vector<std::string> named;
    for (const ServiceBuild& s : build.services) {
        const std::string rel = (s.context == "." ? "" : s.context + "/") + s.containerfile;
        auto bytes = read_beneath(project_dir, rel);
        if (!bytes) {
            plan.notes.push_back("rebuild " + s.service + ": cannot read " + bytes.error().message);
            continue;
        }
        const parser::NamedImages read = parser::containerfile_images(*bytes);
        if (read.verdict.reason != ScreenReason::None) {
            plan.notes.push_back("rebuild " + s.service + ": " + rel + " line " +
                                 std::to_string(read.verdict.line) + ": " +
                                 std::string(screen_reason_text(read.verdict.reason)));
            continue;
        }
        named.insert(named.end(), read.images.begin(), read.images.end());
    }
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());

    // An install older than the list gets none from its Containerfiles:
    // the agent writes them, and would choose which of the person's images
    // its builds may read (a planted `FROM localhost/private` before an
    // upgrade). Each is named below, with the option that lists it.
    plan.older_install = had_install && !had_list;
    std::sort(plan.images.begin(), plan.images.end());
    plan.images.erase(std::unique(plan.images.begin(), plan.images.end()), plan.images.end());
    // A drop takes off every listed spelling of the image it names.
    std::erase_if(plan.images, [&](const std::string& image) {
        if (!allowed_by(drops, image)) return false;
        plan.dropped.push_back(image);
        return true;
    });
    for (const std::string& drop : drops) {
        if (!allowed_by(plan.dropped, drop))
            plan.notes.push_back("--drop-base-image " + drop + ": it is not listed");
    }
    if (plan.images.size() > kMaxBaseImages) {
        plan.notes.push_back("more than " + std::to_string(kMaxBaseImages) +
                             " base images: only the first are kept");
        plan.images.resize(kMaxBaseImages);
    }

    with_services.base_images = plan.images;
    const std::vector<std::string> allowed = build_allowed_images(with_services);
    for (const std::string& image : named) {
        if (!allowed_by(allowed, image))
            plan.notes.push_back("a Containerfile names " + image +
                                 ", which no build may name: its rebuild is refused until you "
                                 "list it (hostbridge install --base-image " +
                                 image + ")");
    }
    return plan;
}

}  // namespace hb::admin
