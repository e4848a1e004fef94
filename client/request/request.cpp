#include "client/request/request.hpp"

#include "client/request/audit_lookup.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "client/request/request_message.hpp"
#include "client/request/request_response.hpp"
#include "client/request/request_spool.hpp"
#include "client/request/request_wait.hpp"
#include "display/visible.hpp"

namespace hb::client {

using display::visible;
using display::visible_text;

namespace {

constexpr const char* kUsage =
    "usage: hostbridge request [--project-dir DIR] [--timeout SECONDS] [--no-wait]\n"
    "                          [--lines N] [--since CURSOR] VERB [ARG]\n"
    "\n"
    "Asks the host, through the hostbridge spool, to run VERB (ping, status,\n"
    "health, logs SERVICE, up, down, restart SERVICE, rebuild SERVICE, init,\n"
    "join-network). Which verbs and services are allowed is the host's decision.\n"
    "\n"
    "  --project-dir DIR  the spool is DIR/untracked/hostbridge (on the host: the\n"
    "                     spool of the install whose project directory is DIR)\n"
    "  --timeout SECONDS  how long to wait for the host to take the request up\n"
    "                     (default 120); once it runs, wait for the end; when a\n"
    "                     person must approve it, wait until it expires\n"
    "  --no-wait          publish the request, print its name, exit\n"
    "  --lines N          logs only: the last N lines (1 to 1000), each after\n"
    "                     the engine's timestamp; with --since, the first N\n"
    "                     after the cursor\n"
    "  --since CURSOR     logs only: only the lines after CURSOR, the cursor a\n"
    "                     previous --lines or --since answer printed\n"
    "  --help             this text\n"
    "\n"
    "After --lines or --since, a done answer prints `cursor: NS:K` on stderr\n"
    "(pass it as --since to get only what is new) and `more: true` when more\n"
    "lines wait (ask again with it at once). Where this install's logs takes\n"
    "neither, the host refuses them.\n"
    "\n"
    "Spool without --project-dir: $HOSTBRIDGE_SPOOL, else\n"
    "$REPO_ROOT/untracked/hostbridge, else untracked/hostbridge in the git top level.\n"
    "On the host (this user has a hostbridge config directory) only the spool of\n"
    "one of this user's installs: the one $HOSTBRIDGE_SPOOL names, else the one\n"
    "whose project directory holds the current directory; nothing in the checkout\n"
    "(.git, links) decides it.\n"
    "\n"
    "Exit: 0 done (output on stdout); 70 denied, expired or failed (output on\n"
    "stdout, reason on stderr); 75 no answer in time (a request the host never\n"
    "took up is withdrawn; one held for a person's approval never is); 64 usage\n"
    "error (nothing written); 128+N interrupted by signal N while waiting.\n";

struct Options {
    std::optional<std::string> project_dir;
    int timeout_seconds = 120;
    bool no_wait = false;
    bool help = false;
    std::string verb;
    std::optional<std::string> arg;
    LogWindow window;
};

// "hostbridge request" or "hostbridge-agent request": how messages and the
// usage text name this program.
std::string g_program = "hostbridge request";
// Set by the admin tool on the host: how to read what the audit log records.
AuditLookup g_audit;

void say(const std::string& text) {
    std::fprintf(stderr, "%s: %s\n", g_program.c_str(), text.c_str());
}

std::string usage_text() {
    std::string text = kUsage;
    const std::string from = "hostbridge request";
    text.replace(text.find(from), from.size(), g_program);
    // The synopsis' second line stays under its first option.
    if (g_program.size() > from.size())
        text.insert(text.find('\n') + 1, g_program.size() - from.size(), ' ');
    return text;
}

int usage_error(const std::string& text) {
    say(text);
    std::fputs(usage_text().c_str(), stderr);
    return kRequestUsage;
}

std::optional<int> parse_seconds(std::string_view text) {
    if (text.empty() || text.size() > 9) return std::nullopt;
    int value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return std::nullopt;
        value = value * 10 + (c - '0');
    }
    return value;
}

// Returns the options, or the exit code of a usage error already reported.
std::variant<Options, int> parse_options(int argc, char** argv) {
    Options options;
    int i = 0;
    auto value_of = [&](std::string_view arg, std::string_view flag) -> std::optional<std::string> {
        if (arg.size() > flag.size() && arg.substr(0, flag.size()) == flag &&
            arg[flag.size()] == '=')
            return std::string(arg.substr(flag.size() + 1));
        if (arg != flag || i + 1 >= argc) return std::nullopt;
        return std::string(argv[++i]);
    };
    for (; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg == "--help" || arg == "-h") {
            options.help = true;
            return options;
        }
        if (arg == "--no-wait") {
            options.no_wait = true;
        } else if (arg == "--timeout" || arg.starts_with("--timeout=")) {
            auto value = value_of(arg, "--timeout");
            if (!value) return usage_error("--timeout needs a number of seconds");
            auto seconds = parse_seconds(*value);
            if (!seconds) return usage_error("--timeout takes whole seconds, not '" + *value + "'");
            options.timeout_seconds = *seconds;
        } else if (arg == "--project-dir" || arg.starts_with("--project-dir=")) {
            auto value = value_of(arg, "--project-dir");
            if (!value || value->empty()) return usage_error("--project-dir needs a directory");
            options.project_dir = *value;
        } else if (arg == "--lines" || arg.starts_with("--lines=")) {
            options.window.lines = value_of(arg, "--lines");
            if (!options.window.lines) return usage_error("--lines needs a number of lines");
        } else if (arg == "--since" || arg.starts_with("--since=")) {
            options.window.since = value_of(arg, "--since");
            if (!options.window.since) return usage_error("--since needs a cursor");
        } else if (arg.starts_with("-")) {
            return usage_error("unknown option: " + std::string(arg));
        } else {
            break;
        }
    }
    if (i >= argc) return usage_error("missing VERB");
    if (argc - i > 2) return usage_error("too many arguments");
    options.verb = argv[i];
    if (auto shape = check_verb_shape(options.verb); !shape)
        return usage_error(shape.error().message + ": '" + options.verb + "'");
    if (argc - i == 2) {
        options.arg = argv[i + 1];
        if (auto shape = check_arg_shape(*options.arg); !shape)
            return usage_error(shape.error().message + ": '" + *options.arg + "'");
    }
    // Checked as the host checks them (the shell client says the same):
    // a typo fails here rather than taking a rate-limit slot.
    if (options.window.any() && options.verb != "logs")
        return usage_error("--lines and --since are for logs only, not '" + options.verb + "'");
    if (options.window.lines && !check_lines(*options.window.lines))
        return usage_error("--lines must be a number from 1 to 1000, not '" +
                           *options.window.lines + "'");
    if (options.window.since && !check_since(*options.window.since))
        return usage_error("--since must be a cursor that a logs answer returned (NS:K), not '" +
                           *options.window.since + "'");
    return options;
}

void write_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
        ssize_t n = ::write(fd, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // a closed stdout is the reader's choice
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
}

// The line for a final state that is not `done`, on stderr; the exit code.
int report(ResponseState state, const std::optional<std::string>& reason,
           std::optional<std::int64_t> exit_code) {
    if (state == ResponseState::Done) return kRequestDone;
    std::string text(state_name(state));
    if (reason) text += ": " + visible(*reason);
    if (exit_code) text += " (exit code " + std::to_string(*exit_code) + ")";
    say(text);
    return kRequestRefused;
}

// On the host, the answer is what the audit log records
// (client/request/audit_lookup.hpp, confirm_answer): no final event, an
// unreadable log, another outcome or another request than the one sent is
// never reported as `done`.
int report_checked(const Response& response, const HostInstall& install, const Options& sent,
                   const std::string& name) {
    const Confirmed c =
        confirm_answer(response, g_audit(install, name),
                       SentAsk{sent.verb, sent.arg, sent.window.lines, sent.window.since}, name);
    if (c.note) say(*c.note);
    const int code = report(c.state, c.reason, c.exit_code);
    return c.refused ? kRequestRefused : code;
}

// After a done windowed logs answer: where to go on from, on stderr as
// lines a caller can pick out (stdout is the log text), as the shell client
// prints them. The agent can forge them: made visible.
void tell_window(const Response& response) {
    std::string text;
    if (response.cursor) text += "cursor: " + visible(*response.cursor) + "\n";
    if (response.more.value_or(false)) text += "more: true\n";
    write_all(STDERR_FILENO, text);
}

// Prints a final answer: output on stdout, and for anything but `done` the
// state, reason and exit code on stderr; after a done windowed request,
// the cursor.
// The agent can forge any response: on a terminal, the output is shown with
// every control character but newline and tab made visible (an OSC 52
// clipboard write, a cursor move, a lone CR); through a pipe it stays byte
// for byte, as docs/PROTOCOL.md promises scripts. The reason is one line,
// always made visible.
int finish(const Response& response, const SpoolPlace& place, const Options& sent,
           const std::string& name) {
    if (response.output) {
        write_all(STDOUT_FILENO,
                  ::isatty(STDOUT_FILENO) != 0 ? visible_text(*response.output) : *response.output);
    }
    // Only on the host (an install located in the person's config) is there
    // a log to check against; a client in a container has none.
    const int code = g_audit && place.install
                         ? report_checked(response, *place.install, sent, name)
                         : report(response.state, response.reason, response.exit_code);
    if (code == kRequestDone && sent.window.any()) tell_window(response);
    return code;
}

// The first `pending` answer, once: a person must act on the host, and the
// caller (an agent) should tell its person rather than send it again.
void tell_pending(const std::string& name, const Response& pending) {
    std::string text = "a person must approve request " + name +
                       " on the host before it runs; waiting for their decision";
    text += pending.expires_at_text ? " until " + *pending.expires_at_text
                                    : std::string(" (the host gave no expiry time)");
    if (pending.reason) text += ": " + visible(*pending.reason);
    say(text);
}

// How long a pending request stays allowable, for the messages below.
std::string until(const WaitResult& waited) {
    const auto& expires = waited.latest->expires_at_text;
    return expires ? " (until " + *expires + ")" : std::string();
}

void withdraw(const Spool& spool, const std::string& name) {
    if (spool.withdraw(name))
        say("request " + name + " withdrawn: it will not run");
    else
        say("the host has request " + name + "; it may still run: see responses/" +
            Spool::response_name(name));
}

int wait_for_answer(const Spool& spool, const SpoolPlace& place, const Options& sent,
                    const std::string& name, ResponseWatch& watch) {
    const int timeout_seconds = sent.timeout_seconds;
    bool told = false;
    auto on_tick = [&](const Response* latest) {
        if (told || latest == nullptr || latest->state != ResponseState::Pending) return;
        told = true;
        tell_pending(name, *latest);
    };
    WaitResult waited =
        wait_for_response(spool, name, watch, std::chrono::seconds(timeout_seconds), on_tick);
    // A pending request is the host's, held for a person: never withdrawn.
    switch (waited.end) {
        case WaitResult::End::Answered:
            return finish(waited.response, place, sent, name);
        case WaitResult::End::Signal:
            if (waited.pending()) {
                say("interrupted: request " + name +
                    " was not decided; it may still be allowed later on the host" + until(waited) +
                    ": see responses/" + Spool::response_name(name));
            } else {
                withdraw(spool, name);
            }
            return 128 + waited.signal;
        case WaitResult::End::Undecided:
            say("request " + name + " was not decided: it expired at " +
                waited.latest->expires_at_text.value_or("its expires_at") +
                " and can no longer be allowed; the host will answer `expired`");
            return kRequestNoAnswer;
        case WaitResult::End::NoAnswer:
        case WaitResult::End::External:
            break;
    }
    say("no answer from the host within " + std::to_string(timeout_seconds) + " s" +
        (waited.last_state.empty() ? "" : " (last state: " + shown_state(waited.last_state) + ")"));
    withdraw(spool, name);
    return kRequestNoAnswer;
}

int run(int argc, char** argv) {
    auto parsed = parse_options(argc, argv);
    if (auto* code = std::get_if<int>(&parsed)) return *code;
    const Options& options = std::get<Options>(parsed);
    if (options.help) {
        std::fputs(usage_text().c_str(), stdout);
        return 0;
    }

    auto where = find_spool(options.project_dir);
    // Not finding the spool (on the host: no install of this user serving
    // it) is a usage error: the caller must point at it.
    if (!where) {
        say(where.error().message);
        return kRequestUsage;
    }
    auto spool = Spool::open(*where);
    if (!spool) {
        say(spool.error().message);
        return kRequestNoAnswer;
    }
    auto message = make_request(options.verb, options.arg, options.window);
    if (!message) {
        say(message.error().message);
        return kRequestNoAnswer;
    }
    if (options.no_wait) {
        if (auto published = spool->publish(*message); !published) {
            say(published.error().message);
            return kRequestNoAnswer;
        }
        std::printf("%s\n", message->name.c_str());
        return 0;
    }

    // Signals are taken before publishing: from then on, giving up withdraws.
    ResponseWatch watch(spool->responses_path(), Spool::response_name(message->name));
    if (auto published = spool->publish(*message); !published) {
        say(published.error().message);
        return kRequestNoAnswer;
    }
    return wait_for_answer(*spool, *where, options, message->name, watch);
}

}  // namespace

int run_request(int argc, char** argv, std::string_view program, AuditLookup audit) {
    g_program = std::string(program);
    g_audit = std::move(audit);
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        say(std::string("internal error: ") + e.what());
        return kRequestNoAnswer;
    }
}

}  // namespace hb::client
