// bridge.json, read strictly: every rule below names the key it enforces,
// and nothing is defaulted: install writes every key, so a missing one means
// a hand-edited or foreign file. Decisions beyond the schema: docs/CONFIG.md.
#include "common/config.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>

#include "ipc/image_ref.hpp"
#include "ipc/path_component.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::string_view kPrefix = "bridge.json: ";
constexpr gid_t kMaxGid = 4294967294U;  // (gid_t)-1 means "no change" to chown

// Thrown inside this file only and turned into an Error by parse_config, so
// that each rule stays one line; it never leaves this translation unit.
struct Invalid {
    std::string message;
};

[[noreturn]] void invalid(const std::string& key, const std::string& why) {
    if (key.empty()) throw Invalid{std::string(kPrefix) + why};
    throw Invalid{std::string(kPrefix) + "key \"" + key + "\": " + why};
}

std::string join_key(const std::string& parent, std::string_view key) {
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string index_key(const std::string& parent, std::size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

// An object with a closed set of keys: an unknown key is an error.
class Object {
  public:
    Object(const json& value, std::string key, const std::vector<std::string_view>& known)
        : value_(value), key_(std::move(key)) {
        if (!value.is_object())
            invalid(key_, key_.empty() ? "must be a JSON object" : "must be an object");
        for (const auto& item : value.items()) {
            if (std::find(known.begin(), known.end(), item.key()) == known.end())
                invalid(join_key(key_, item.key()), "unknown key");
        }
    }

    const json& required(std::string_view name) const {
        const json* found = optional(name);
        if (found == nullptr) invalid(key(name), "is required but missing");
        return *found;
    }

    const json* optional(std::string_view name) const {
        auto it = value_.find(name);
        return it == value_.end() ? nullptr : &*it;
    }

    std::string key(std::string_view name) const { return join_key(key_, name); }

  private:
    const json& value_;
    std::string key_;
};

// --- scalar readers -------------------------------------------------------

std::int64_t integer(const json& value, const std::string& key, std::int64_t min, std::int64_t max,
                     const char* what) {
    // is_number_integer is false for booleans and floats (1.0 is refused too).
    if (!value.is_number_integer()) invalid(key, what);
    if (value.is_number_unsigned()) {
        const auto v = value.get<std::uint64_t>();
        if (v > static_cast<std::uint64_t>(max)) invalid(key, what);
        if (min > 0 && v < static_cast<std::uint64_t>(min)) invalid(key, what);
        return static_cast<std::int64_t>(v);
    }
    const auto v = value.get<std::int64_t>();
    if (v < min || v > max) invalid(key, what);
    return v;
}

int positive(const json& value, const std::string& key) {
    return static_cast<int>(integer(value, key, 1, INT_MAX, "must be a positive integer"));
}

int non_negative(const json& value, const std::string& key) {
    return static_cast<int>(integer(value, key, 0, INT_MAX, "must be a non-negative integer"));
}

bool boolean(const json& value, const std::string& key) {
    if (!value.is_boolean()) invalid(key, "must be true or false");
    return value.get<bool>();
}

std::string string(const json& value, const std::string& key) {
    if (!value.is_string()) invalid(key, "must be a string");
    auto text = value.get<std::string>();
    // Every string here ends up in a path or an argv, where a NUL truncates.
    if (text.find('\0') != std::string::npos) invalid(key, "must not contain a NUL byte");
    return text;
}

// --- shapes ---------------------------------------------------------------

bool lower_hex_sha256(std::string_view text) {
    return sys::is_lower_hex(text, 64);
}

// Splits on '/' and reports the first bad component: paths are kept in one
// normalised spelling so that "inside project_dir" is a plain prefix test.
// The rule is ipc/path_component.hpp's; these are its words for bridge.json
// (a NUL never gets here: string() refuses it first).
const char* component_problem_text(std::string_view components) {
    switch (component_problem(components)) {
        case PathProblem::None:
            return nullptr;
        case PathProblem::DotDot:
            return "must not contain \"..\" components";
        case PathProblem::Nul:
            return "must not contain a NUL byte";
        default:
            return "must be normalised (no empty or \".\" components, no trailing slash)";
    }
}

std::string absolute_path(const json& value, const std::string& key) {
    std::string path = string(value, key);
    if (path.empty() || path[0] != '/') invalid(key, "must be an absolute path");
    if (path.size() >= PATH_MAX) invalid(key, "is longer than PATH_MAX");
    if (path != "/") {
        if (const char* problem = component_problem_text(std::string_view(path).substr(1)))
            invalid(key, problem);
    }
    return path;
}

// Strictly below `dir` (both normalised).
bool is_inside(std::string_view path, std::string_view dir) {
    if (dir == "/") return path.size() > 1;
    return path.size() > dir.size() + 1 && path.starts_with(dir) && path[dir.size()] == '/';
}

bool is_inside_or_at(std::string_view path, std::string_view dir) {
    return path == dir || is_inside(path, dir);
}

// Host-side files must be out of the agent's reach: it can write anywhere
// in the checkout (docs/ARCHITECTURE.md, "Files on the host").
void require_outside_project(const Config& config, const std::string& key,
                             const std::string& path) {
    if (is_inside_or_at(path, config.project_dir))
        invalid(key, "must lie outside project_dir (the agent can write there)");
}

// An absolute path of the host's that the agent must not be able to replace.
std::string host_path(const json& value, const std::string& key, const Config& config) {
    std::string path = absolute_path(value, key);
    require_outside_project(config, key, path);
    return path;
}

// --- sections -------------------------------------------------------------

mode_t file_mode(const json& value, const std::string& key) {
    const std::string text = string(value, key);
    const bool octal =
        text.size() == 4 && text[0] == '0' &&
        std::all_of(text.begin() + 1, text.end(), [](char c) { return c >= '0' && c <= '7'; });
    if (!octal)
        invalid(key,
                "must be an octal mode string such as \"0644\" (no setuid, setgid or sticky bit)");
    const auto mode = static_cast<mode_t>(std::stoul(text, nullptr, 8));
    // World-writable responses would let any local user forge answers.
    if ((mode & S_IWOTH) != 0) invalid(key, "must not be world-writable");
    return mode;
}

std::vector<std::string> service_list(const json& value, const std::string& key) {
    if (!value.is_array()) invalid(key, "must be an array of strings");
    if (value.size() > kMaxServices) invalid(key, "must not list more than 64 services");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string item_key = index_key(key, i);
        std::string name = string(value[i], item_key);
        if (!is_valid_arg_shape(name))
            invalid(item_key, "must match ^[a-z][a-z0-9_-]*$ and be at most 64 bytes");
        if (!names.empty() && name == names.back()) invalid(item_key, "is listed twice");
        // The wire's arg index is the position in this list: one order only.
        if (!names.empty() && name < names.back())
            invalid(item_key, "is out of order (the list must be sorted)");
        names.push_back(std::move(name));
    }
    return names;
}

std::string relative_path(const json& value, const std::string& key) {
    std::string path = string(value, key);
    if (path.empty()) invalid(key, "must not be empty");
    if (path[0] == '/') invalid(key, "must be relative to project_dir, not absolute");
    if (path.size() >= PATH_MAX) invalid(key, "is longer than PATH_MAX");
    if (const char* problem = component_problem_text(path)) invalid(key, problem);
    return path;
}

std::vector<TcbPin> tcb_list(const json& value, const std::string& key) {
    if (!value.is_array()) invalid(key, "must be an array of objects");
    std::vector<TcbPin> pins;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const Object pin(value[i], index_key(key, i), {"path", "sha256"});
        TcbPin out;
        out.path = relative_path(pin.required("path"), pin.key("path"));
        if (!seen.insert(out.path).second) invalid(pin.key("path"), "is pinned twice");
        const json& sha = pin.required("sha256");
        if (!sha.is_null()) {
            out.sha256 = string(sha, pin.key("sha256"));
            if (!lower_hex_sha256(*out.sha256))
                invalid(pin.key("sha256"),
                        "must be 64 lowercase hex digits, or null (pinned as absent)");
        }
        pins.push_back(std::move(out));
    }
    return pins;
}

// "." (the project dir itself) or a normalised relative path.
std::vector<std::string> checkout_path_list(const json& value, const std::string& key) {
    if (!value.is_array()) invalid(key, "must be an array of strings");
    std::vector<std::string> paths;
    for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string item_key = index_key(key, i);
        if (value[i].is_string() && value[i].get<std::string>() == ".") {
            paths.emplace_back(".");
            continue;
        }
        paths.push_back(relative_path(value[i], item_key));
    }
    return paths;
}

Backend backend(const json& value, const Config& config) {
    const Object obj(value, "backend", {"kind", "argv", "file", "flavour"});
    Backend out;
    const auto kind = backend_kind_named(string(obj.required("kind"), obj.key("kind")));
    if (!kind) invalid(obj.key("kind"), "must be \"stack\" or \"compose\"");
    out.kind = *kind;
    const json& argv = obj.required("argv");
    const std::string argv_key = obj.key("argv");
    if (!argv.is_array() || argv.empty()) invalid(argv_key, "must be a non-empty array of strings");
    out.argv.push_back(absolute_path(argv[0], index_key(argv_key, 0)));
    for (std::size_t i = 1; i < argv.size(); ++i) {
        std::string arg = string(argv[i], index_key(argv_key, i));
        if (arg.empty()) invalid(index_key(argv_key, i), "must not be empty");
        out.argv.push_back(std::move(arg));
    }
    const json* file = obj.optional("file");
    if (stack_backend(out.kind) && file != nullptr)
        invalid(obj.key("file"), "is only allowed with kind \"compose\"");
    if (compose_backend(out.kind)) {
        if (file == nullptr) invalid(obj.key("file"), "is required with kind \"compose\"");
        out.file = absolute_path(*file, obj.key("file"));
        if (!is_inside(out.file, config.project_dir))
            invalid(obj.key("file"), "must lie inside project_dir");
    }
    if (const json* flavour = obj.optional("flavour")) {
        if (!compose_backend(out.kind))
            invalid(obj.key("flavour"), "is only allowed with kind \"compose\"");
        const auto named = compose_flavour_named(string(*flavour, obj.key("flavour")));
        if (!named) invalid(obj.key("flavour"), "must be \"docker\" or \"podman-compose\"");
        out.flavour = *named;
    }
    return out;
}

Window window(const json& value, const std::string& key) {
    const Object obj(value, key, {"count", "seconds"});
    return Window{positive(obj.required("count"), obj.key("count")),
                  positive(obj.required("seconds"), obj.key("seconds"))};
}

Limits limits(const json& value) {
    const Object obj(value, "limits",
                     {"mutating", "read_only", "ttl_seconds", "future_skew_seconds", "max_held"});
    Limits out;
    out.mutating = window(obj.required("mutating"), obj.key("mutating"));
    out.read_only = window(obj.required("read_only"), obj.key("read_only"));
    out.ttl_seconds = positive(obj.required("ttl_seconds"), obj.key("ttl_seconds"));
    out.future_skew_seconds =
        positive(obj.required("future_skew_seconds"), obj.key("future_skew_seconds"));
    if (const json* held = obj.optional("max_held"))
        out.max_held = positive(*held, obj.key("max_held"));
    return out;
}

Timeouts timeouts(const json& value) {
    std::vector<std::string_view> known = {"default"};
    for (Verb verb : kAllVerbs) known.push_back(verb_name(verb));  // includes "rebuild"
    const Object obj(value, "timeouts", known);
    Timeouts out;
    out.default_seconds = positive(obj.required("default"), obj.key("default"));
    out.rebuild_seconds = positive(obj.required("rebuild"), obj.key("rebuild"));
    for (Verb verb : kAllVerbs) {
        if (verb == Verb::Rebuild) continue;  // its own required key above
        const std::string_view name = verb_name(verb);
        const json* seconds = obj.optional(name);
        if (seconds == nullptr) continue;
        if (verb == Verb::Ping)
            invalid(obj.key(name), "ping runs no command, so it takes no timeout");
        out.per_verb.emplace_back(verb, positive(*seconds, obj.key(name)));
    }
    return out;
}

DrainSettings drain(const json& value) {
    const Object obj(value, "drain", {"time_budget_seconds", "linger_seconds"});
    DrainSettings out;
    out.time_budget_seconds =
        positive(obj.required("time_budget_seconds"), obj.key("time_budget_seconds"));
    // 0 is meaningful: do not linger after the spool is empty.
    out.linger_seconds = non_negative(obj.required("linger_seconds"), obj.key("linger_seconds"));
    return out;
}

Retention retention(const json& value) {
    const Object obj(value, "retention", {"archive_days", "responses_days"});
    return Retention{positive(obj.required("archive_days"), obj.key("archive_days")),
                     positive(obj.required("responses_days"), obj.key("responses_days"))};
}

// Optional: a missing key keeps the defaults, but a present one is read as
// strictly as the rest (both subkeys required, positive integers).
AuditBudgetSettings audit_budget(const json& value) {
    const Object obj(value, "audit_budget", {"bytes", "seconds"});
    AuditBudgetSettings out;
    out.bytes = integer(obj.required("bytes"), obj.key("bytes"), 1, INT64_MAX,
                        "must be a positive integer (bytes per window)");
    out.seconds = positive(obj.required("seconds"), obj.key("seconds"));
    return out;
}

SystemdSettings systemd(const json& value, const Config& config) {
    const Object obj(value, "systemd", {"enabled", "systemd_run", "notify_send"});
    SystemdSettings out;
    out.enabled = boolean(obj.required("enabled"), obj.key("enabled"));
    const json& run = obj.required("systemd_run");
    // Empty: install found no systemd-run; long-lived verbs run in a new session.
    if (!run.is_string() || !run.get<std::string>().empty())
        out.systemd_run = host_path(run, obj.key("systemd_run"), config);
    if (const json* notify = obj.optional("notify_send"))
        out.notify_send = host_path(*notify, obj.key("notify_send"), config);
    return out;
}

// A container or network name, as podman and docker accept one.
std::string container_name(const json& value, const std::string& key) {
    std::string name = string(value, key);
    if (!is_valid_container_name(name))
        invalid(key, "must match ^[a-zA-Z0-9][a-zA-Z0-9_.-]*$ (at most 255 bytes)");
    return name;
}

std::optional<JoinNetwork> join_network(const json& value, const Config& config) {
    if (value.is_null()) return std::nullopt;
    const Object obj(value, "join_network", {"engine", "network", "agent_container"});
    JoinNetwork out;
    out.engine = host_path(obj.required("engine"), obj.key("engine"), config);
    out.network = container_name(obj.required("network"), obj.key("network"));
    out.agent_container =
        container_name(obj.required("agent_container"), obj.key("agent_container"));
    return out;
}

bool has_control(std::string_view word) {
    return std::any_of(word.begin(), word.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

// "notify_command" (docs/CONFIG.md): the first word a host path, the rest
// fixed words, each bounded.
std::vector<std::string> notify_command(const json& value, const Config& config) {
    const std::string key = "notify_command";
    if (!value.is_array() || value.empty() || value.size() > kMaxNotifyWords)
        invalid(key, "must be an array of 1 to " + std::to_string(kMaxNotifyWords) +
                         " strings: a program's absolute path, then its words (no shell)");
    std::vector<std::string> argv{host_path(value[0], index_key(key, 0), config)};
    for (std::size_t i = 1; i < value.size(); ++i) {
        std::string word = string(value[i], index_key(key, i));
        if (word.empty() || word.size() > kMaxNotifyWordBytes)
            invalid(index_key(key, i),
                    "must be 1 to " + std::to_string(kMaxNotifyWordBytes) + " bytes long");
        if (has_control(word)) invalid(index_key(key, i), "must not contain control characters");
        argv.push_back(std::move(word));
    }
    return argv;
}

// A word that reaches an argv as one element: no NUL (string() refuses
// it), no control byte, and not read as an option.
std::string argv_word(const json& value, const std::string& key) {
    std::string word = string(value, key);
    if (word.empty()) invalid(key, "must not be empty");
    if (word[0] == '-') invalid(key, "must not start with '-' (it would read as an option)");
    if (has_control(word)) invalid(key, "must not contain control characters");
    return word;
}

// The stack backend builds with its own command from the snapshot the
// executor hands it (HOSTBRIDGE_BUILD_CONTEXT): only the context and the
// Containerfile to screen are the bridge's to know.
ServiceBuild service_build(const json& value, const std::string& key, const Config& config) {
    const bool stack = stack_backend(config.backend.kind);
    const Object obj(value, key,
                     stack ? std::vector<std::string_view>{"service", "context", "containerfile"}
                           : std::vector<std::string_view>{"service", "context", "containerfile",
                                                           "target", "args", "image", "container"});
    ServiceBuild out;
    out.service = string(obj.required("service"), obj.key("service"));
    if (!std::binary_search(config.buildable.begin(), config.buildable.end(), out.service))
        invalid(obj.key("service"), "\"" + out.service + "\" is not in buildable");
    const json& context = obj.required("context");
    out.context = context.is_string() && context.get<std::string>() == "."
                      ? "."
                      : relative_path(context, obj.key("context"));
    out.containerfile = relative_path(obj.required("containerfile"), obj.key("containerfile"));
    // buildah runs a -f file named *.in through cpp, whose #include reads
    // host files the screen never saw (docs/BUILDS.md).
    if (out.containerfile.ends_with(".in"))
        invalid(obj.key("containerfile"), "must not end in .in (buildah preprocesses those)");
    if (const json* target = obj.optional("target"))
        out.target = argv_word(*target, obj.key("target"));
    if (const json* args = obj.optional("args")) {
        if (!args->is_array()) invalid(obj.key("args"), "must be an array of strings");
        for (std::size_t i = 0; i < args->size(); ++i)
            out.args.push_back(argv_word((*args)[i], index_key(obj.key("args"), i)));
    }
    if (stack) return out;
    out.image = argv_word(obj.required("image"), obj.key("image"));
    out.container = container_name(obj.required("container"), obj.key("container"));
    return out;
}

std::optional<BuildSettings> build_settings(const json& value, const Config& config) {
    const bool stack = stack_backend(config.backend.kind);
    const Object obj(
        value, "build",
        stack ? std::vector<std::string_view>{"max_files", "max_bytes", "services", "base_images"}
              : std::vector<std::string_view>{"engine", "buildah", "project", "network",
                                              "max_files", "max_bytes", "services", "base_images"});
    BuildSettings out;
    // The compose backend's build step is the bridge's own argv; a stack
    // builds with its own command, so it has no engine, project or network.
    if (!stack) {
        out.engine = host_path(obj.required("engine"), obj.key("engine"), config);
        if (const json* buildah = obj.optional("buildah")) {
            if (!podman_compose(config.backend))
                invalid(obj.key("buildah"), "is only for podman-compose");
            out.buildah = host_path(*buildah, obj.key("buildah"), config);
        }
        out.project = string(obj.required("project"), obj.key("project"));
        if (!is_project_name(out.project))
            invalid(obj.key("project"), "must match ^[a-z0-9][a-z0-9_-]{0,62}$");
        out.network = string(obj.required("network"), obj.key("network"));
        if (out.network != "none" && out.network != "private")
            invalid(obj.key("network"), "must be \"none\" or \"private\"");
    }
    out.max_files =
        static_cast<std::uint64_t>(integer(obj.required("max_files"), obj.key("max_files"), 1,
                                           INT64_MAX, "must be a positive integer"));
    out.max_bytes =
        static_cast<std::uint64_t>(integer(obj.required("max_bytes"), obj.key("max_bytes"), 1,
                                           INT64_MAX, "must be a positive integer"));
    const json& services = obj.required("services");
    if (!services.is_array()) invalid(obj.key("services"), "must be an array of objects");
    for (std::size_t i = 0; i < services.size(); ++i) {
        ServiceBuild build = service_build(services[i], index_key(obj.key("services"), i), config);
        if (!out.services.empty() && build.service <= out.services.back().service)
            invalid(index_key(obj.key("services"), i) + ".service",
                    "is out of order or listed twice (the list is sorted by service)");
        out.services.push_back(std::move(build));
    }
    if (const json* bases = obj.optional("base_images")) {
        if (!bases->is_array()) invalid(obj.key("base_images"), "must be an array of strings");
        if (bases->size() > kMaxBaseImages)
            invalid(obj.key("base_images"),
                    "must list at most " + std::to_string(kMaxBaseImages) + " images");
        std::vector<std::string> list;
        for (std::size_t i = 0; i < bases->size(); ++i) {
            const std::string key = index_key(obj.key("base_images"), i);
            const std::string ref = string((*bases)[i], key);
            // Stored canonical, so the executor sends them as they are.
            if (canonical_image_ref(ref) != ref)
                invalid(key, "must be an image reference in canonical form (docs/BUILDS.md)");
            if (!list.empty() && ref <= list.back())
                invalid(key, "is out of order or listed twice (the list is sorted)");
            list.push_back(ref);
        }
        out.base_images = std::move(list);
    }
    return out;
}

BindPins bind_pins(const json& value, const Config& config) {
    if (!podman_compose(config.backend))
        invalid("pins", "is only for the compose backend with podman-compose");
    const Object obj(value, "pins", {"engine", "binary", "sources"});
    BindPins out;
    out.engine = host_path(obj.required("engine"), obj.key("engine"), config);
    out.binary = host_path(obj.required("binary"), obj.key("binary"), config);
    out.sources = checkout_path_list(obj.required("sources"), obj.key("sources"));
    for (std::size_t i = 0; i < out.sources.size(); ++i) {
        const std::string& source = out.sources[i];
        if (i > 0 && source <= out.sources[i - 1])
            invalid(index_key(obj.key("sources"), i), "is out of order or listed twice");
        // The walk before each command covers every pinned source too.
        if (!std::binary_search(config.checkout_paths.begin(), config.checkout_paths.end(), source))
            invalid(index_key(obj.key("sources"), i), "is not in checkout_paths");
    }
    return out;
}

SettleSettings settle_settings(const json& value, const Config& config) {
    const Object obj(value, "settle", {"engine", "project", "seconds", "definitions"});
    SettleSettings out;
    out.engine = host_path(obj.required("engine"), obj.key("engine"), config);
    // A stack's containers are found by the labels compose gives its own
    // (docs/COMPOSE.md, "A stack's services"); only podman was tried there.
    if (stack_backend(config.backend.kind) &&
        out.engine.substr(out.engine.rfind('/') + 1) != "podman")
        invalid(obj.key("engine"), "must be podman for the stack backend");
    out.project = string(obj.required("project"), obj.key("project"));
    if (!is_project_name(out.project))
        invalid(obj.key("project"), "must match ^[a-z0-9][a-z0-9_-]{0,62}$");
    // One project name for every row: the builds tag and the compose rows
    // pass -p with build.project.
    if (compose_backend(config.backend.kind) && config.build &&
        config.build->project != out.project)
        invalid(obj.key("project"), "must be build.project (\"" + config.build->project + "\")");
    out.seconds = static_cast<int>(integer(obj.required("seconds"), obj.key("seconds"), 1,
                                           kMaxSettleSeconds, "must be 1 to 600"));
    if (const json* definitions = obj.optional("definitions")) {
        if (!compose_backend(config.backend.kind))
            invalid(obj.key("definitions"), "is only for the compose backend");
        if (!definitions->is_object())
            invalid(obj.key("definitions"), "must be an object of service: sha256");
        for (const auto& [service, hash] : definitions->items()) {
            const std::string key = obj.key("definitions") + "." + service;
            if (!std::binary_search(config.services.begin(), config.services.end(), service))
                invalid(key, "is not a service");
            const std::string text = string(hash, key);
            if (!sys::is_lower_hex(text, 64)) invalid(key, "must be 64 lowercase hex digits");
            out.definitions.emplace(service, text);
        }
    }
    return out;
}

// The engine user's podman, or its rootless dockerd (docs/DOCKER.md): bind
// pins enter the person's own engine with `podman unshare`, which a remote
// client cannot (docs/ENGINE-USER.md, "Bind sources").
EngineIdentity engine_identity(const json& value, const Config& config) {
    const Object obj(value, "engine", {"user", "socket", "relay"});
    EngineIdentity out;
    out.user = string(obj.required("user"), obj.key("user"));
    if (!is_user_name(out.user)) invalid(obj.key("user"), "must match ^[a-z_][a-z0-9_-]{0,31}$");
    out.socket = host_path(obj.required("socket"), obj.key("socket"), config);
    out.relay = host_path(obj.required("relay"), obj.key("relay"), config);
    if (config.pins)
        invalid("engine", "cannot go with pins: a remote engine's bind sources are not pinned");
    return out;
}

// A verb whose timeout exceeds the budget would never be taken by a drain
// (docs/ARCHITECTURE.md, drain step 7): refuse the config instead of starving it.
void check_budget(const Config& config) {
    const int budget = config.drain.time_budget_seconds;
    auto check = [&](std::string_view name, int seconds) {
        if (seconds > budget) {
            invalid(join_key("timeouts", name), "must not exceed drain.time_budget_seconds (" +
                                                    std::to_string(budget) +
                                                    "): no drain would ever take such a request");
        }
    };
    check("default", config.timeouts.default_seconds);
    check("rebuild", config.timeouts.rebuild_seconds);
    for (const auto& [verb, seconds] : config.timeouts.per_verb) check(verb_name(verb), seconds);
}

Config read_config(const json& root) {
    const Object top(
        root, "",
        {"version",      "slug",     "project_dir", "spool_dir",      "state_dir",
         "policy_file",  "parser",   "allow_root",  "notify_command", "file_mode",
         "agent_gid",    "backend",  "services",    "buildable",      "tcb",
         "limits",       "timeouts", "drain",       "retention",      "systemd",
         "join_network", "run_dir",  "rendered",    "checkout_paths", "audit_budget",
         "build",        "pins",     "settle",      "unpinned_binds", "accept_uncontained_engine",
         "engine",       "snapshot"});
    Config c;
    const json& version = top.required("version");
    if (!version.is_number_integer() || version.get<std::int64_t>() != 1)
        invalid("version", "must be 1 (the only version this build reads)");
    c.version = 1;

    c.slug = string(top.required("slug"), "slug");
    if (!is_valid_slug(c.slug)) invalid("slug", "must match ^[a-z0-9][a-z0-9-]{0,62}$");

    c.project_dir = absolute_path(top.required("project_dir"), "project_dir");
    c.spool_dir = absolute_path(top.required("spool_dir"), "spool_dir");
    if (!is_inside(c.spool_dir, c.project_dir)) invalid("spool_dir", "must lie inside project_dir");
    c.state_dir = host_path(top.required("state_dir"), "state_dir", c);
    c.policy_file = host_path(top.required("policy_file"), "policy_file", c);
    c.parser = host_path(top.required("parser"), "parser", c);
    c.snapshot = host_path(top.required("snapshot"), "snapshot", c);

    c.allow_root = boolean(top.required("allow_root"), "allow_root");
    c.file_mode = file_mode(top.required("file_mode"), "file_mode");
    const json& gid = top.required("agent_gid");
    if (!gid.is_null()) {
        c.agent_gid = static_cast<gid_t>(
            integer(gid, "agent_gid", 0, kMaxGid, "must be null or a group id (0 to 4294967294)"));
    }

    c.backend = backend(top.required("backend"), c);
    c.services = service_list(top.required("services"), "services");
    c.buildable = service_list(top.required("buildable"), "buildable");
    for (std::size_t i = 0; i < c.buildable.size(); ++i) {
        if (!std::binary_search(c.services.begin(), c.services.end(), c.buildable[i]))
            invalid(index_key("buildable", i), "\"" + c.buildable[i] + "\" is not in services");
    }
    c.tcb = tcb_list(top.required("tcb"), "tcb");
    // Host-only: the agent must reach neither the tree nor its parent, and a
    // mount of the project must not expose the state dir through it.
    c.run_dir = host_path(top.required("run_dir"), "run_dir", c);
    if (is_inside_or_at(c.project_dir, c.run_dir))
        invalid("run_dir", "must not contain project_dir");
    if (is_inside_or_at(c.run_dir, c.state_dir) || is_inside_or_at(c.state_dir, c.run_dir))
        invalid("run_dir", "must lie outside state_dir (and not contain it)");
    if (const json* rendered = top.optional("rendered")) {
        c.rendered = tcb_list(*rendered, "rendered");
        for (std::size_t i = 0; i < c.rendered.size(); ++i) {
            if (!c.rendered[i].sha256)
                invalid(index_key("rendered", i) + ".sha256", "must be 64 lowercase hex digits");
        }
    }
    if (const json* paths = top.optional("checkout_paths")) {
        c.checkout_paths = checkout_path_list(*paths, "checkout_paths");
    }
    c.limits = limits(top.required("limits"));
    c.timeouts = timeouts(top.required("timeouts"));
    c.drain = drain(top.required("drain"));
    c.retention = retention(top.required("retention"));
    if (const json* budget = top.optional("audit_budget")) c.audit_budget = audit_budget(*budget);
    c.systemd = systemd(top.required("systemd"), c);
    c.join_network = join_network(top.required("join_network"), c);
    if (const json* build = top.optional("build")) c.build = build_settings(*build, c);
    if (const json* pins = top.optional("pins")) c.pins = bind_pins(*pins, c);
    if (const json* settle = top.optional("settle")) c.settle = settle_settings(*settle, c);
    if (const json* unpinned = top.optional("unpinned_binds")) {
        if (!compose_backend(c.backend.kind))
            invalid("unpinned_binds", "is only for the compose backend");
        c.unpinned_binds = checkout_path_list(*unpinned, "unpinned_binds");
        for (std::size_t i = 0; i < c.unpinned_binds.size(); ++i) {
            if (c.unpinned_binds[i] == ".")
                invalid(index_key("unpinned_binds", i), "is the checkout root, whose bind holds");
            if (i > 0 && c.unpinned_binds[i] <= c.unpinned_binds[i - 1])
                invalid(index_key("unpinned_binds", i), "is out of order or listed twice");
        }
    }
    if (const json* engine = top.optional("engine")) c.engine = engine_identity(*engine, c);
    if (const json* accept = top.optional("accept_uncontained_engine")) {
        c.accept_uncontained_engine = boolean(*accept, "accept_uncontained_engine");
    }
    if (const json* notify = top.optional("notify_command"))
        c.notify_command = notify_command(*notify, c);
    check_budget(c);
    return c;
}

// nlohmann/json keeps the last of two equal keys; a duplicate must be an
// error instead, so the parse callback tracks each object's keys and the
// dotted path to them.
json parse_rejecting_duplicates(std::string_view text) {
    struct Frame {
        bool array = false;
        std::size_t index = 0;  // arrays: position of the next element
        std::string key;        // dotted path of this container
        std::string last_key;   // objects: the key whose value comes next
        std::set<std::string> seen;
    };
    std::vector<Frame> frames;
    auto child_key = [&frames]() -> std::string {
        if (frames.empty()) return "";
        const Frame& parent = frames.back();
        return parent.array ? index_key(parent.key, parent.index)
                            : join_key(parent.key, parent.last_key);
    };
    auto element_done = [&frames] {
        if (!frames.empty() && frames.back().array) ++frames.back().index;
    };
    json::parser_callback_t callback = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start: {
                Frame frame;
                frame.array = event == json::parse_event_t::array_start;
                frame.key = child_key();
                frames.push_back(std::move(frame));
                break;
            }
            case json::parse_event_t::key: {
                Frame& frame = frames.back();
                auto key = parsed.get<std::string>();
                if (!frame.seen.insert(key).second)
                    invalid(join_key(frame.key, key), "appears twice");
                frame.last_key = std::move(key);
                break;
            }
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                frames.pop_back();
                element_done();
                break;
            case json::parse_event_t::value:
                element_done();
                break;
        }
        return true;
    };
    return json::parse(text.begin(), text.end(), callback, /*allow_exceptions=*/true,
                       /*ignore_comments=*/false);
}

}  // namespace

// The compose project name as podman-compose normalises one: [a-z0-9_-].
bool is_user_name(std::string_view name) {
    auto lower_or_underscore = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
    return !name.empty() && name.size() <= 32 && lower_or_underscore(name[0]) &&
           std::all_of(name.begin(), name.end(), [&](char c) {
               return lower_or_underscore(c) || (c >= '0' && c <= '9') || c == '-';
           });
}

bool is_project_name(std::string_view name) {
    return !name.empty() && name.size() <= 63 &&
           std::all_of(name.begin(), name.end(),
                       [](char c) {
                           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                                  c == '-';
                       }) &&
           name[0] != '-' && name[0] != '_';
}

std::vector<std::string> build_allowed_images(const BuildSettings& build) {
    std::vector<std::string> out = build.base_images.value_or(std::vector<std::string>{});
    for (const ServiceBuild& s : build.services) {
        // A tag install wrote that has no canonical form allows nothing.
        if (auto image = canonical_image_ref(s.image)) out.push_back(std::move(*image));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

const ServiceBuild* find_build(const std::optional<BuildSettings>& build,
                               std::string_view service) {
    if (!build) return nullptr;
    for (const ServiceBuild& b : build->services) {
        if (b.service == service) return &b;
    }
    return nullptr;
}

int Timeouts::for_verb(Verb verb) const {
    for (const auto& [v, seconds] : per_verb) {
        if (v == verb) return seconds;
    }
    return verb == Verb::Rebuild ? rebuild_seconds : default_seconds;
}

BindSourceOf bind_source_of(const Config& config, std::string_view path) {
    BindSourceOf of;
    const std::string& project = config.project_dir;
    of.inside = path == project || (path.size() > project.size() && path.starts_with(project) &&
                                    path[project.size()] == '/');
    if (!config.pins) return of;
    for (const std::string& rel : config.pins->sources) {
        if (path == bind_pin_path(config.run_dir, rel)) {
            of.pinned = rel;
            break;
        }
    }
    return of;
}

Result<Config> parse_config(std::string_view text) {
    if (text.size() > kMaxConfigBytes) return make_error("bridge.json: larger than 1 MiB");
    try {
        return read_config(parse_rejecting_duplicates(text));
    } catch (const Invalid& e) {
        return make_error(e.message);
    } catch (const json::exception& e) {
        return make_error(std::string(kPrefix) + "not valid JSON: " + e.what());
    }
}

Result<Config> load_config(const std::string& path) {
    // O_NONBLOCK|O_NOCTTY: a FIFO or tty planted here must not block or
    // become our terminal before fstat refuses it.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (!fd) {
        if (errno == ELOOP) return make_error(path + ": is a symlink; refusing to follow it");
        return make_error(sys::errno_text(path + ": cannot open"));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return make_error(sys::errno_text(path + ": fstat"));
    if (!S_ISREG(st.st_mode)) return make_error(path + ": is not a regular file");
    if ((st.st_mode & S_IWOTH) != 0)
        return make_error(path + ": is world-writable; refusing to trust it");
    if (static_cast<std::uint64_t>(st.st_size) > kMaxConfigBytes)
        return make_error(path + ": is larger than 1 MiB");

    std::string text;
    if (!sys::read_all(fd.get(), text, kMaxConfigBytes))
        return make_error(sys::errno_text(path + ": read"));
    // The file may grow after fstat: bound what we hold either way.
    if (text.size() > kMaxConfigBytes) return make_error(path + ": is larger than 1 MiB");
    auto config = parse_config(text);
    if (!config) {
        // Name the real file instead of the generic "bridge.json".
        std::string message = config.error().message;
        if (message.starts_with(kPrefix)) message.replace(0, kPrefix.size() - 2, path);
        return make_error(std::move(message));
    }
    return config;
}

}  // namespace hb
