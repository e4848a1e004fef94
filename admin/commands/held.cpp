// `hostbridge pending`, `allow NAME`, `deny NAME`: a person's say on the
// requests the policy holds (`ask`). The admin tool only reads the records
// the drain wrote in <state_dir>/held and publishes a decision next to one
// (common/held.hpp); the executor runs or refuses it, checking every gate
// again (docs/DECIDE-AND-RUN.md, "Held for a person").
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <thread>

#include "admin/audit/held_decision.hpp"
#include "admin/commands/commands.hpp"
#include "admin/install/systemd_user.hpp"
#include "admin/util/args.hpp"
#include "common/config.hpp"
#include "common/held.hpp"
#include "display/visible.hpp"
#include "ipc/request_name.hpp"
#include "ipc/screen_wire.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr std::size_t kMaxReason = 200;

const char* const kPendingHelp = R"(usage: hostbridge pending [--slug SLUG]

Lists the requests the policy holds for a person (MODE_<verb>=ask): name,
its digest, verb, service, how long ago it was held, when it expires, what
would run (in the names of docs/ARGV-TABLE.md) and how many later requests
were merged into it. `hostbridge allow NAME DIGEST` runs one, `hostbridge
deny NAME DIGEST` refuses it; one not decided by its expiry is answered
`expired`.

Exit: 0 listed (possibly nothing), 1 failed, 2 usage error.
)";

const char* const kAllowHelp = R"(usage: hostbridge allow [--slug SLUG] NAME [DIGEST]

Shows the held request NAME again and has the executor run it now: the
installed service is started (or `hostbridge-executor drain` is run where
the install has no systemd units). The executor checks the policy, the
integrity gate and the rate limit again before it runs anything. Refused
when NAME is not held, has expired, was decided already, or when the install
changed since it was held (a re-install or `hostbridge approve`): then the
agent must send it again. A decision is used once.

DIGEST is what `hostbridge pending` (and the notification) showed for it:
the decision is made only when NAME still holds that very request. Without
DIGEST, on a terminal, the request is shown and you are asked to confirm;
elsewhere DIGEST is required.

Exit: 0 allowed, 1 refused or failed, 2 usage error.
)";

const char* const kDenyHelp = R"(usage: hostbridge deny [--slug SLUG] [--reason TEXT] NAME [DIGEST]

Refuses the held request NAME: the agent is answered `denied` with the
reason "denied by a person on the host", and TEXT after a colon (printable
text, at most 200 bytes). DIGEST as for `hostbridge allow`: without it, on
a terminal, you are asked to confirm; elsewhere it is required.

Exit: 0 denied, 1 refused or failed, 2 usage error.
)";

const OptionSpec kSlugOnly[] = {{"slug", true, false}};
const OptionSpec kDenySpecs[] = {{"slug", true, false}, {"reason", true, false}};

std::string duration(std::int64_t seconds) {
    if (seconds < 0) seconds = 0;
    if (seconds < 120) return std::to_string(seconds) + " s";
    if (seconds < 7200) return std::to_string(seconds / 60) + " min";
    return std::to_string(seconds / 3600) + " h";
}

std::string service_of(const common::HeldRequest& held) {
    return held.service ? visible(*held.service) : "-";
}

// NAME, on the request-name schema (nothing else can be held, and it is
// never a path), then optionally DIGEST: the short digest `pending` shows,
// or the whole one.
std::optional<int> check_name(const ParsedArgs& args, std::string_view command) {
    if (args.positional.empty() || args.positional.size() > 2 ||
        !is_request_name(args.positional[0])) {
        print_error(command, args.positional.empty()
                                 ? "which request? `hostbridge pending` lists them"
                             : args.positional.size() > 2
                                 ? "too many arguments: NAME and its DIGEST"
                                 : "`" + visible(args.positional[0]) +
                                       "` is not a request name (`hostbridge pending` lists them)");
        return kExitUsage;
    }
    if (args.positional.size() == 2) {
        const std::string& digest = args.positional[1];
        if (!sys::is_lower_hex(digest, common::kShortDigest) && !sys::is_lower_hex(digest, 64)) {
            print_error(command, "`" + visible(digest) +
                                     "` is not a digest: `hostbridge pending` shows it (" +
                                     std::to_string(common::kShortDigest) + " hex digits)");
            return kExitUsage;
        }
    }
    return std::nullopt;
}

std::optional<int> check_allow(const ParsedArgs& args) {
    return check_name(args, "allow");
}

std::optional<int> check_deny(const ParsedArgs& args) {
    if (auto stop = check_name(args, "deny")) return stop;
    const std::string reason = args.get("reason").value_or("");
    // One line that shows as itself (display/visible.hpp): no control byte, tab
    // or newline, valid UTF-8, nothing that reorders text.
    if (reason.size() > kMaxReason || visible(reason) != reason) {
        print_error("deny", "--reason must be printable text of at most 200 bytes");
        return kExitUsage;
    }
    return std::nullopt;
}

struct Opened {
    Config config;
    UniqueFd held_fd;
};

Result<Opened> open_install(const InstallPaths& paths) {
    auto config = load_config(paths.config_file);
    if (!config) return config.error();
    auto fd = common::open_held_dir(paths.state_dir);
    if (!fd) return fd.error();
    return Opened{std::move(*config), std::move(*fd)};
}

Result<common::HeldRequest> read_held(int held_fd, const std::string& name) {
    auto text = common::read_held_file(held_fd, name);
    if (!text) return text.error();
    if (!*text) {
        const bool taken = sys::exists_at(held_fd, name + std::string(common::kTakenSuffix));
        return make_error(name + (taken ? " is being run or refused by the executor now"
                                        : " is not held: it was decided or expired, or never "
                                          "held (`hostbridge pending` lists what is)"));
    }
    auto held = common::parse_held(**text);
    if (!held) return make_error("held/" + name + " cannot be read: " + held.error().message);
    return held;
}

// The Containerfile of the snapshot taken when `held` was held, the one
// that builds once allowed (engines/build_input/build_input.hpp, hold_build): read
// beneath it with no link followed, every line made visible.
void show_held_build(const Config& config, const common::HeldRequest& held) {
    const ServiceBuild* build = held.service ? find_build(config.build, *held.service) : nullptr;
    if (build == nullptr) return;
    std::cout << "snapshot:  " << held.snapshot << " (what builds once allowed)\n";
    const std::string dir =
        config.run_dir + "/.hostbridge-held/" + held.request + "/" + *held.service;
    UniqueFd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    open_how how{};
    how.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd =
        root ? ::syscall(SYS_openat2, root.get(), build->containerfile.c_str(), &how, sizeof how)
             : -1;
    UniqueFd file(static_cast<int>(fd));
    std::string text;
    if (!file || !sys::read_all(file.get(), text, kMaxContainerfileBytes)) {
        std::cout << "           (its " << visible(build->containerfile)
                  << " cannot be read: " << std::strerror(errno) << ")\n";
        return;
    }
    std::cout << visible(build->containerfile) << " as it builds (screened):\n";
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::cout << "  | " << visible(text.substr(start, end - start)) << "\n";
        start = end + 1;
    }
}

void show(const common::HeldRequest& held, std::time_t now, const Config& config) {
    std::cout << "request:   " << held.request << "\n"
              << "digest:    " << common::held_short_digest(held) << "\n"
              << "verb:      " << verb_name(held.verb) << "\n"
              << "service:   " << service_of(held) << "\n"
              << "would run: " << visible(held.command) << "\n"
              << "held:      " << duration(now - held.held_at) << " ago; expires in "
              << duration(held.expires_at - now) << "\n";
    if (!held.merged.empty()) {
        std::cout << "merged:    " << held.merged.size()
                  << " later request(s) for the same get the same answer\n";
    }
    if (!held.snapshot.empty()) show_held_build(config, held);
}

// The executor takes the decision up now: the installed service, or a
// drain of its own where there are no units. A running `watch` wakes for
// the decision by itself (executor/wakeup.hpp).
bool taken_up_within(int held_fd, const std::string& decision, std::chrono::seconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (sys::exists_at(held_fd, decision)) {
        if (std::chrono::steady_clock::now() >= end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

void wake_executor(std::string_view command, const InstallPaths& paths, const Config& config,
                   int held_fd, const std::string& decision) {
    if (config.systemd.enabled) {
        if (auto systemctl = SystemctlUser::find(); systemctl && systemctl->manager_reachable()) {
            auto started = systemctl->run({"start", "--no-block", paths.service_unit_name});
            // A drain in its last moments absorbs the start without looking
            // at held/ again: then a drain of our own takes the decision up.
            if (started && started->ok() &&
                taken_up_within(held_fd, decision, std::chrono::seconds(5))) {
                return;
            }
            if (!started || !started->ok()) {
                print_warning(command, "cannot start " + paths.service_unit_name +
                                           "; running a drain instead");
            }
        }
    }
    std::vector<std::string> argv = {paths.executor, "drain", "--config", paths.config_file};
    if (config.allow_root && ::geteuid() == 0) argv.push_back("--allow-root");
    RunOptions options;
    options.timeout = std::chrono::seconds(config.timeouts.for_verb(Verb::Rebuild) + 60);
    options.out = Stream::Null;
    auto ran = run_process(argv, options);
    if (!ran || !ran->ok()) {
        print_warning(command, "the drain did not finish cleanly: " +
                                   (ran ? visible(ran->err) : ran.error().message));
    }
}

// 16 bytes from the kernel's generator as 32 hex digits: what tells this
// decision from another person's (common/held.hpp, HeldDecision::nonce).
Result<std::string> random_nonce() {
    unsigned char bytes[16];
    if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
        return make_error(sys::errno_text("cannot draw a nonce"));
    }
    return sys::lower_hex(bytes, sizeof bytes);
}

// Without a digest, the person confirms what was just shown; with no
// terminal to ask on, nothing is decided.
int confirm_on_terminal(std::string_view command, bool allow) {
    if (::isatty(STDIN_FILENO) == 0 || ::isatty(STDOUT_FILENO) == 0) {
        print_error(command,
                    "no terminal to confirm on: pass the digest shown above (or by `hostbridge "
                    "pending`) after NAME; nothing was decided");
        return kExitUsage;
    }
    std::cout << (allow ? "Allow" : "Deny") << " this request? [y/N] " << std::flush;
    std::string answer;
    if (!std::getline(std::cin, answer) || (answer != "y" && answer != "yes")) {
        print_error(command, "not confirmed; nothing was decided");
        return kExitFailure;
    }
    return kExitOk;
}

enum class Whose { Mine, Another, None };

// Whose decision held/<file> holds, by its nonce.
Whose whose_decision(int held_fd, const std::string& file, const common::HeldDecision& mine) {
    auto text = common::read_held_file(held_fd, file);
    if (!text || !*text) return Whose::None;
    auto found = common::parse_decision(**text);
    return found && found->nonce == mine.nonce ? Whose::Mine : Whose::Another;
}

// Says "runs"/"refused" only when the drain took up this very decision
// (held/NAME.decided holds its nonce, executor/drain_held.cpp): a second
// person whose decision was published after the first was taken up came
// second, and is told so.
int report_outcome(std::string_view command, int held_fd, const std::string& name,
                   const common::HeldDecision& mine) {
    const bool allow = mine.allow;
    switch (whose_decision(held_fd, name + std::string(common::kDecidedSuffix), mine)) {
        case Whose::Mine:
            std::cout << (allow ? "allowed: " : "denied: ") << name
                      << (allow ? "; the executor checked it again and ran it (the agent's "
                                  "answer says how it went)\n"
                                : "; the agent is told so\n");
            return kExitOk;
        case Whose::Another:
            print_error(command, name +
                                     " was decided by someone else first (a decision is used "
                                     "once); yours was not used");
            return kExitFailure;
        case Whose::None:
            break;
    }
    if (whose_decision(held_fd, name + std::string(common::kDecisionSuffix), mine) == Whose::Mine) {
        std::cout << (allow ? "allowed: " : "denied: ") << name
                  << "; the executor takes it up when the drain running now is done\n";
        return kExitOk;
    }
    print_error(command, name +
                             " was not decided by you: it expired first, or another "
                             "decision was used (the agent's answer says which)");
    return kExitFailure;
}

int decide(Invocation& in, bool allow) {
    const std::string_view command = allow ? "allow" : "deny";
    const std::string& name = in.args.positional[0];
    auto opened = open_install(in.paths);
    if (!opened) {
        print_error(command, opened.error().message);
        return kExitFailure;
    }
    const int fd = opened->held_fd.get();
    auto held = read_held(fd, name);
    if (!held) {
        print_error(command, held.error().message);
        return kExitFailure;
    }
    const std::time_t now = std::time(nullptr);
    show(*held, now, opened->config);
    // The decision names one record: the one whose digest the person read
    // in `pending` or the notification, or the one shown just now and
    // confirmed on this terminal. Never a request held later under NAME.
    if (in.args.positional.size() == 2) {
        if (!common::held_digest(*held).starts_with(in.args.positional[1])) {
            print_error(command, name +
                                     " holds another request than the one whose digest you "
                                     "gave (it is shown above): nothing was decided");
            return kExitFailure;
        }
    } else if (auto confirmed = confirm_on_terminal(command, allow); confirmed != kExitOk) {
        return confirmed;
    }
    if (held->expires_at <= now) {
        print_error(command, name + " has expired: it can no longer be " +
                                 (allow ? "allowed" : "denied") + " (the agent is told so)");
        wake_executor(command, in.paths, opened->config, fd, name);
        return kExitFailure;
    }
    // What the person was shown must still be what would run.
    if (common::config_generation(opened->config) != held->generation) {
        print_error(command, "the install changed since " + name +
                                 " was held (a re-install or `hostbridge approve`): what is "
                                 "shown may no longer be what would run; refused. The agent "
                                 "must send it again");
        return kExitFailure;
    }
    auto nonce = random_nonce();
    if (!nonce) {
        print_error(command, nonce.error().message);
        return kExitFailure;
    }
    const common::HeldDecision decision{allow, held->generation, in.args.get("reason").value_or(""),
                                        common::held_digest(*held), *nonce};
    const std::string decision_name = name + std::string(common::kDecisionSuffix);
    auto published =
        common::publish_held_file(fd, decision_name, admin::render_decision(decision), true);
    if (!published) {
        print_error(command, published.error().message);
        return kExitFailure;
    }
    if (!*published) {
        print_error(command, name + " was decided already (a decision is used once)");
        return kExitFailure;
    }
    wake_executor(command, in.paths, opened->config, fd, decision_name);
    return report_outcome(command, fd, name, decision);
}

int run_allow(Invocation& in) {
    return decide(in, true);
}

int run_deny(Invocation& in) {
    return decide(in, false);
}

int run_pending(Invocation& in) {
    auto opened = open_install(in.paths);
    if (!opened) {
        print_error("pending", opened.error().message);
        return kExitFailure;
    }
    auto names = common::list_held(opened->held_fd.get());
    if (!names) {
        print_error("pending", names.error().message);
        return kExitFailure;
    }
    const std::time_t now = std::time(nullptr);
    std::size_t shown = 0;
    for (const std::string& name : *names) {
        if (!is_request_name(name)) continue;
        auto held = read_held(opened->held_fd.get(), name);
        if (!held) {
            print_warning("pending", held.error().message);
            continue;
        }
        if (shown++ > 0) std::cout << "\n";
        show(*held, now, opened->config);
    }
    if (shown == 0) std::cout << "no request waits for a person\n";
    return kExitOk;
}

}  // namespace

const Subcommand kPending{"pending", kPendingHelp, kSlugOnly, Subcommand::Needs::Install,
                          nullptr,   run_pending};
const Subcommand kAllow{"allow",     kAllowHelp, kSlugOnly, Subcommand::Needs::Install,
                        check_allow, run_allow,  2};
const Subcommand kDeny{"deny",     kDenyHelp, kDenySpecs, Subcommand::Needs::Install,
                       check_deny, run_deny,  2};

}  // namespace hb::admin
