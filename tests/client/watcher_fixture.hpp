// A real host side for client tests: a project with a spool, bridge.json
// and policy.conf in a temp dir, a stack script that answers `status`,
// `health` and `logs`, and `hostbridge-executor watch` running on it.
#pragma once

#include <string>

#include "common/config.hpp"
#include "tests/client/client_harness.hpp"

namespace hb::test {

class Watcher {
  public:
    // Empty when the executor and parser binaries exist; else why not.
    static std::string unavailable();

    // Writes everything (services svc00, svc01, ...; every verb `auto`);
    // start() runs the watcher.
    explicit Watcher(int service_count = 2, int ttl_seconds = 600);
    ~Watcher();
    Watcher(const Watcher&) = delete;
    Watcher& operator=(const Watcher&) = delete;

    void start();
    void stop();
    void pause();   // SIGSTOP: requests pile up unanswered
    void resume();  // SIGCONT

    [[nodiscard]] const std::string& spool() const { return spool_; }
    [[nodiscard]] std::string log() const;
    // The exact bytes `health` prints (through the real executor).
    static std::string health_output();

  private:
    TempDir dir_{"watch"};
    std::string root_;
    std::string spool_;
    std::string config_;
    Child daemon_;  // hostbridge-executor watch, once started
};

}  // namespace hb::test
