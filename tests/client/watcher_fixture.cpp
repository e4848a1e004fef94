#include "tests/client/watcher_fixture.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "admin/install/config_write.hpp"
#include "ipc/wire.hpp"

namespace hb::test {
namespace {

namespace fs = std::filesystem;

// A printf format that reproduces `bytes` exactly.
std::string printf_format(const std::string& bytes) {
    std::string format;
    for (unsigned char c : bytes) {
        char octal[8];
        std::snprintf(octal, sizeof octal, "\\%03o", c);
        format += octal;
    }
    return format;
}

}  // namespace

std::string Watcher::unavailable() {
    for (const char* bin : {HB_EXECUTOR_BIN, HB_PARSER_BIN})
        if (::access(bin, X_OK) != 0) return std::string(bin) + " is not built";
    return "";
}

std::string Watcher::health_output() {
    std::string text = "-dash %s %% \\n \\u0041 \"quoted\" back\\slash\r\n";
    for (int c = 0; c < 0x80; ++c) text += static_cast<char>(c);
    text += "é € 😀\ttab\n";
    return text;
}

Watcher::Watcher(int service_count, int ttl_seconds) {
    root_ = fs::canonical(dir_.path()).string();
    const std::string project = root_ + "/project";
    spool_ = project + "/untracked/hostbridge";
    make_spool(spool_);
    fs::create_directories(root_ + "/state");

    // Outside the project, so the integrity gate has nothing to pin.
    const std::string stack = root_ + "/stack";
    write_file(stack,
               "#!/bin/sh\n"
               "case $1 in\n"
               "  status) printf 'status: api is down\\n'; exit 3 ;;\n"
               "  health) printf '" +
                   printf_format(health_output()) +
                   "' ;;\n"
                   "  logs) printf 'logs of %s\\n' \"$2\" ;;\n"
                   "  *) exit 9 ;;\n"
                   "esac\n",
               0755);

    std::string policy;
    for (Verb verb : kAllVerbs) policy += "MODE_" + std::string(verb_name(verb)) + "=auto\n";
    write_file(root_ + "/policy.conf", policy);

    Config config;
    config.slug = "client-test";
    config.project_dir = project;
    config.spool_dir = spool_;
    config.state_dir = root_ + "/state";
    config.run_dir = root_ + "/run";
    config.policy_file = root_ + "/policy.conf";
    config.parser = HB_PARSER_BIN;
    // hostbridge-snapshot is built into the parser's bin/.
    config.snapshot = std::filesystem::path(HB_PARSER_BIN).parent_path() / "hostbridge-snapshot";
    config.allow_root = true;
    config.backend.kind = BackendKind::Stack;
    config.backend.argv = {stack};
    for (int i = 0; i < service_count; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "svc%02d", i);
        config.services.push_back(name);
    }
    config.limits.ttl_seconds = ttl_seconds;
    config.systemd.enabled = false;
    config_ = root_ + "/bridge.json";
    write_file(config_, serialize_config(config));
}

Watcher::~Watcher() {
    stop();
}

void Watcher::start() {
    daemon_ = start_daemon(
        std::vector<std::string>{HB_EXECUTOR_BIN, "watch", "--config", config_, "--allow-root"},
        root_ + "/watch.log");
}

void Watcher::stop() {
    daemon_.signal(SIGCONT);  // a paused watcher cannot act on SIGTERM
    daemon_.stop();
    daemon_ = Child();
}

void Watcher::pause() {
    daemon_.signal(SIGSTOP);
}
void Watcher::resume() {
    daemon_.signal(SIGCONT);
}

std::string Watcher::log() const {
    return read_file(root_ + "/watch.log");
}

}  // namespace hb::test
