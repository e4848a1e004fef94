#include "admin/install/install_options.hpp"

#include <grp.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "admin/install/spool_setup.hpp"
#include "admin/util/args.hpp"
#include "admin/util/fs_util.hpp"
#include "admin/util/slug.hpp"
#include "engines/registry_admin.hpp"
#include "ipc/image_ref.hpp"
#include "ipc/wire.hpp"

namespace hb::admin {

const char* const kInstallHelp =
    R"(usage: hostbridge install [--project-dir DIR] [--slug SLUG] [--spool REL]
                          [--backend stack|compose] [--stack-bin PATH_OR_NAME]
                          [--compose-file FILE] [--compose-cmd CMD]
                          [--services a,b,c] [--buildable a,b] [--tcb FILE]...
                          [--build-context S=DIR [--containerfile S=FILE]]...
                          [--stack-project NAME] [--engine-user NAME]
                          [--unpinned-bind PATH]...
                          [--base-image REF]... [--drop-base-image REF]...
                          [--agent-container NAME --network NAME] [--engine PATH_OR_NAME]
                          [--rate-limit N/SECONDS] [--read-rate-limit N/SECONDS]
                          [--ttl SECONDS] [--max-held N] [--verb-timeout VERB=SECONDS]...
                          [--linger SECONDS]
                          [--file-mode OCTAL] [--agent-gid GID] [--allow-root]
                          [--accept-uncontained-engine] [--no-systemd] [--force]
                          [--rename-project] [--adopt-containers]

Puts the bridge in front of a project checkout, or updates it: run it again
at any time; it says what changed. It checks that DIR is the top of a git
work tree, creates the spool (default untracked/hostbridge, ignored by git),
resolves every binary to an absolute path now (a path, a name on PATH, or an
alias of your interactive shell), reads the services from the compose file,
pins the SHA-256 of every trusted project file, writes bridge.json, seeds
policy.conf once, installs the executor and parser, drops the agent client
(`request`) and AGENT.md into the spool, and writes and enables the systemd
--user units.

  --project-dir DIR      the project checkout (default: the current directory)
  --slug SLUG            name of this bridge (default: DIR's basename, lowercased)
  --spool REL            spool path inside the project (default untracked/hostbridge)
  --backend KIND         stack (default with --stack-bin) or compose
  --stack-bin P          the project's orchestration script
  --compose-file FILE    compose file, relative to DIR (default: compose.yaml,
                         compose.yml, docker-compose.yaml, docker-compose.yml)
  --compose-cmd CMD      compose command (default: docker compose or podman-compose)
  --services a,b,c       the services a request may name (default: from the compose file)
  --buildable a,b        the services `rebuild` may name (default: those with build:)
  --tcb FILE             another trusted file to pin, inside DIR (repeatable)
  --build-context S=DIR  stack backend: `rebuild S` hands the stack a host-owned,
                         screened snapshot of DIR (relative to the project) in
                         HOSTBRIDGE_BUILD_CONTEXT (repeatable; docs/BUILDS.md)
  --containerfile S=FILE S's Containerfile, relative to its context (default
                         Containerfile); screened before every build
  --base-image REF       an image a build may start FROM or copy files from,
                         besides its own stages, scratch and the services'
                         images (repeatable; `alpine` is docker.io/library/
                         alpine:latest; docs/BUILDS.md, "What a build may name")
  --drop-base-image REF  take REF off the recorded list of base images
                         (repeatable; refused together with --base-image REF)
  --stack-project NAME   stack backend: its containers run on podman, labelled
                         com.docker.compose.project=NAME and
                         com.docker.compose.service=SERVICE; up, restart and
                         rebuild then wait until the services settled, status
                         and health report each, logs can follow
                         (docs/COMPOSE.md, "A stack's services")
  --engine-user NAME     the project's containers and builds belong to NAME's
                         rootless podman service, reached through its socket
                         (NAME's ~/engine/podman.sock); `hostbridge engine
                         setup` (as root) creates NAME and runs this for you
                         (docs/ENGINE-USER.md)
  --unpinned-bind PATH   compose with docker, or podman as root: accept the
                         bind source PATH (relative to DIR, below it) that the
                         engine resolves by path at every container start,
                         where the agent can swap it for a link (repeatable;
                         refused otherwise; docs/COMPOSE.md)
  --agent-container NAME, --network NAME, --engine P
                         configure join-network: ENGINE network connect NETWORK NAME
  --rate-limit N/S       mutating verbs per window (default 60/600)
  --read-rate-limit N/S  status, health, logs per window (default 120/60)
  --ttl SECONDS          requests older than this expire (default 600)
  --linger SECONDS       how long a drain waits for more requests before it
                         exits, 0 to 3600 (default 10)
  --max-held N           requests held for a person at once (policy ask;
                         default 10)
  --verb-timeout V=S     timeout of verb V, or of every verb with default=S
                         (default 300, rebuild 1200; repeatable)
  --file-mode OCTAL      mode of files published into the spool (default 0644)
  --agent-gid GID        the agent runs as another uid in group GID: tmp/ and
                         requests/ become 2770 in that group
  --allow-root           let the drain run as root (CI, throwaway machines only)
  --accept-uncontained-engine
                         let up and rebuild run unattended where policy.conf says
                         auto although no engine user contains an escape through
                         the engine (without it they wait for a person there;
                         SECURITY.md, "Two postures")
  --no-systemd           write the units but do not enable them (run `watch` instead)
  --force                take over a slug installed for another project dir
  --rename-project       compose: move an install that recorded an older compose
                         project name to this install's own (docs/COMPOSE.md,
                         "The project's name"; install prints the steps first)
  --adopt-containers     compose on rootless podman: remove the project's
                         containers made before the bridge (by hand, or
                         unpinned) and make them again through the bridge's
                         up, without asking (install lists them and asks on
                         a terminal; docs/COMPOSE.md, "Adopting the
                         containers made before")

Exit: 0 installed (or nothing to change), 1 failed, 2 usage error.
)";

namespace {

const OptionSpec kSpecs[] = {
    {"project-dir", true, false},     {"slug", true, false},
    {"spool", true, false},           {"backend", true, false},
    {"stack-bin", true, false},       {"compose-file", true, false},
    {"compose-cmd", true, false},     {"services", true, false},
    {"buildable", true, false},       {"tcb", true, true},
    {"agent-container", true, false}, {"network", true, false},
    {"engine", true, false},          {"rate-limit", true, false},
    {"read-rate-limit", true, false}, {"ttl", true, false},
    {"linger", true, false},          {"max-held", true, false},
    {"verb-timeout", true, true},     {"file-mode", true, false},
    {"agent-gid", true, false},       {"allow-root", false, false},
    {"no-systemd", false, false},     {"force", false, false},
    {"build-context", true, true},    {"containerfile", true, true},
    {"unpinned-bind", true, true},    {"stack-project", true, false},
    {"engine-user", true, false},     {"accept-uncontained-engine", false, false},
    {"rename-project", false, false}, {"adopt-containers", false, false},
    {"base-image", true, true},       {"drop-base-image", true, true},
};

// S=VALUE of --build-context and --containerfile: a service name and a
// path that stays inside (normal, relative, "." allowed for a context).
Result<std::pair<std::string, std::string>> service_path(const std::string& option,
                                                         const std::string& text) {
    const auto eq = text.find('=');
    const std::string service = text.substr(0, eq);
    if (eq == std::string::npos || !is_valid_arg_shape(service))
        return make_error("--" + option + " must be SERVICE=PATH, not " + text);
    auto normal = normal_inside(text.substr(eq + 1));
    if (!normal)
        return make_error("--" + option + " " + text +
                          ": the path must be relative, stay inside and hold no control "
                          "character");
    if (normal->empty()) {
        if (option == "containerfile") return make_error("--containerfile " + text + ": no file");
        *normal = ".";
    }
    return std::pair{service, *normal};
}

Result<std::vector<std::string>> split_list(const std::string& option, const std::string& text) {
    std::set<std::string> items;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t comma = text.find(',', pos);
        std::string item = text.substr(pos, comma == std::string::npos ? comma : comma - pos);
        if (!item.empty()) {
            if (!is_valid_arg_shape(item)) {
                return make_error("--" + option + ": '" + item +
                                  "' is not a valid service name (^[a-z][a-z0-9_-]*$, at most 64)");
            }
            items.insert(item);
        }
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    if (items.size() > kMaxServices) {
        return make_error("--" + option + " lists more than " + std::to_string(kMaxServices) +
                          " services");
    }
    return std::vector<std::string>(items.begin(), items.end());
}

Result<Window> parse_window(const std::string& option, const std::string& text) {
    auto slash = text.find('/');
    if (slash != std::string::npos) {
        auto count = parse_number(std::string_view(text).substr(0, slash), 1000000);
        auto seconds = parse_number(std::string_view(text).substr(slash + 1), 86400 * 7);
        if (count && seconds && *count > 0 && *seconds > 0) {
            return Window{static_cast<int>(*count), static_cast<int>(*seconds)};
        }
    }
    return make_error("--" + option + " must be N/SECONDS with both positive, e.g. 20/600");
}

// Sets `field` from --`name` through `parse` (split_list, parse_window),
// when the option is given; leaves it alone otherwise.
template <typename Field, typename Parse>
Result<void> read_option(const ParsedArgs& a, const std::string& name, Parse parse, Field& field) {
    if (auto text = a.get(name)) {
        auto value = parse(name, *text);
        if (!value) return value.error();
        field = *value;
    }
    return {};
}

}  // namespace

Result<InstallOptions> parse_install_options(int argc, char** argv) {
    auto parsed = parse_args(std::span<char* const>(argv, static_cast<std::size_t>(argc)), kSpecs);
    if (!parsed) return parsed.error();
    const ParsedArgs& a = *parsed;
    InstallOptions o;
    o.help = a.help;
    if (o.help) return o;

    o.project_dir = absolute_path(a.get("project-dir").value_or("."));
    if (auto slug = a.get("slug")) {
        if (!is_valid_slug(*slug)) {
            return make_error("--slug " + *slug +
                              " is not a valid slug (^[a-z0-9][a-z0-9-]{0,62}$)");
        }
        o.slug = slug;
    }
    o.spool_rel = a.get("spool").value_or(std::string(kDefaultSpool));
    while (o.spool_rel.size() > 1 && o.spool_rel.back() == '/') o.spool_rel.pop_back();
    if (auto valid = validate_spool_rel(o.spool_rel); !valid) return valid.error();

    if (auto backend = a.get("backend")) {
        o.backend = backend_kind_named(*backend);
        if (!o.backend) return make_error("--backend must be stack or compose, not " + *backend);
    }
    if (auto stack = a.get("stack-bin")) {
        o.stack_bin = stack->find('/') != std::string::npos ? absolute_path(*stack) : *stack;
    }
    if ((o.backend && stack_backend(*o.backend)) && !o.stack_bin) {
        return make_error("--backend stack needs --stack-bin");
    }
    if ((o.backend && compose_backend(*o.backend)) && o.stack_bin) {
        return make_error("--stack-bin makes no sense with --backend compose");
    }
    if (auto file = a.get("compose-file")) {
        if (file->empty()) return make_error("--compose-file is empty");
        o.compose_file = file;
    }
    if (auto cmd = a.get("compose-cmd")) {
        std::vector<std::string> words;
        std::size_t pos = 0;
        while (pos < cmd->size()) {
            std::size_t space = cmd->find(' ', pos);
            std::string word = cmd->substr(pos, space == std::string::npos ? space : space - pos);
            if (!word.empty()) words.push_back(word);
            pos = space == std::string::npos ? cmd->size() : space + 1;
        }
        if (words.empty()) return make_error("--compose-cmd is empty");
        o.compose_cmd = words;
    }
    if (auto r = read_option(a, "services", split_list, o.services); !r) return r.error();
    if (auto r = read_option(a, "buildable", split_list, o.buildable); !r) return r.error();
    if (o.services && o.buildable) {
        for (const auto& b : *o.buildable) {
            if (!std::binary_search(o.services->begin(), o.services->end(), b)) {
                return make_error("--buildable names " + b + ", which --services does not list");
            }
        }
    }
    for (const auto& tcb : a.all("tcb")) {
        if (tcb.empty()) return make_error("--tcb is empty");
        o.tcb.push_back(tcb);
    }
    for (const auto& text : a.all("build-context")) {
        auto pair = service_path("build-context", text);
        if (!pair) return pair.error();
        for (const auto& [service, dir] : o.build_contexts)
            if (service == pair->first)
                return make_error("--build-context names " + service + " twice");
        o.build_contexts.push_back(*pair);
    }
    for (const auto& text : a.all("containerfile")) {
        auto pair = service_path("containerfile", text);
        if (!pair) return pair.error();
        const bool has_context = std::any_of(o.build_contexts.begin(), o.build_contexts.end(),
                                             [&](const auto& c) { return c.first == pair->first; });
        if (!has_context)
            return make_error("--containerfile " + text + ": no --build-context for " +
                              pair->first);
        if (pair->second.ends_with(".in"))
            return make_error("--containerfile " + text +
                              ": must not end in .in (buildah preprocesses those)");
        o.containerfiles.push_back(*pair);
    }
    for (const char* option : {"base-image", "drop-base-image"}) {
        auto& list =
            std::string_view(option) == "base-image" ? o.base_images : o.dropped_base_images;
        for (const auto& text : a.all(option)) {
            auto image = canonical_image_ref(text);
            if (!image)
                return make_error("--" + std::string(option) + " " + text +
                                  ": not an image reference the bridge compares (docs/BUILDS.md, "
                                  "\"What a build may name\")");
            list.push_back(std::move(*image));
        }
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    for (const auto& drop : o.dropped_base_images) {
        for (const auto& image : o.base_images) {
            if (image_refs_match(image, drop))
                return make_error("--base-image " + image + " and --drop-base-image " + drop +
                                  ": choose one");
        }
    }
    if (o.base_images.size() > kMaxBaseImages)
        return make_error("--base-image: at most " + std::to_string(kMaxBaseImages) + " images");
    for (const auto& text : a.all("unpinned-bind")) {
        if (!is_checkout_path(text) || text == ".")
            return make_error("--unpinned-bind " + text +
                              " must be a path below DIR, relative and normal (a bind of DIR "
                              "itself needs no opt-in)");
        o.unpinned_binds.push_back(text);
    }
    std::sort(o.unpinned_binds.begin(), o.unpinned_binds.end());
    o.unpinned_binds.erase(std::unique(o.unpinned_binds.begin(), o.unpinned_binds.end()),
                           o.unpinned_binds.end());
    if (!o.unpinned_binds.empty() && (o.backend && stack_backend(*o.backend)))
        return make_error("--unpinned-bind is for the compose backend");
    if (!o.build_contexts.empty() && (o.backend && compose_backend(*o.backend)))
        return make_error(
            "--build-context is for the stack backend: with compose, each "
            "service's context comes from the compose file");
    o.stack_project = a.get("stack-project");
    if (o.stack_project) {
        if ((o.backend && compose_backend(*o.backend)))
            return make_error(
                "--stack-project is for the stack backend: with compose, the project is "
                "the compose file's");
        if (!is_project_name(*o.stack_project))
            return make_error("--stack-project " + *o.stack_project +
                              " must match ^[a-z0-9][a-z0-9_-]{0,62}$ (a compose project name)");
    }
    o.engine_user = a.get("engine-user");
    if (o.engine_user && !is_user_name(*o.engine_user))
        return make_error("--engine-user " + *o.engine_user +
                          " must be a login name (^[a-z_][a-z0-9_-]{0,31}$)");
    o.agent_container = a.get("agent-container");
    o.network = a.get("network");
    o.engine = a.get("engine");
    if (o.agent_container.has_value() != o.network.has_value()) {
        return make_error("--agent-container and --network go together");
    }
    if (o.engine && !o.network) return make_error("--engine is only used with --network");
    if (o.agent_container) {
        if (!is_valid_container_name(*o.agent_container)) {
            return make_error("--agent-container " + *o.agent_container +
                              " is not a container name");
        }
        if (!is_valid_container_name(*o.network)) {
            return make_error("--network " + *o.network + " is not a network name");
        }
    }
    if (o.engine) {
        if (o.engine->find('/') != std::string::npos) o.engine = absolute_path(*o.engine);
    }
    if (auto r = read_option(a, "rate-limit", parse_window, o.rate_limit); !r) return r.error();
    if (auto r = read_option(a, "read-rate-limit", parse_window, o.read_rate_limit); !r)
        return r.error();
    if (auto ttl = a.get("ttl")) {
        auto n = parse_number(*ttl, 86400 * 7);
        if (!n || *n < 1) return make_error("--ttl must be a positive number of seconds");
        o.ttl_seconds = static_cast<int>(*n);
    }
    if (auto linger = a.get("linger")) {
        auto n = parse_number(*linger, 3600);
        if (!n) return make_error("--linger must be a number of seconds from 0 to 3600");
        o.linger_seconds = static_cast<int>(*n);
    }
    if (auto held = a.get("max-held")) {
        auto n = parse_number(*held, 1000);
        if (!n || *n < 1) return make_error("--max-held must be a number from 1 to 1000");
        o.max_held = static_cast<int>(*n);
    }
    for (const auto& vt : a.all("verb-timeout")) {
        const auto eq = vt.find('=');
        long seconds = 0;
        if (eq != std::string::npos) {
            seconds = parse_number(std::string_view(vt).substr(eq + 1), 86400).value_or(0);
        }
        if (seconds < 1) {
            return make_error("--verb-timeout must be VERB=SECONDS with positive SECONDS, not " +
                              vt);
        }
        const std::string verb = vt.substr(0, eq);
        if (verb != "default") {
            auto v = verb_from_name(verb);
            if (!v) return make_error("--verb-timeout names an unknown verb " + verb);
            if (*v == Verb::Ping) return make_error("--verb-timeout: ping runs no command");
        }
        o.verb_timeouts.emplace_back(verb, static_cast<int>(seconds));
    }
    if (auto mode = a.get("file-mode")) {
        bool octal =
            !mode->empty() && mode->size() <= 4 &&
            std::all_of(mode->begin(), mode->end(), [](char c) { return c >= '0' && c <= '7'; });
        mode_t m = octal ? static_cast<mode_t>(std::stoul(*mode, nullptr, 8)) : 07777;
        if (!octal || m > 0777) return make_error("--file-mode must be an octal mode such as 0644");
        if ((m & 0002) != 0)
            return make_error("--file-mode must not make published files world-writable");
        if ((m & 0600) != 0600) return make_error("--file-mode must let the owner read and write");
        o.file_mode = m;
    }
    if (auto gid = a.get("agent-gid")) {
        if (auto n = parse_number(*gid, 0x7fffffff)) {
            o.agent_gid = static_cast<gid_t>(*n);
        } else if (const group* g = ::getgrnam(gid->c_str()); g != nullptr) {
            o.agent_gid = g->gr_gid;
        } else {
            return make_error("--agent-gid " + *gid + " is neither a number nor a group name");
        }
    }
    o.allow_root = a.has("allow-root");
    o.accept_uncontained_engine = a.has("accept-uncontained-engine");
    o.no_systemd = a.has("no-systemd");
    o.force = a.has("force");
    o.rename_project = a.has("rename-project");
    o.adopt_containers = a.has("adopt-containers");
    if (o.rename_project && (o.backend && stack_backend(*o.backend)))
        return make_error("--rename-project is for the compose backend");
    if (o.adopt_containers && (o.stack_bin || (o.backend && stack_backend(*o.backend))))
        return make_error("--adopt-containers is for the compose backend");
    return o;
}

namespace {

std::string joined(const std::vector<std::string>& words, char separator) {
    std::string out;
    for (const auto& w : words) {
        if (!out.empty()) out += separator;
        out += w;
    }
    return out;
}

std::string window_text(const Window& w) {
    return std::to_string(w.count) + "/" + std::to_string(w.seconds);
}

}  // namespace

// Derived from the parsed options, not from the words typed, so it cannot
// drift from what parse_install_options accepts: only what differs from a
// default is repeated (tests/cli/test_install_options.cpp parses it back).
std::vector<std::string> reinstall_args(const InstallOptions& o) {
    const InstallOptions d;
    std::vector<std::string> re = {"--project-dir", o.project_dir};
    const auto add = [&re](const char* flag, std::string value) {
        re.emplace_back(flag);
        re.push_back(std::move(value));
    };
    if (o.spool_rel != kDefaultSpool) add("--spool", o.spool_rel);
    if (o.backend) add("--backend", std::string(backend_kind_name(*o.backend)));
    if (o.stack_bin) add("--stack-bin", *o.stack_bin);
    if (o.compose_file) add("--compose-file", *o.compose_file);
    if (o.compose_cmd) add("--compose-cmd", joined(*o.compose_cmd, ' '));
    if (o.services) add("--services", joined(*o.services, ','));
    if (o.buildable) add("--buildable", joined(*o.buildable, ','));
    for (const auto& tcb : o.tcb) add("--tcb", tcb);
    for (const auto& [service, dir] : o.build_contexts) add("--build-context", service + "=" + dir);
    for (const auto& [service, file] : o.containerfiles)
        add("--containerfile", service + "=" + file);
    for (const auto& path : o.unpinned_binds) add("--unpinned-bind", path);
    for (const auto& image : o.base_images) add("--base-image", image);
    // Not --drop-base-image: bridge.json's list is what it changed, and a
    // replay by `upgrade` would only say the image is not listed.
    if (o.stack_project) add("--stack-project", *o.stack_project);
    if (o.engine_user) add("--engine-user", *o.engine_user);
    if (o.agent_container) add("--agent-container", *o.agent_container);
    if (o.network) add("--network", *o.network);
    if (o.engine) add("--engine", *o.engine);
    if (o.rate_limit != d.rate_limit) add("--rate-limit", window_text(o.rate_limit));
    if (o.read_rate_limit != d.read_rate_limit) {
        add("--read-rate-limit", window_text(o.read_rate_limit));
    }
    if (o.ttl_seconds != d.ttl_seconds) add("--ttl", std::to_string(o.ttl_seconds));
    if (o.linger_seconds != d.linger_seconds) add("--linger", std::to_string(o.linger_seconds));
    if (o.max_held != d.max_held) add("--max-held", std::to_string(o.max_held));
    for (const auto& [verb, seconds] : o.verb_timeouts) {
        add("--verb-timeout", verb + "=" + std::to_string(seconds));
    }
    if (o.file_mode != d.file_mode) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(o.file_mode));
        add("--file-mode", mode);
    }
    if (o.agent_gid) add("--agent-gid", std::to_string(*o.agent_gid));
    if (o.allow_root) re.emplace_back("--allow-root");
    if (o.accept_uncontained_engine) re.emplace_back("--accept-uncontained-engine");
    if (o.no_systemd) re.emplace_back("--no-systemd");
    return re;
}

}  // namespace hb::admin
