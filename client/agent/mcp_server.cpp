#include "client/agent/mcp_server.hpp"
#include "client/request/audit_lookup.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "client/request/request_message.hpp"
#include "client/request/request_spool.hpp"
#include "client/request/request_wait.hpp"
#include "display/visible.hpp"
#include "ipc/json_depth.hpp"
#include "ipc/unique_fd.hpp"
#include "packaging/version.hpp"

namespace hb::agent {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Newest first; an unknown version asked for gets the newest.
constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
// A line longer than this is answered with a parse error and skipped.
constexpr std::size_t kMaxLine = 4u << 20;

constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
// Calls in flight at once, one thread each: a burst past it is answered
// at once with a tool error (docs/MCP.md), so the thread count stays
// bounded whatever the client sends (a container's pids limit, issue 45).
constexpr std::size_t kMaxCallsInFlight = 32;

void log(const std::string& text) {
    std::fprintf(stderr, "hostbridge-agent mcp: %s\n", text.c_str());
}

// One JSON-RPC message a line on stdout, whole, from any thread.
class Writer {
  public:
    explicit Writer(int fd) : fd_(fd) {}
    void send(const json& message) {
        // Command output need not be UTF-8: invalid bytes become U+FFFD
        // rather than an exception. The line itself may reach a terminal
        // (a person watching the server, a client's log): every character
        // display/visible.hpp escapes is sent as a \uXXXX escape, the same
        // JSON value.
        std::string line =
            display::visible_json(message.dump(-1, ' ', false, json::error_handler_t::replace));
        line += '\n';
        std::lock_guard lock(mutex_);
        std::string_view rest = line;
        while (!rest.empty()) {
            ssize_t n = ::write(fd_, rest.data(), rest.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return;  // the client went away; stdin's end stops us
            rest.remove_prefix(static_cast<std::size_t>(n));
        }
    }
    void result(const json& id, json result) {
        send({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
    }
    void error(const json& id, int code, const std::string& message) {
        send({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
    }

  private:
    int fd_;
    std::mutex mutex_;
};

std::string advice_for_denied(const std::string& reason) {
    if (reason.starts_with("denied by a person"))
        return "A person on the host refused this call (policy `ask`): do not call it again "
               "for now. If the work needs it, talk to the person you work with first.";
    if (reason.find("rate limited") != std::string::npos)
        return "You are rate limited: wait as long as the reason says before calling again, "
               "and batch your changes (one call after several edits). Do not retry in a loop.";
    if (reason.find("approve") != std::string::npos)
        return "A trusted project file changed since a person approved it: the host refuses "
               "commands until they review and approve it (`hostbridge approve` on the host). "
               "Tell the person you work with; retrying will not help.";
    return "The host's rules refuse this call; retrying will not help. If you need it, tell the "
           "person you work with.";
}

struct Outcome {
    std::string state;
    std::optional<json> services;
    // A windowed logs call: where to go on from (made visible) and whether
    // lines after it were left out, as the host answered.
    std::optional<std::string> cursor;
    std::optional<bool> more;
    std::optional<std::int64_t> exit_code;
    std::optional<std::string> reason;
    std::string text;
    bool is_error = false;
};

// A string member made visible, or "?" (the file may be the agent's forgery).
std::string visible_member(const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? display::visible(it->get<std::string>()) : "?";
}

// One line per service of a settle step or of status and health's look
// (docs/PROTOCOL.md, `services`), its
// problem, and the last log lines of one that did not settle.
std::string services_text(const json& services) {
    std::string text;
    for (const json& s : services) {
        if (!s.is_object()) continue;
        text += "- " + visible_member(s, "service") + ": " + visible_member(s, "settled");
        const auto containers = s.find("containers");
        if (containers != s.end() && containers->is_array()) {
            for (const json& c : *containers) {
                if (!c.is_object()) continue;
                text += " (container " + visible_member(c, "container") + ", " +
                        visible_member(c, "state") + ", health " + visible_member(c, "health");
                if (const auto started = c.find("started_at");
                    started != c.end() && started->is_string())
                    text += ", started " + display::visible(started->get<std::string>());
                text += ")";
            }
        }
        if (const auto problem = s.find("problem"); problem != s.end() && problem->is_string())
            text += ": " + display::visible(problem->get<std::string>());
        text += "\n";
        if (const auto log = s.find("log"); log != s.end() && log->is_string())
            text += "  last log lines:\n" + display::visible_text(log->get<std::string>()) + "\n";
    }
    return text;
}

// The cursor and `more` of a done windowed logs answer, in the text too:
// not every client shows a model the structured content.
std::string window_text(const Outcome& o) {
    std::string text;
    if (o.cursor)
        text += "\n\ncursor: " + *o.cursor + " (pass it as `since` for only the lines after these)";
    if (o.more.value_or(false))
        text += std::string(o.cursor ? "\n" : "\n\n") +
                "more: true (more lines are waiting: call again at once with this cursor as "
                "`since`)";
    return text;
}

// `held`: the host held the request for a person (`pending`) before this
// answer, so `expired` means nobody decided in time, not a late bridge.
// `windowed`: the call passed `lines` or `since`.
Outcome outcome_of(const client::Response& r, int ttl_seconds, bool held, bool windowed) {
    // Everything here may be the agent's own forgery (responses/ is in its
    // checkout) and a client may show it on a person's terminal: output
    // keeps its lines, every other control byte made visible
    // (display/visible.hpp), as `hostbridge request` shows it.
    Outcome o;
    o.state = client::state_name(r.state);
    o.exit_code = r.exit_code;
    o.services = r.services;
    if (r.reason) o.reason = display::visible(*r.reason);
    std::string output = display::visible_text(r.output.value_or(""));
    // How the services settled comes first: it says whether the change is live.
    if (r.services && !r.services->empty())
        output = "Services:\n" + services_text(*r.services) + (output.empty() ? "" : "\n" + output);
    const std::string reason = o.reason.value_or("no reason given");
    if (windowed) {
        if (r.cursor) o.cursor = display::visible(*r.cursor);
        o.more = r.more;
    }
    switch (r.state) {
        case client::ResponseState::Done:
            o.text = (output.empty() ? "(done, no output)" : output) + window_text(o);
            return o;
        case client::ResponseState::Denied:
            o.text = "Refused by the host: " + reason + ".\n" + advice_for_denied(reason);
            break;
        case client::ResponseState::Failed:
            o.text = "The command failed" +
                     (r.exit_code ? " (exit code " + std::to_string(*r.exit_code) + ")"
                                  : std::string()) +
                     ": " + reason +
                     ".\nRead the output below, fix the cause, then call again; if the cause is "
                     "on the host, tell the person you work with.";
            break;
        case client::ResponseState::Expired:
            if (held) {
                o.text =
                    "No person on the host decided this request in time, so it did not "
                    "run: " +
                    reason +
                    ".\nTell the person you work with that it needs their approval; call "
                    "again when they are there to give it.";
                break;
            }
            o.text = "The host took this request up too late" +
                     (ttl_seconds > 0 ? " (over " + std::to_string(ttl_seconds) + " s)"
                                      : std::string()) +
                     ", so it did not run: " + reason + ".\nCall again if it is still needed.";
            break;
        default:
            o.text = "The host answered with an unknown state " +
                     client::shown_state(r.state_text) + ".";
            break;
    }
    if (!output.empty()) o.text += "\n\nOutput:\n" + output;
    o.is_error = true;
    return o;
}

class Server {
  public:
    Server(const ServerOptions& options, int out_fd) : options_(options), out_(out_fd) {}

    ~Server() {
        // stdin ended: stop every wait, then let each call log and finish.
        {
            std::lock_guard lock(mutex_);
            for (auto& [key, call] : calls_) {
                std::uint64_t one = 1;
                (void)!::write(call->cancel.get(), &one, sizeof one);
            }
        }
        for (auto& t : threads_) t.join();
    }

    void handle_line(std::string_view line) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
        if (line.empty()) return;
        if (!json_depth_within(line)) {
            out_.error(nullptr, kInvalidRequest,
                       "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
            return;
        }
        json message = json::parse(line, nullptr, false);
        if (message.is_discarded()) {
            out_.error(nullptr, kParseError, "parse error: not a JSON text");
            return;
        }
        if (!message.is_object()) {
            out_.error(nullptr, kInvalidRequest,
                       message.is_array() ? "batches are not supported: send one message a line"
                                          : "a message must be a JSON object");
            return;
        }
        const bool has_id = message.contains("id");
        const json id = has_id ? message["id"] : json();
        if (!message.contains("method")) return;  // a response to us: we send no requests
        if (message.value("jsonrpc", json()) != "2.0" || !message["method"].is_string() ||
            (has_id && !id.is_string() && !id.is_number_integer())) {
            if (has_id || !message["method"].is_string())
                out_.error(has_id && (id.is_string() || id.is_number_integer()) ? id : json(),
                           kInvalidRequest,
                           "invalid request: needs \"jsonrpc\": \"2.0\", a string method and a "
                           "string or integer id");
            return;
        }
        const std::string method = message["method"];
        const json params = message.contains("params") ? message["params"] : json::object();
        if (!has_id) return notification(method, params);
        if (!params.is_object()) {
            out_.error(id, kInvalidParams, "params must be an object");
            return;
        }
        // Nothing a message makes fail ends the server: the message gets an
        // error, later ones their answers.
        try {
            dispatch(id, method, params);
        } catch (const std::exception& e) {
            log(std::string("internal error: ") + e.what());
            out_.error(id, kInternalError, std::string("internal error: ") + e.what());
        }
    }

    void too_long() { out_.error(nullptr, kParseError, "parse error: a message over 4 MiB"); }

  private:
    struct Call {
        UniqueFd cancel;
        std::atomic<bool> cancelled{false};
    };

    void dispatch(const json& id, const std::string& method, const json& params) {
        if (method == "initialize") return initialize(id, params);
        if (method == "ping") return out_.result(id, json::object());
        if (method == "tools/list") {
            return out_.result(id, {{"tools", tool_list(options_.manifest, structured_)}});
        }
        if (method == "tools/call") return call(id, params);
        out_.error(id, kMethodNotFound, "method not found: " + method.substr(0, 64));
    }

    void notification(const std::string& method, const json& params) {
        if (method != "notifications/cancelled" || !params.is_object() ||
            !params.contains("requestId"))
            return;
        std::lock_guard lock(mutex_);
        auto it = calls_.find(params["requestId"].dump());
        if (it == calls_.end()) return;  // already answered, or never a call
        it->second->cancelled = true;
        std::uint64_t one = 1;
        (void)!::write(it->second->cancel.get(), &one, sizeof one);
    }

    void initialize(const json& id, const json& params) {
        std::string version = kProtocolVersions[0];
        if (params.contains("protocolVersion") && params["protocolVersion"].is_string()) {
            for (const char* known : kProtocolVersions)
                if (params["protocolVersion"] == known) version = known;
        }
        structured_ = version >= std::string("2025-06-18");
        out_.result(id, {{"protocolVersion", version},
                         {"capabilities", {{"tools", {{"listChanged", false}}}}},
                         {"serverInfo",
                          {{"name", "hostbridge"},
                           {"title", "hostbridge: this project's containers, run by the host"},
                           {"version", std::string(kVersion)}}},
                         {"instructions", std::string(tool_instructions())}});
    }

    void call(const json& id, const json& params) {
        if (!params.contains("name") || !params["name"].is_string()) {
            out_.error(id, kInvalidParams, "tools/call needs a string `name`");
            return;
        }
        const json arguments = params.contains("arguments") ? params["arguments"] : json();
        CallCheck check = check_call(options_.manifest, params["name"], arguments);
        if (check.unknown_tool) return out_.error(id, kInvalidParams, check.error);
        if (!check.target) return tool_error(id, check.error);
        std::optional<json> progress_token;
        if (params.contains("_meta") && params["_meta"].is_object() &&
            params["_meta"].contains("progressToken")) {
            const json& token = params["_meta"]["progressToken"];
            if (token.is_string() || token.is_number_integer()) progress_token = token;
        }
        auto state = std::make_shared<Call>();
        state->cancel.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        std::string refused;  // answered after the lock is let go
        {
            std::lock_guard lock(mutex_);
            // Finished calls' threads are joined as new ones start: no growth.
            reap_locked();
            if (threads_.size() >= kMaxCallsInFlight) {
                refused = "Too many calls at once: " + std::to_string(kMaxCallsInFlight) +
                          " are waiting for the host, so this one was not sent to it. Wait for "
                          "their answers, then call again.";
            } else {
                refused = start_call_locked(id, *check.target, progress_token, state);
            }
        }
        if (!refused.empty()) tool_error(id, refused);
    }

    // A thread for the call, or why there is none (then it was not sent).
    std::string start_call_locked(const json& id, const CallTarget& target,
                                  const std::optional<json>& progress_token,
                                  const std::shared_ptr<Call>& state) {
        calls_[id.dump()] = state;
        try {
            threads_.emplace_back([this, id, target, progress_token, state] {
                try {
                    run_call(id, target, progress_token, *state);
                } catch (const std::exception& e) {
                    log(std::string("internal error in a call: ") + e.what());
                    if (!state->cancelled)
                        tool_error(id, std::string("The call failed inside the server (") +
                                           e.what() +
                                           "); the request may still run on the host. Call "
                                           "`status` before trying again.");
                }
                std::lock_guard done_lock(mutex_);
                calls_.erase(id.dump());
                finished_.push_back(std::this_thread::get_id());
            });
        } catch (const std::system_error& e) {
            // No thread (a pids limit): this call is answered, the server
            // carries on.
            calls_.erase(id.dump());
            log(std::string("cannot start a thread for a call: ") + e.what());
            return std::string("The server could not start this call (") + e.what() +
                   "), so it was not sent to the host. Wait for other calls to finish, then "
                   "call again.";
        }
        return {};
    }

    void tool_error(const json& id, const std::string& text) {
        out_.result(id, {{"content", {{{"type", "text"}, {"text", text}}}}, {"isError", true}});
    }

    void reap_locked() {
        for (auto tid : finished_) {
            for (auto it = threads_.begin(); it != threads_.end(); ++it) {
                if (it->get_id() == tid) {
                    it->join();
                    threads_.erase(it);
                    break;
                }
            }
        }
        finished_.clear();
    }

    void run_call(const json& id, const CallTarget& target, const std::optional<json>& token,
                  Call& call) {
        const auto start = Clock::now();
        auto fail = [&](const std::string& text) { tool_error(id, text); };
        auto spool = client::Spool::open({options_.spool, options_.install});
        if (!spool) return fail("Cannot use the spool: " + spool.error().message);
        auto message = client::make_request(target.verb, target.service,
                                            client::LogWindow{target.lines, target.since});
        if (!message) return fail("Cannot make the request: " + message.error().message);
        client::ResponseWatch watch(spool->responses_path(),
                                    client::Spool::response_name(message->name),
                                    client::ResponseWatch::Signals::Leave);
        if (call.cancel) watch.wake_on(call.cancel.get());
        // Armed at once: this process lives on, so the cost of closing a
        // watch (request_wait.hpp) falls after the answer is sent, and an
        // event beats the client's 1 ms re-read.
        watch.arm();
        if (auto published = spool->publish(*message); !published)
            return fail("Cannot write the request: " + published.error().message);

        double progress = 0;
        auto last_sent = start;
        std::string last_state;
        auto tick = [&](const client::Response* seen) {
            if (!token || call.cancelled) return;
            const std::string now_state = seen ? client::shown_state(seen->state_text) : "waiting";
            const auto now = Clock::now();
            if (now_state == last_state &&
                now - last_sent < std::chrono::seconds(options_.progress_interval_seconds))
                return;
            if (now_state == "waiting" && last_state.empty() &&
                now - start < std::chrono::seconds(1)) {
                return;  // most calls end within a second: no noise for them
            }
            last_state = now_state;
            last_sent = now;
            const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - start).count();
            std::string text = now_state == "waiting"
                                   ? "waiting for the bridge to take the request up"
                                   : "the host reports `" + now_state + "`";
            if (seen && seen->state == client::ResponseState::Pending) {
                text =
                    "a person must approve this request on the host; waiting for their "
                    "decision" +
                    (seen->expires_at_text ? " until " + display::visible(*seen->expires_at_text)
                                           : std::string()) +
                    (seen->reason ? " (" + display::visible(*seen->reason) + ")" : std::string());
            }
            out_.send({{"jsonrpc", "2.0"},
                       {"method", "notifications/progress"},
                       {"params",
                        {{"progressToken", *token},
                         {"progress", ++progress},
                         {"message", text + " (" + std::to_string(secs) + " s)"}}}});
        };
        client::WaitResult waited =
            client::wait_for_response(*spool, message->name, watch,
                                      std::chrono::seconds(options_.take_up_timeout_seconds), tick);
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();

        const std::string until = waited.latest && waited.latest->expires_at_text
                                      ? " (until " + *waited.latest->expires_at_text + ")"
                                      : std::string();
        if (waited.end == client::WaitResult::End::External ||
            waited.end == client::WaitResult::End::Signal) {
            // Cancelled (or stdin ended): the client wants no answer. A
            // pending request is the host's, held for a person: never withdrawn.
            if (waited.pending())
                log("call cancelled: request " + message->name +
                    " was not decided; it may still be allowed later on the host" + until +
                    ": see responses/" + client::Spool::response_name(message->name));
            else if (spool->withdraw(message->name))
                log("call cancelled: request " + message->name + " withdrawn, it will not run");
            else
                log("call cancelled: request " + message->name +
                    " may still run on the host (see responses/" +
                    client::Spool::response_name(message->name) + ")");
            return;
        }
        Outcome o;
        if (waited.end == client::WaitResult::End::Answered) {
            client::Response answer = waited.response;
            std::optional<client::Confirmed> confirmed;
            // On the host, the answer is what the audit log records, as
            // `hostbridge request` reports it (client/request/audit_lookup.hpp).
            if (options_.install && client::is_terminal(answer.state)) {
                confirmed = client::confirm_answer(
                    answer, client::audit_check(*options_.install, message->name),
                    client::SentAsk{target.verb, target.service, target.lines, target.since},
                    message->name);
                answer.state = confirmed->state;
                answer.exit_code = confirmed->exit_code;
                answer.reason = confirmed->reason;
            }
            o = outcome_of(answer, options_.manifest.ttl_seconds, waited.pending(),
                           target.lines.has_value() || target.since.has_value());
            if (confirmed && confirmed->note)
                o.text = "The host's audit log: " + *confirmed->note + ".\n\n" + o.text;
            if (confirmed && confirmed->refused) o.is_error = true;
        } else if (waited.end == client::WaitResult::End::Undecided) {
            // The last word of the host is still `pending`, past its expiry.
            const std::string expired_at = waited.latest->expires_at_text.value_or("its expiry");
            o.state = "pending";
            o.is_error = true;
            o.reason = "not decided before it expired at " + expired_at;
            o.text = "No person on the host decided this request before it expired at " +
                     expired_at +
                     ": it did not run and can no longer be allowed. Tell the person you work "
                     "with that it needs their approval; call again when they are there to "
                     "give it.";
        } else {
            o.state = "no-answer";
            o.is_error = true;
            const std::string within = std::to_string(options_.take_up_timeout_seconds) + " s";
            if (spool->withdraw(message->name)) {
                o.text = "The bridge is not running: nothing took the request up within " + within +
                         ", so it was withdrawn and will not run. Tell the person you work with "
                         "that hostbridge is not answering (`hostbridge doctor` on the host "
                         "says why); do not retry in a loop.";
            } else {
                o.text = "The host claimed the request" +
                         (waited.last_state.empty()
                              ? std::string()
                              : " (state " + client::shown_state(waited.last_state) + ")") +
                         " but did not start it within " + within +
                         "; it may still run. Call `status` later before trying again.";
            }
            o.reason = "no answer within " + within;
        }
        json structured = {{"state", o.state},
                           {"exit_code", o.exit_code ? json(*o.exit_code) : json()},
                           {"reason", o.reason ? json(*o.reason) : json()},
                           {"request", message->name},
                           {"duration_ms", ms}};
        if (o.services) structured["services"] = *o.services;
        if (o.cursor) structured["cursor"] = *o.cursor;
        if (o.more) structured["more"] = *o.more;
        json result = {{"content", {{{"type", "text"}, {"text", o.text}}}},
                       {"isError", o.is_error}};
        if (structured_) result["structuredContent"] = structured;
        if (call.cancelled) return;  // cancelled as the answer came: send nothing
        out_.result(id, std::move(result));
    }

    const ServerOptions& options_;
    Writer out_;
    std::atomic<bool> structured_{true};
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Call>> calls_;
    std::vector<std::thread> threads_;
    std::vector<std::thread::id> finished_;
};

}  // namespace

int run_mcp_server(const ServerOptions& options, int in_fd, int out_fd) {
    Server server(options, out_fd);
    std::string buffer;
    bool skipping = false;  // inside a line over kMaxLine
    char chunk[65536];
    for (;;) {
        ssize_t n = ::read(in_fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        buffer.append(chunk, static_cast<std::size_t>(n));
        std::size_t from = 0;
        for (;;) {
            std::size_t nl = buffer.find('\n', from);
            if (nl == std::string::npos) break;
            if (!skipping) server.handle_line(std::string_view(buffer).substr(from, nl - from));
            skipping = false;
            from = nl + 1;
        }
        buffer.erase(0, from);
        if (buffer.size() > kMaxLine) {
            if (!skipping) server.too_long();
            skipping = true;
            buffer.clear();
        }
    }
    if (!skipping && !buffer.empty()) server.handle_line(buffer);
    return 0;
}

}  // namespace hb::agent
