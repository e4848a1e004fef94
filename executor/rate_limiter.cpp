#include "executor/rate_limiter.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <vector>

#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

constexpr int kStateVersion = 1;
constexpr std::size_t kMaxStateBytes = 4 * 1024 * 1024;

using Stamps = RateState::Stamps;
using State = RateState;

using sys::errno_text;

Result<Stamps> parse_stamps(const nlohmann::json& value, std::int64_t now) {
    if (!value.is_array()) return make_error("a window is not an array");
    Stamps stamps;
    for (const auto& item : value) {
        if (!item.is_number_integer()) return make_error("a timestamp is not an integer");
        const auto t = item.get<std::int64_t>();
        // CLOCK_BOOTTIME only moves forward within a boot.
        if (t < 0 || t > now) return make_error("a timestamp lies in the future");
        stamps.push_back(t);
    }
    std::sort(stamps.begin(), stamps.end());
    return stamps;
}

// Parses the state file. A file from another boot yields empty windows.
Result<State> parse_state(const std::string& text, const std::string& boot_id, std::int64_t now) {
    const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.is_object()) return make_error("not a JSON object");
    for (const auto& [key, value] : json.items()) {
        if (key != "version" && key != "boot_id" && key != "mutating" && key != "read_only") {
            return make_error("unknown key \"" + key + "\"");
        }
    }
    if (!json.contains("version") || !json["version"].is_number_integer() ||
        json["version"].get<std::int64_t>() != kStateVersion) {
        return make_error("missing or unsupported version");
    }
    if (!json.contains("boot_id") || !json["boot_id"].is_string()) {
        return make_error("missing boot_id");
    }
    if (!json.contains("mutating") || !json.contains("read_only")) {
        return make_error("missing a window");
    }
    if (json["boot_id"].get<std::string>() != boot_id) return State{};
    auto mutating = parse_stamps(json["mutating"], now);
    if (!mutating) return mutating.error();
    auto read_only = parse_stamps(json["read_only"], now);
    if (!read_only) return read_only.error();
    return State{std::move(mutating.value()), std::move(read_only.value())};
}

// nullopt state: no file yet (first use); an error: the file is unusable.
Result<State> load_state(int dirfd, const std::string& boot_id, std::int64_t now) {
    UniqueFd fd(::openat(dirfd, RateLimiter::kStateFile,
                         O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return State{};
        return make_error(errno == ELOOP ? std::string("it is a symlink") : errno_text("open"));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(errno_text("fstat"));
    if (!S_ISREG(st.st_mode)) return make_error("it is not a regular file");
    std::string text;
    if (!sys::read_all(fd.get(), text, kMaxStateBytes)) return make_error(errno_text("read"));
    if (text.size() > kMaxStateBytes) return make_error("larger than 4 MiB");
    return parse_state(text, boot_id, now);
}

// Temp file in the state dir, fdatasync, rename over the old state: a crash
// leaves either the old file or the new one, never a torn one.
Result<void> store_state(int dirfd, const State& state, const std::string& boot_id) {
    const nlohmann::json json = {{"version", kStateVersion},
                                 {"boot_id", boot_id},
                                 {"mutating", state.mutating},
                                 {"read_only", state.read_only}};
    const std::string text = json.dump() + "\n";

    unsigned char rnd[8];
    if (::getrandom(rnd, sizeof rnd, 0) != static_cast<ssize_t>(sizeof rnd)) {
        return make_error(errno_text("getrandom"));
    }
    std::string tmp = std::string(RateLimiter::kStateFile) + ".tmp-";
    tmp += sys::lower_hex(rnd, sizeof rnd);
    UniqueFd fd(
        ::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return make_error(errno_text("create temp file"));
    Result<void> written;
    if (!sys::write_all(fd.get(), text)) written = make_error(errno_text("write"));
    if (written && ::fdatasync(fd.get()) != 0) written = make_error(errno_text("fdatasync"));
    if (written && ::renameat(dirfd, tmp.c_str(), dirfd, RateLimiter::kStateFile) != 0) {
        written = make_error(errno_text("rename"));
    }
    if (!written) ::unlinkat(dirfd, tmp.c_str(), 0);
    return written;
}

// Slides a window: an entry counts while now - t < window.
void slide(Stamps& stamps, std::int64_t now, const Window& w) {
    const std::int64_t horizon = now - static_cast<std::int64_t>(w.seconds) * 1000;
    stamps.erase(stamps.begin(), std::upper_bound(stamps.begin(), stamps.end(), horizon));
}

// The state cannot be trusted: refuse, name the file and the fix.
Admission corrupt(const std::string& path, const std::string& why) {
    return {Admission::Kind::StateUnusable, 0,
            "the rate limiter state " + path + " is corrupt or unreadable (" + why +
                "); commands are refused until a person checks it (deleting it starts empty "
                "windows)"};
}

// The limiter could not work (no state dir, disk full): refuse, say why.
Admission unusable(const std::string& path, const std::string& why) {
    return {Admission::Kind::StateUnusable, 0,
            "the rate limiter cannot use " + path + " (" + why + "); commands are refused"};
}

}  // namespace

std::optional<std::string> current_boot_id() {
    UniqueFd fd(::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC));
    if (!fd) return std::nullopt;
    char buf[64];
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    std::string id(buf, static_cast<std::size_t>(n));
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    if (id.empty()) return std::nullopt;
    return id;
}

std::int64_t RateLimiter::boottime_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_BOOTTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

RateLimiter::RateLimiter(std::string state_dir, Window mutating, Window read_only, Clock clock)
    : state_dir_(std::move(state_dir)),
      mutating_(mutating),
      read_only_(read_only),
      clock_(std::move(clock)),
      boot_id_(current_boot_id()) {}

Result<RateState> RateLimiter::windows_at(int dir_fd, std::int64_t now) const {
    if (!boot_id_) return make_error("the boot id cannot be read");
    auto loaded = load_state(dir_fd, *boot_id_, now);
    if (!loaded) return loaded.error();
    slide(loaded->mutating, now, mutating_);
    slide(loaded->read_only, now, read_only_);
    return loaded;
}

Admission RateLimiter::try_admit(RateClass rate) {
    if (rate == RateClass::Exempt) return {Admission::Kind::Admitted, 0, {}};
    const Window window = rate == RateClass::Mutating ? mutating_ : read_only_;
    const std::string path = state_dir_ + "/" + kStateFile;
    if (window.count <= 0 || window.seconds <= 0) {
        return {Admission::Kind::OverLimit, window.seconds > 0 ? window.seconds : 1,
                "the limit for " + std::string(rate_class_name(rate)) + " verbs is zero"};
    }
    if (!boot_id_) return unusable(path, "the boot id cannot be read");

    UniqueFd dir(::open(state_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return unusable(path, errno_text("open the state dir"));
    UniqueFd lock(::openat(dir.get(), kLockFile, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!lock) return unusable(path, errno_text("open the lock file"));
    if (!sys::flock_retry(lock.get(), LOCK_EX)) return unusable(path, errno_text("flock"));

    // Read the clock under the lock, so stamps are recorded in order.
    const std::int64_t now = clock_();
    auto loaded = windows_at(dir.get(), now);
    if (!loaded) return corrupt(path, loaded.error().message);
    State state = std::move(loaded.value());

    Stamps& stamps = rate == RateClass::Mutating ? state.mutating : state.read_only;
    const auto count = static_cast<std::size_t>(window.count);
    if (stamps.size() >= count) {
        // The entry whose leaving brings the window under its limit.
        const std::int64_t leaves_at =
            stamps[stamps.size() - count] + static_cast<std::int64_t>(window.seconds) * 1000;
        const std::int64_t wait_ms = std::max<std::int64_t>(leaves_at - now, 1);
        const int seconds = static_cast<int>((wait_ms + 999) / 1000);
        return {Admission::Kind::OverLimit, seconds, "retry in " + std::to_string(seconds) + " s"};
    }
    stamps.push_back(now);
    if (auto stored = store_state(dir.get(), state, *boot_id_); !stored) {
        return unusable(path, "cannot record the request: " + stored.error().message);
    }
    return {Admission::Kind::Admitted, 0, {}};
}

}  // namespace hb::exec
