// Agent client latency: `ping` against a running `hostbridge-executor
// watch`, from the moment the client publishes its request (seen here with
// inotify on requests/) to the moment the client exits with the answer.
// One repetition is one client run; p50 and p99 are over the repetitions.
// Figures: docs/PERFORMANCE.md, "Agent clients".
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ipc/unique_fd.hpp"
#include "tests/support/drain_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

extern "C" char** environ;

// The words as the null-terminated array of C strings that exec takes.
std::vector<char*> c_strings(const std::vector<std::string>& words) {
    std::vector<char*> out;
    for (const auto& w : words) out.push_back(const_cast<char*>(w.c_str()));
    out.push_back(nullptr);
    return out;
}

pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    std::vector<char*> args = c_strings(argv);
    std::vector<char*> envp = c_strings(env);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
    return pid;
}

enum class Answerer {
    Watch,  // the real hostbridge-executor watch
    Bench,  // a thread here publishes `done` at once: the client's own cost
};

// A temp project with a spool, bridge.json and policy.conf, and something
// answering on it, for the whole benchmark run.
class Host {
  public:
    // The install is the drain tests' (every verb auto, no systemd).
    explicit Host(Answerer answerer) : spool_(install_.spool) {
        if (answerer == Answerer::Watch) {
            std::vector<std::string> argv = {HB_EXECUTOR_BIN, "watch", "--config",
                                             install_.config_path};
            if (::geteuid() == 0) argv.push_back("--allow-root");
            watcher_ = spawn(argv, {"PATH=/usr/bin:/bin"});
        } else {
            responder_ = std::thread([this] { answer_every_request(); });
        }

        inotify_.reset(::inotify_init1(IN_CLOEXEC));
        if (!inotify_ ||
            ::inotify_add_watch(inotify_.get(), (spool_ + "/requests").c_str(), IN_MOVED_TO) < 0)
            throw std::runtime_error("inotify on requests/ failed");
    }

    ~Host() {
        if (watcher_ > 0) {
            ::kill(watcher_, SIGTERM);
            ::waitpid(watcher_, nullptr, 0);
        }
        if (responder_.joinable()) {
            stop_ = true;
            responder_.join();
        }
    }

    [[nodiscard]] const std::string& spool() const { return spool_; }

    // One client run: seconds from its publish to its exit.
    double run(const std::vector<std::string>& argv) {
        pid_t pid = spawn(argv, {"PATH=/usr/bin:/bin", "HOSTBRIDGE_SPOOL=" + spool_});
        Clock::time_point published = wait_for_publish();
        int status = 0;
        ::waitpid(pid, &status, 0);
        Clock::time_point exited = Clock::now();
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            throw std::runtime_error(argv[0] + " did not get `done` for ping");
        return std::chrono::duration<double>(exited - published).count();
    }

  private:
    // What the host does for ping, minus the parser and the audit log: a
    // compact `done` response published by rename.
    void answer_every_request() {
        hb::UniqueFd fd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
        ::inotify_add_watch(fd.get(), (spool_ + "/requests").c_str(), IN_MOVED_TO);
        alignas(inotify_event) char buf[16 * (sizeof(inotify_event) + NAME_MAX + 1)];
        while (!stop_) {
            pollfd p{fd.get(), POLLIN, 0};
            if (::poll(&p, 1, 100) != 1) continue;
            ssize_t n = ::read(fd.get(), buf, sizeof buf);
            for (ssize_t at = 0; at < n;) {
                const auto* event = reinterpret_cast<const inotify_event*>(buf + at);
                const std::string name = event->name;
                const std::string temp = spool_ + "/tmp/.answer";
                hb::test::write_file(temp,
                                     R"({"state":"done","request":")" + name +
                                         R"(","exit_code":null,"reason":null,"output":"pong"})");
                fs::rename(temp, spool_ + "/responses/" + name + ".response.json");
                at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
            }
        }
    }

    Clock::time_point wait_for_publish() {
        alignas(inotify_event) char buf[sizeof(inotify_event) + NAME_MAX + 1];
        pollfd fd{inotify_.get(), POLLIN, 0};
        if (::poll(&fd, 1, 30000) != 1) throw std::runtime_error("the client published nothing");
        Clock::time_point seen = Clock::now();
        if (::read(inotify_.get(), buf, sizeof buf) <= 0) throw std::runtime_error("inotify read");
        return seen;
    }

    hb::test::DrainFixture install_;
    std::string spool_;
    pid_t watcher_ = -1;
    std::thread responder_;
    std::atomic<bool> stop_{false};
    hb::UniqueFd inotify_;
};

Host& host(Answerer answerer) {
    static Host watch(Answerer::Watch);
    static Host bench(Answerer::Bench);
    return answerer == Answerer::Watch ? watch : bench;
}

void client_ping(benchmark::State& state, std::vector<std::string> argv) {
    for (auto _ : state) state.SetIterationTime(host(Answerer::Watch).run(argv));
}

void client_ping_instant_host(benchmark::State& state, std::vector<std::string> argv) {
    for (auto _ : state) state.SetIterationTime(host(Answerer::Bench).run(argv));
}

double percentile(const std::vector<double>& values, double p) {
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    auto rank = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
    return sorted[rank];
}

void configure(benchmark::internal::Benchmark* b) {
    b->UseManualTime()
        ->Iterations(1)
        ->Repetitions(60)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMillisecond)
        ->ComputeStatistics("p50", [](const std::vector<double>& v) { return percentile(v, 0.50); })
        ->ComputeStatistics("p99",
                            [](const std::vector<double>& v) { return percentile(v, 0.99); });
}

const std::string kScript = HB_CLIENT_SCRIPT;

BENCHMARK_CAPTURE(client_ping, sh_dash, {"/usr/bin/dash", kScript, "ping"})->Apply(configure);
BENCHMARK_CAPTURE(client_ping, sh_busybox, {"/bin/busybox", "sh", kScript, "ping"})
    ->Apply(configure);
BENCHMARK_CAPTURE(client_ping, sh_bash_posix, {"/usr/bin/bash", "--posix", kScript, "ping"})
    ->Apply(configure);
BENCHMARK_CAPTURE(client_ping, cpp, {HB_HOSTBRIDGE_BIN, "request", "ping"})->Apply(configure);
BENCHMARK_CAPTURE(client_ping_instant_host, sh_dash, {"/usr/bin/dash", kScript, "ping"})
    ->Apply(configure);
BENCHMARK_CAPTURE(client_ping_instant_host, cpp, {HB_HOSTBRIDGE_BIN, "request", "ping"})
    ->Apply(configure);

BENCHMARK_CAPTURE(client_ping, agent, {HB_AGENT_BIN, "request", "ping"})->Apply(configure);

// `hostbridge-agent mcp`, started once and initialized: one repetition is
// one `ping` tool call, from writing the tools/call line to reading its
// answer, as an MCP client sees it (docs/MCP.md).
class McpServer {
  public:
    explicit McpServer(const std::string& spool) {
        int to[2], from[2];
        if (::pipe2(to, O_CLOEXEC) != 0 || ::pipe2(from, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, to[0], 0);
        posix_spawn_file_actions_adddup2(&actions, from[1], 1);
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
        std::string env0 = "PATH=/usr/bin:/bin", env1 = "HOSTBRIDGE_SPOOL=" + spool;
        char* envp[] = {env0.data(), env1.data(), nullptr};
        char bin[] = HB_AGENT_BIN;
        char mcp[] = "mcp";
        char* argv[] = {bin, mcp, nullptr};
        if (posix_spawn(&pid_, bin, &actions, nullptr, argv, envp) != 0)
            throw std::runtime_error("cannot start hostbridge-agent");
        posix_spawn_file_actions_destroy(&actions);
        ::close(to[0]);
        ::close(from[1]);
        in_.reset(to[1]);
        out_.reset(from[0]);
        exchange(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":)"
                 R"("2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
        send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    }
    ~McpServer() {
        in_.reset();
        ::waitpid(pid_, nullptr, 0);
    }

    // Seconds for one ping tool call.
    double ping() {
        const auto start = Clock::now();
        std::string answer = exchange(R"({"jsonrpc":"2.0","id":1,"method":"tools/call",)"
                                      R"("params":{"name":"ping","arguments":{}}})");
        const auto end = Clock::now();
        if (answer.find("\"pong\"") == std::string::npos)
            throw std::runtime_error("no pong: " + answer);
        return std::chrono::duration<double>(end - start).count();
    }

  private:
    void send(const std::string& line) {
        const std::string text = line + "\n";
        if (::write(in_.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
            throw std::runtime_error("write to the server failed");
    }
    std::string exchange(const std::string& line) {
        send(line);
        for (;;) {
            auto nl = buffer_.find('\n');
            if (nl != std::string::npos) {
                std::string out = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return out;
            }
            char buf[65536];
            ssize_t n = ::read(out_.get(), buf, sizeof buf);
            if (n <= 0) throw std::runtime_error("the server closed stdout");
            buffer_.append(buf, static_cast<std::size_t>(n));
        }
    }

    pid_t pid_ = -1;
    hb::UniqueFd in_;
    hb::UniqueFd out_;
    std::string buffer_;
};

void mcp_ping_tool_call(benchmark::State& state, Answerer answerer) {
    static McpServer watch(host(Answerer::Watch).spool());
    static McpServer instant(host(Answerer::Bench).spool());
    McpServer& server = answerer == Answerer::Watch ? watch : instant;
    for (auto _ : state) state.SetIterationTime(server.ping());
}
void many(benchmark::internal::Benchmark* b) {
    configure(b);
    b->Repetitions(200);
}
BENCHMARK_CAPTURE(mcp_ping_tool_call, watch, Answerer::Watch)->Apply(many);
BENCHMARK_CAPTURE(mcp_ping_tool_call, instant_host, Answerer::Bench)->Apply(many);

}  // namespace

BENCHMARK_MAIN();
