#include "common/held.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>
#include <random>

#include "common/sha256.hpp"
#include "ipc/log_cursor.hpp"
#include "ipc/request_name.hpp"
#include "ipc/sys.hpp"
#include "ipc/verbs.hpp"

namespace hb::common {
namespace {

using json = nlohmann::ordered_json;

constexpr std::size_t kMaxHeldFile = 64 * 1024;

// Written by this host only, but read back strictly all the same: a
// record that does not parse is never acted on.
template <typename T>
Result<T> field(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) return make_error(std::string("no \"") + key + "\"");
    try {
        return it->get<T>();
    } catch (const nlohmann::json::exception&) {
        return make_error(std::string("\"") + key + "\" has the wrong type");
    }
}

json pins_json(const std::vector<TcbPin>& pins) {
    json out = json::array();
    for (const TcbPin& pin : pins) {
        out.push_back({pin.path, pin.sha256 ? json(*pin.sha256) : json(nullptr)});
    }
    return out;
}

}  // namespace

std::string render_held(const HeldRequest& h) {
    json j = {{"request", h.request},
              {"verb", verb_name(h.verb)},
              {"service", h.service ? json(*h.service) : json(nullptr)},
              {"command", h.command},
              {"generation", h.generation},
              {"requested_at", h.requested_at},
              {"held_at", h.held_at},
              {"expires_at", h.expires_at},
              {"merged", h.merged}};
    // Only when given, so a record without a window reads (and digests) as
    // it did before windows existed.
    if (h.window.lines != 0) j["lines"] = h.window.lines;
    if (h.window.since_ns != kNoTime)
        j["since"] = format_cursor(LogCursor{h.window.since_ns, h.window.since_seen});
    if (!h.snapshot.empty()) j["snapshot"] = h.snapshot;
    return j.dump(2) + "\n";
}

Result<HeldRequest> parse_held(std::string_view text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("not a JSON object");
    HeldRequest h;
    auto request = field<std::string>(j, "request");
    auto verb = field<std::string>(j, "verb");
    auto command = field<std::string>(j, "command");
    auto generation = field<std::string>(j, "generation");
    auto requested = field<std::int64_t>(j, "requested_at");
    auto held = field<std::int64_t>(j, "held_at");
    auto expires = field<std::int64_t>(j, "expires_at");
    auto merged = field<std::vector<std::string>>(j, "merged");
    for (const auto* r : {&request, &verb, &command, &generation}) {
        if (!*r) return r->error();
    }
    for (const auto* r : {&requested, &held, &expires}) {
        if (!*r) return r->error();
    }
    if (!merged) return merged.error();
    const auto known = verb_from_name(*verb);
    if (!known) return make_error("unknown verb");
    if (!is_request_name(*request)) return make_error("\"request\" is not a request name");
    for (const std::string& name : *merged) {
        if (!is_request_name(name)) return make_error("\"merged\" holds a name off the schema");
    }
    if (merged->size() > kMaxMerged) return make_error("\"merged\" is too long");
    const auto service = j.find("service");
    if (service == j.end()) return make_error("no \"service\"");
    if (service->is_string()) {
        h.service = service->get<std::string>();
    } else if (!service->is_null()) {
        return make_error("\"service\" has the wrong type");
    }
    h.request = std::move(*request);
    h.verb = *known;
    h.command = std::move(*command);
    h.generation = std::move(*generation);
    h.requested_at = *requested;
    h.held_at = *held;
    h.expires_at = *expires;
    h.merged = std::move(*merged);
    if (const auto lines = j.find("lines"); lines != j.end()) {
        if (!lines->is_number_unsigned()) return make_error("\"lines\" has the wrong type");
        const auto n = lines->get<std::uint64_t>();
        if (n == 0 || n > kMaxLogLines) return make_error("\"lines\" is out of range");
        h.window.lines = static_cast<std::uint16_t>(n);
    }
    if (const auto since = j.find("since"); since != j.end()) {
        const auto cursor =
            since->is_string() ? parse_cursor(since->get<std::string>()) : std::nullopt;
        if (!cursor) return make_error("\"since\" is not a cursor");
        h.window.since_ns = cursor->ns;
        h.window.since_seen = cursor->seen;
    }
    if (!is_valid_log_window(h.window)) return make_error("the window is out of range");
    if (const auto snapshot = j.find("snapshot"); snapshot != j.end()) {
        if (!snapshot->is_string() || !sys::is_lower_hex(snapshot->get<std::string>(), 64))
            return make_error("\"snapshot\" is not 64 lowercase hex digits");
        h.snapshot = snapshot->get<std::string>();
    }
    if (h.window.given() && h.verb != Verb::Logs) return make_error("a window on a verb but logs");
    return h;
}

std::string held_digest(const HeldRequest& h) {
    HeldRequest shown = h;
    shown.merged.clear();
    return sha256_hex(render_held(shown));
}

std::string held_short_digest(const HeldRequest& h) {
    return held_digest(h).substr(0, kShortDigest);
}

Result<HeldDecision> parse_decision(std::string_view text) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error("not a JSON object");
    auto decision = field<std::string>(j, "decision");
    auto generation = field<std::string>(j, "generation");
    auto reason = field<std::string>(j, "reason");
    auto record = field<std::string>(j, "record");
    auto nonce = field<std::string>(j, "nonce");
    for (const auto* r : {&decision, &generation, &reason, &record, &nonce}) {
        if (!*r) return r->error();
    }
    if (*decision != "allow" && *decision != "deny") return make_error("unknown decision");
    if (!sys::is_lower_hex(*nonce, 32)) {
        return make_error("\"nonce\" is not 32 lowercase hex digits");
    }
    return HeldDecision{*decision == "allow", std::move(*generation), std::move(*reason),
                        std::move(*record), std::move(*nonce)};
}

std::int64_t decided_keep_seconds(const Limits& limits) {
    return static_cast<std::int64_t>(limits.ttl_seconds) + limits.future_skew_seconds;
}

std::string config_generation(const Config& c) {
    json j;
    j["project_dir"] = c.project_dir;
    j["services"] = c.services;
    j["buildable"] = c.buildable;
    j["backend"] = {static_cast<int>(c.backend.kind), c.backend.argv, c.backend.file,
                    static_cast<int>(c.backend.flavour)};
    j["tcb"] = pins_json(c.tcb);
    j["rendered"] = pins_json(c.rendered);
    j["checkout_paths"] = c.checkout_paths;
    // Only when present: a generation of an install without pins is unchanged.
    if (c.pins) j["pins"] = {c.pins->engine, c.pins->binary, c.pins->sources};
    j["run_dir"] = c.run_dir;
    j["systemd_run"] = c.systemd.systemd_run;
    j["join_network"] = c.join_network ? json{c.join_network->engine, c.join_network->network,
                                              c.join_network->agent_container}
                                       : json(nullptr);
    return sha256_hex(j.dump());
}

Result<UniqueFd> open_held_dir(const std::string& state_dir) {
    const std::string path = state_dir + "/" + std::string(kHeldDir);
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        return make_error(sys::errno_text("cannot create " + path));
    }
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return make_error(sys::errno_text("cannot open " + path));
    return fd;
}

Result<std::vector<std::string>> list_held(int held_fd) {
    std::vector<std::string> names;
    if (!sys::list_dir(held_fd, names)) return make_error(sys::errno_text("cannot list held/"));
    return names;
}

Result<std::optional<std::string>> read_held_file(int held_fd, const std::string& name) {
    UniqueFd fd(::openat(held_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) return std::optional<std::string>{};
        return make_error(sys::errno_text("held/" + name));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(sys::errno_text("held/" + name));
    if (!S_ISREG(st.st_mode) || st.st_size > static_cast<off_t>(kMaxHeldFile)) {
        return make_error("held/" + name + " is not a regular file of at most 64 KiB");
    }
    std::string text;
    if (!sys::read_all(fd.get(), text, kMaxHeldFile)) {
        return make_error(sys::errno_text("held/" + name));
    }
    return std::optional<std::string>(std::move(text));
}

Result<bool> publish_file_at(int dir_fd, std::string_view dir, const std::string& name,
                             std::string_view bytes, bool no_replace) {
    std::random_device random;
    const std::string temp = ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(random());
    const std::string shown = std::string(dir) + "/";
    UniqueFd fd(
        ::openat(dir_fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return make_error(sys::errno_text(shown + temp));
    if (!sys::write_all(fd.get(), bytes) || ::fsync(fd.get()) != 0) {
        const int err = errno;
        ::unlinkat(dir_fd, temp.c_str(), 0);
        return make_error(sys::errno_text(shown + temp, err));
    }
    const unsigned flags = no_replace ? RENAME_NOREPLACE : 0;
    if (::renameat2(dir_fd, temp.c_str(), dir_fd, name.c_str(), flags) != 0) {
        const int err = errno;
        ::unlinkat(dir_fd, temp.c_str(), 0);
        if (err == EEXIST && no_replace) return false;
        return make_error(sys::errno_text(shown + name, err));
    }
    return true;
}

std::string held_name(std::string_view request, HeldFile file) {
    return std::string(request) + std::string(held_suffix(file));
}

std::optional<HeldName> parse_held_name(std::string_view name) {
    // A request name ends in ".json", so no suffix is ever part of one.
    for (const HeldFile file : kHeldFiles) {
        const std::string_view suffix = held_suffix(file);
        if (!suffix.empty() && name.ends_with(suffix))
            return HeldName{std::string(name.substr(0, name.size() - suffix.size())), file};
    }
    if (is_request_name(name)) return HeldName{std::string(name), HeldFile::Record};
    return std::nullopt;
}

bool held_name_used(int held_fd, const std::string& request) {
    return std::any_of(kHeldFiles.begin(), kHeldFiles.end(), [&](HeldFile file) {
        return sys::exists_at(held_fd, held_name(request, file));
    });
}

Result<bool> hold_record(int held_fd, const HeldRequest& held) {
    return publish_held_file(held_fd, held.request, render_held(held), true);
}

Result<void> take_up(int held_fd, const std::string& request) {
    // The decision is kept as .decided, not removed: a second person's
    // `allow` published after this point finds someone else's nonce there
    // and says it came second.
    const std::string decision = held_name(request, HeldFile::Decision);
    const std::string decided = held_name(request, HeldFile::Decided);
    if (::renameat2(held_fd, decision.c_str(), held_fd, decided.c_str(), RENAME_NOREPLACE) != 0)
        return make_error(sys::errno_text("cannot take up held/" + decision));
    const std::string taken = held_name(request, HeldFile::Taken);
    if (::renameat(held_fd, request.c_str(), held_fd, taken.c_str()) != 0)
        return make_error(sys::errno_text("cannot take up held/" + request));
    if (::fsync(held_fd) != 0) return make_error(sys::errno_text("cannot sync held/"));
    return {};
}

Result<void> end_undecided(int held_fd, const std::string& request) {
    const std::string gone = held_name(request, HeldFile::Gone);
    auto written = publish_held_file(held_fd, gone, "", true);
    if (!written) return make_error("cannot leave held/" + gone + ": " + written.error().message);
    if (::fsync(held_fd) != 0) return make_error(sys::errno_text("cannot sync held/"));
    remove_held(held_fd, request, HeldFile::Record);
    return {};
}

void remove_held(int held_fd, const std::string& request, HeldFile file) {
    ::unlinkat(held_fd, held_name(request, file).c_str(), 0);
}

}  // namespace hb::common
