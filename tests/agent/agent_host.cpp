#include "tests/agent/agent_host.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "admin/install/agent_manifest.hpp"
#include "admin/install/config_write.hpp"
#include "common/config.hpp"
#include "common/policy.hpp"
#include "ipc/wire.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

std::string policy_text(const std::vector<std::string>& denied,
                        const std::vector<std::string>& asked = {}) {
    std::string policy;
    for (Verb verb : kAllVerbs) {
        const std::string name(verb_name(verb));
        bool deny = std::find(denied.begin(), denied.end(), name) != denied.end();
        bool ask = std::find(asked.begin(), asked.end(), name) != asked.end();
        policy += "MODE_" + name + (deny ? "=deny\n" : ask ? "=ask\n" : "=auto\n");
    }
    return policy;
}

}  // namespace

std::string AgentHost::unavailable() {
    for (const char* bin : {HB_EXECUTOR_BIN, HB_PARSER_BIN, HB_AGENT_BIN})
        if (::access(bin, X_OK) != 0) return std::string(bin) + " is not built";
    return "";
}

AgentHost::AgentHost(const HostOptions& options) {
    root_ = fs::canonical(dir_.path()).string();
    const std::string project = root_ + "/project";
    spool_ = project + "/untracked/hostbridge";
    make_spool(spool_);
    fs::create_directories(spool_ + "/bin");
    fs::create_directories(root_ + "/state");
    // Outside the project, so the integrity gate has nothing to pin. The
    // `slow` service takes two seconds to restart (progress, cancellation).
    const std::string stack = root_ + "/stack";
    write_file(stack,
               "#!/bin/sh\n"
               "case $1 in\n"
               "  status) printf 'api: running\\n' ;;\n"
               "  health) printf 'healthy\\n' ;;\n"
               "  logs) printf 'logs of %s\\n' \"$2\" ;;\n"
               "  start) printf 'started\\n' ;;\n"
               "  stop) printf 'stopped\\n' ;;\n"
               "  restart) [ \"$2\" = slow ] && sleep 2; printf 'restarted %s\\n' \"$2\" ;;\n"
               "  build) printf 'built %s\\n' \"$2\"; exit 4 ;;\n"
               "  *) exit 9 ;;\n"
               "esac\n",
               0755);
    const std::string policy_file = root_ + "/policy.conf";
    std::string policy = policy_text(options.denied, options.asked);
    for (const auto& line : options.extra_policy) policy += line + "\n";
    write_file(policy_file, policy);

    Config config;
    config.slug = "agent-test";
    config.project_dir = project;
    config.spool_dir = spool_;
    config.state_dir = root_ + "/state";
    config.run_dir = root_ + "/run";
    config.policy_file = policy_file;
    config.parser = HB_PARSER_BIN;
    // hostbridge-snapshot is built into the parser's bin/.
    config.snapshot = std::filesystem::path(HB_PARSER_BIN).parent_path() / "hostbridge-snapshot";
    config.allow_root = true;
    // The MCP tools run up and rebuild as the policy says; the hold for an
    // engine run as the person is DecideAsk's (common/engine_hold.hpp).
    config.accept_uncontained_engine = true;
    config.backend.kind = BackendKind::Stack;
    config.backend.argv = {stack};
    config.services = {"api", "slow", "worker"};
    config.buildable = {"api"};
    config.limits.mutating.count = options.mutating_count;
    config.systemd.enabled = false;
    config_ = root_ + "/bridge.json";
    write_file(config_, serialize_config(config));
    // What install drops, from the same config and policy.
    std::string rendered = admin::render_agent_manifest(
        config, common::load_policy(policy_file, config.services), "untracked/hostbridge");
    if (options.log_window) {
        auto m = nlohmann::json::parse(rendered);
        m["log_window"] = true;
        rendered = m.dump(2) + "\n";
    }
    write_file(manifest(), rendered);
    if (!options.denied_later.empty()) {
        auto denied = options.denied;
        denied.insert(denied.end(), options.denied_later.begin(), options.denied_later.end());
        write_file(policy_file, policy_text(denied, options.asked));
    }
}

AgentHost::~AgentHost() {
    stop();
}

void AgentHost::start() {
    daemon_ = start_daemon(
        std::vector<std::string>{HB_EXECUTOR_BIN, "watch", "--config", config_, "--allow-root"},
        root_ + "/watch.log");
}

void AgentHost::stop() {
    daemon_.stop();
    daemon_ = Child();
}

std::string AgentHost::hand_spool_to(uid_t uid) const {
    for (std::string dir = spool_; dir.size() >= root_.size(); dir = fs::path(dir).parent_path())
        fs::permissions(dir, fs::perms::others_exec | fs::perms::group_exec, fs::perm_options::add);
    for (const char* sub : {"requests", "tmp"}) {
        if (::chown((spool_ + "/" + sub).c_str(), uid, uid) != 0)
            throw std::runtime_error(std::string("chown ") + sub);
    }
    const std::string binary = root_ + "/hostbridge-agent";
    fs::copy_file(HB_AGENT_BIN, binary, fs::copy_options::overwrite_existing);
    fs::permissions(binary, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    return binary;
}

std::string AgentHost::log() const {
    return read_file(root_ + "/watch.log");
}

McpSession::McpSession(const std::string& spool, const std::vector<std::string>& args,
                       const std::optional<Confined>& confined) {
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe");
    Command command;
    command.argv = {confined ? confined->binary : std::string(HB_AGENT_BIN), "mcp"};
    command.argv.insert(command.argv.end(), args.begin(), args.end());
    command.env = std::vector<std::string>{"PATH=/usr/bin:/bin", "HOSTBRIDGE_SPOOL=" + spool};
    command.err = capture_.path("stderr");
    command.fds = {{to_child[0], 0}, {from_child[1], 1}};
    if (confined) {
        command.uid = confined->uid;
        // After the switch of uid (tests/support/process.cpp): the limit
        // counts that uid's processes and threads, none but this one's.
        const rlimit limit{confined->nproc, confined->nproc};
        command.before_exec = [limit] { return ::setrlimit(RLIMIT_NPROC, &limit) == 0; };
    }
    child_ = Child(command);
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_ = to_child[1];
    out_ = from_child[0];
}

McpSession::~McpSession() {
    child_ = Child();  // killed and reaped if still running
    if (in_ >= 0) ::close(in_);
    if (out_ >= 0) ::close(out_);
}

void McpSession::send_raw(const std::string& bytes) {
    std::string_view rest = bytes;
    while (!rest.empty()) {
        ssize_t n = ::write(in_, rest.data(), rest.size());
        if (n <= 0) throw std::runtime_error("the server closed its stdin");
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
}

std::optional<nlohmann::json> McpSession::next(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        auto nl = buffer_.find('\n');
        if (nl != std::string::npos) {
            std::string line = buffer_.substr(0, nl);
            buffer_.erase(0, nl + 1);
            // Every line must be one JSON-RPC message: a parse failure throws
            // and fails the test.
            return nlohmann::json::parse(line);
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return std::nullopt;
        pollfd p{out_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        char buf[65536];
        ssize_t n = ::read(out_, buf, sizeof buf);
        if (n <= 0) return std::nullopt;
        buffer_.append(buf, static_cast<std::size_t>(n));
    }
}

nlohmann::json McpSession::request(int id, const std::string& method,
                                   const nlohmann::json& params) {
    send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
    for (;;) {
        auto message = next(std::chrono::seconds(60));
        if (!message) return nlohmann::json{{"error", "no answer"}};
        if (message->contains("id") && (*message)["id"] == id) return *message;
        seen.push_back(*message);
    }
}

nlohmann::json McpSession::initialize(const std::string& version) {
    auto answer = request(0, "initialize",
                          {{"protocolVersion", version},
                           {"capabilities", nlohmann::json::object()},
                           {"clientInfo", {{"name", "gtest"}, {"version", "1"}}}});
    send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    return answer;
}

nlohmann::json McpSession::call(int id, const std::string& tool, const nlohmann::json& arguments) {
    return request(id, "tools/call", {{"name", tool}, {"arguments", arguments}});
}

int McpSession::close_and_wait() {
    ::close(in_);
    in_ = -1;
    const std::optional<int> code = child_.wait_for(std::chrono::seconds(30));
    return code && *code >= 0 ? *code : -1;
}

std::string McpSession::err() const {
    return read_file(capture_.path("stderr"));
}

}  // namespace hb::test
