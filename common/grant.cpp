#include "common/grant.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "common/held.hpp"
#include "ipc/sys.hpp"

namespace hb::common {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t kMaxGrantFile = 4096;
constexpr std::size_t kGrantId = 16;
const std::string kShown = std::string(kGrantDir) + "/";

// Someone else's bits: no group or other may read or write it.
constexpr mode_t kOthersBits = 0077;

Result<Grant> parse_grant(std::string_view text, const std::string& name) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("not a JSON object");
    if (j.size() != 7) return make_error("not the keys a grant has");
    Grant g;
    try {
        g.id = j.at("grant").get<std::string>();
        const auto verb = verb_from_name(j.at("verb").get<std::string>());
        if (!verb) return make_error("unknown verb");
        g.verb = *verb;
        const auto& service = j.at("service");
        if (!service.is_null()) g.service = service.get<std::string>();
        for (const auto* key : {"granted_at", "until", "runs", "used"}) {
            if (!j.at(key).is_number_integer())
                return make_error(std::string(key) + " is not a number");
        }
        g.granted_at = j.at("granted_at").get<std::int64_t>();
        g.until = j.at("until").get<std::int64_t>();
        const auto runs = j.at("runs").get<std::int64_t>();
        const auto used = j.at("used").get<std::int64_t>();
        if (runs < 1 || runs > kMaxGrantRuns || used < 0 || used > runs)
            return make_error("runs out of range");
        g.runs = static_cast<std::uint32_t>(runs);
        g.used = static_cast<std::uint32_t>(used);
    } catch (const nlohmann::json::exception&) {
        return make_error("not the keys a grant has");
    }
    if (g.id != name) return make_error("it names another grant");
    if (g.until <= g.granted_at || g.until - g.granted_at > kMaxGrantSeconds)
        return make_error("it lasts longer than a grant may");
    if ((verb_arg_kind(g.verb) == ArgKind::None) != !g.service)
        return make_error("a service where the verb takes none, or none where it takes one");
    return g;
}

}  // namespace

std::string render_grant(const Grant& g) {
    const json j = {{"grant", g.id},
                    {"verb", verb_name(g.verb)},
                    {"service", g.service ? json(*g.service) : json(nullptr)},
                    {"granted_at", g.granted_at},
                    {"until", g.until},
                    {"runs", g.runs},
                    {"used", g.used}};
    return j.dump(2) + "\n";
}

Result<Grant> read_grant(int dir_fd, const std::string& name) {
    if (!sys::is_lower_hex(name, kGrantId)) return make_error("not a grant's name");
    UniqueFd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return make_error(sys::errno_text(kShown + name));
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(sys::errno_text(kShown + name));
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & kOthersBits) != 0 ||
        st.st_nlink != 1 || st.st_size > static_cast<off_t>(kMaxGrantFile)) {
        return make_error("not a regular file of this user's alone with one link");
    }
    std::string text;
    if (!sys::read_all(fd.get(), text, kMaxGrantFile)) {
        return make_error(sys::errno_text(kShown + name));
    }
    return parse_grant(text, name);
}

Result<std::optional<UniqueFd>> open_grant_dir(const std::string& state_dir, bool create) {
    const std::string path = state_dir + "/" + std::string(kGrantDir);
    if (create && ::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        return make_error(sys::errno_text("cannot create " + path));
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::optional<UniqueFd>{};
        return make_error(sys::errno_text("cannot open " + path));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(sys::errno_text("cannot read " + path));
    if (st.st_uid != ::geteuid() || (st.st_mode & 0022) != 0) {
        return make_error(path + " is not this user's alone to write; no grant in it is used");
    }
    return std::optional<UniqueFd>(std::move(fd));
}

Result<void> lock_grants(int dir_fd) {
    if (!sys::flock_retry(dir_fd, LOCK_EX))
        return make_error(sys::errno_text("cannot lock grants/"));
    return {};
}

Result<void> write_grant(int dir_fd, const Grant& grant) {
    auto written = publish_file_at(dir_fd, kGrantDir, grant.id, render_grant(grant), false);
    if (!written) return written.error();
    return {};
}

void unlock_grants(int dir_fd) {
    ::flock(dir_fd, LOCK_UN);
}

namespace {

Result<std::optional<Grant>> use_locked(int dir_fd, Verb verb, std::string_view service,
                                        std::int64_t now) {
    std::vector<std::string> names;
    if (!sys::list_dir(dir_fd, names)) return make_error(sys::errno_text("cannot list grants/"));
    for (const std::string& name : names) {
        auto grant = read_grant(dir_fd, name);
        if (!grant) continue;  // refused: grants nothing (`pending` names it)
        if (!grant->live(now)) {
            ::unlinkat(dir_fd, name.c_str(), 0);  // ended by itself
            continue;
        }
        if (!grant->covers(verb, service)) continue;
        ++grant->used;
        // Its last run removes it; otherwise the count is written back
        // before the run, so a crash never gives a run back.
        if (grant->runs_left() == 0) {
            if (::unlinkat(dir_fd, name.c_str(), 0) != 0)
                return make_error(sys::errno_text("cannot remove " + kShown + name));
        } else if (auto written = write_grant(dir_fd, *grant); !written) {
            return written.error();
        }
        return std::optional<Grant>(std::move(*grant));
    }
    return std::optional<Grant>{};
}

}  // namespace

Result<std::optional<Grant>> use_grant(int dir_fd, Verb verb, std::string_view service,
                                       std::int64_t now) {
    if (auto locked = lock_grants(dir_fd); !locked) return locked.error();
    auto used = use_locked(dir_fd, verb, service, now);
    unlock_grants(dir_fd);
    return used;
}

}  // namespace hb::common
