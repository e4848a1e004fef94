// `hostbridge allow NAME`, `deny NAME`: a person's say on the requests the
// policy holds (`ask`; `pending`, admin/commands/pending.cpp, lists them).
// The admin tool only reads the records the drain wrote in <state_dir>/held
// and publishes a decision next to one (common/held.hpp); the executor runs
// or refuses it, checking every gate again (docs/DECIDE-AND-RUN.md, "Held
// for a person").
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "admin/audit/held_decision.hpp"
#include "admin/commands/commands.hpp"
#include "admin/commands/grants.hpp"
#include "admin/commands/pending.hpp"
#include "admin/install/install_record.hpp"
#include "admin/install/systemd_user.hpp"
#include "admin/util/args.hpp"
#include "client/request/audit_lookup.hpp"
#include "common/config.hpp"
#include "common/held.hpp"
#include "display/visible.hpp"
#include "ipc/audit_segments.hpp"
#include "ipc/request_name.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::admin {

using display::visible;

namespace {

constexpr std::size_t kMaxReason = 200;

const char* const kAllowHelp = R"(usage: hostbridge allow [--slug SLUG] NAME [DIGEST]
       hostbridge allow [--slug SLUG] --for DURATION [--runs N] VERB [SERVICE]

Shows the held request NAME again and has the executor run it now: the
installed service is started (or `hostbridge-executor drain` is run where
the install has no systemd units). The executor checks the policy, the
integrity gate and the rate limit again before it runs anything, and
this command waits for the end the audit log records (at most the verb's
timeout and 30 s) and says it: ran and succeeded, failed, or refused, with
the exit code and reason. When the run outlasts that, it says so and
prints the command that follows it in the audit log. Refused
when NAME is not held, has expired, was decided already, or when the install
changed since it was held (a re-install or `hostbridge approve`): then the
agent must send it again. A decision is used once.

DIGEST is what `hostbridge pending` (and the notification) showed for it:
the decision is made only when NAME still holds that very request. Without
DIGEST, on a terminal, the request is shown and you are asked to confirm;
elsewhere DIGEST is required.

With --for, a grant for a working session: until DURATION from now (30m,
2h; 1m to 12h) the executor runs VERB (on SERVICE, the one the verb names;
no other) without holding it, at most N times (--runs, default 100), each
run checked as an unattended one and recorded in the audit log with the
grant's id. Only a verb policy.conf holds (`ask`) can be granted; one held
for containment (an engine verb without an engine user) never. `pending`
and `list` show live grants, `hostbridge revoke` ends them sooner.

Exit: 0 it ran and succeeded (or is still running), or granted; 1 refused
or failed, 2 usage error.
)";

const char* const kDenyHelp = R"(usage: hostbridge deny [--slug SLUG] [--reason TEXT] NAME [DIGEST]

Refuses the held request NAME: the agent is answered `denied` with the
reason "denied by a person on the host", and TEXT after a colon (printable
text, at most 200 bytes), once the executor took the decision up and the
audit log records it (waited for as by `hostbridge allow`). DIGEST as for
`hostbridge allow`: without it, on a terminal, you are asked to confirm;
elsewhere it is required.

Exit: 0 denied, 1 refused or failed, 2 usage error.
)";

const OptionSpec kAllowSpecs[] = {
    {"slug", true, false}, {"for", true, false}, {"runs", true, false}};
const OptionSpec kDenySpecs[] = {{"slug", true, false}, {"reason", true, false}};

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
    if (args.has("for")) return check_grant(args);
    if (args.has("runs")) {
        print_error("allow", "--runs counts the runs of a grant: give --for DURATION too");
        return kExitUsage;
    }
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

// The audit log's newest final event of one request, after a given seq:
// what the executor recorded, which the agent cannot write
// (client/request/audit_lookup.hpp reads it the same way for a request
// client on the host).
struct RequestEnd {
    std::uint64_t last_seq = 0;  // the log's newest event
    std::optional<std::uint64_t> seq;
    std::string event;
    std::optional<client::ResponseState> state;
    std::optional<std::int64_t> exit_code;
    std::string reason;
};

// A string field, or "" (a field may be null or absent).
std::string text_of(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::optional<std::uint64_t> seq_of(const nlohmann::json& j) {
    const auto seq = j.find("seq");
    if (seq == j.end() || !seq->is_number_unsigned()) return std::nullopt;
    return seq->get<std::uint64_t>();
}

// Newest segment first, each line naming `request` parsed; an older segment
// is read only while the newer ones start after `after`.
RequestEnd request_end(const std::string& state_dir, const std::string& request,
                       std::uint64_t after) {
    RequestEnd end;
    UniqueFd dir(::open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return end;
    auto files = audit_log_files(dir.get());
    if (!files) return end;
    for (auto file = files->rbegin(); file != files->rend(); ++file) {
        std::ifstream in(state_dir + "/" + *file, std::ios::binary);
        std::optional<std::uint64_t> first;
        std::string line, last;
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            if (!first) first = seq_of(nlohmann::json::parse(line, nullptr, false));
            last = line;
            if (line.find(request) == std::string::npos) continue;
            const auto j = nlohmann::json::parse(line, nullptr, false);
            if (!j.is_object() || text_of(j, "request") != request) continue;
            const std::string event = text_of(j, "event");
            const auto state = client::final_state_of(event);
            const auto seq = seq_of(j);
            if (!state || !seq || *seq <= after) continue;
            end.seq = seq;
            end.event = event;
            end.state = state;
            end.exit_code.reset();
            if (const auto code = j.find("exit_code"); code != j.end() && code->is_number_integer())
                end.exit_code = code->get<std::int64_t>();
            end.reason = text_of(j, "reason");
        }
        if (!last.empty() && end.last_seq == 0)
            end.last_seq = seq_of(nlohmann::json::parse(last, nullptr, false)).value_or(0);
        if (first && *first <= after) break;
    }
    return end;
}

// Waits (bounded) for the end of `request` the log records after seq
// `after`; nullopt when none came in time.
std::optional<RequestEnd> wait_for_end(const std::string& state_dir, const std::string& request,
                                       std::uint64_t after, std::chrono::seconds limit) {
    const auto stop = std::chrono::steady_clock::now() + limit;
    for (;;) {
        RequestEnd end = request_end(state_dir, request, after);
        if (end.seq) return end;
        if (std::chrono::steady_clock::now() >= stop) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

// Says how it went only from the audit log's final event for the request,
// recorded after the decision was published (`after`); "denied" or
// "allowed" only when the drain took up this very decision
// (held/NAME.decided holds its nonce, executor/drain_held.cpp): a second
// person whose decision was published after the first was taken up came
// second, and is told so.
int report_outcome(std::string_view command, int held_fd, const std::string& name,
                   const common::HeldDecision& mine, const Config& config,
                   const common::HeldRequest& held, std::uint64_t after) {
    const bool allow = mine.allow;
    const std::string said = allow ? "allowed: " : "denied: ";
    const Whose taken =
        whose_decision(held_fd, common::held_name(name, common::HeldFile::Decided), mine);
    if (taken != Whose::Mine) {
        if (taken == Whose::Another) {
            print_error(command, name +
                                     " was decided by someone else first (a decision is used "
                                     "once); yours was not used");
            return kExitFailure;
        }
        if (whose_decision(held_fd, common::held_name(name, common::HeldFile::Decision), mine) !=
            Whose::Mine) {
            // Taken up and ended meanwhile: the log below says how.
            if (!request_end(config.state_dir, held.request, after).seq) {
                print_error(command, name +
                                         " was not decided by you: it expired first, or another "
                                         "decision was used (the agent's answer says which)");
                return kExitFailure;
            }
        }
    }
    const int limit = config.timeouts.for_verb(held.verb) + 30;
    std::cout << said << name << "; handed to the executor, waiting for its end (at most " << limit
              << " s; interrupting this wait stops nothing)\n"
              << std::flush;
    const auto end =
        wait_for_end(config.state_dir, held.request, after, std::chrono::seconds(limit));
    if (!end) {
        std::cout << name << ": not ended yet; the executor has it. Follow it with `"
                  << self_command() << " audit --slug " << config.slug
                  << " --follow` (its final event: succeeded, failed or denied)\n";
        return kExitOk;
    }
    const std::string reason = end->reason.empty() ? "" : ": " + visible(end->reason);
    const std::string code =
        end->exit_code ? " (exit code " + std::to_string(*end->exit_code) + ")" : "";
    if (end->state == client::ResponseState::Done) {
        std::cout << name << ": the executor checked it again and ran it: succeeded" << code
                  << "\n";
        return kExitOk;
    }
    if (!allow && end->state == client::ResponseState::Denied) {
        std::cout << name << ": the agent was answered denied" << reason << "\n";
        return kExitOk;
    }
    std::cout << name << ": " << visible(end->event) << code << reason << "\n";
    return kExitFailure;
}

int decide(Invocation& in, bool allow) {
    const std::string_view command = allow ? "allow" : "deny";
    const std::string& name = in.args.positional[0];
    auto opened = open_held_install(in.paths);
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
    show_held(*held, now, opened->config);
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
    // What the log holds before the decision: its end is what comes after.
    const std::uint64_t before =
        request_end(opened->config.state_dir, held->request, UINT64_MAX).last_seq;
    auto published = common::publish_decision(fd, name, admin::render_decision(decision));
    if (!published) {
        print_error(command, published.error().message);
        return kExitFailure;
    }
    if (!*published) {
        print_error(command, name + " was decided already (a decision is used once)");
        return kExitFailure;
    }
    wake_executor(command, in.paths, opened->config, fd,
                  common::held_name(name, common::HeldFile::Decision));
    return report_outcome(command, fd, name, decision, opened->config, *held, before);
}

int run_allow(Invocation& in) {
    if (in.args.has("for")) return run_grant(in);
    return decide(in, true);
}

int run_deny(Invocation& in) {
    return decide(in, false);
}

}  // namespace

const Subcommand kAllow{"allow",   kAllowHelp, kAllowSpecs, Subcommand::Needs::Install, check_allow,
                        run_allow, 2};
const Subcommand kDeny{"deny",     kDenyHelp, kDenySpecs, Subcommand::Needs::Install,
                       check_deny, run_deny,  2};

}  // namespace hb::admin
