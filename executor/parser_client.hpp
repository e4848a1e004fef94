// Supervision of the untrusted parser process: spawn it (fork+exec, socket
// on fd 3, nothing else inherited), send it the service enumeration, and do
// one bounded round trip per request. Whatever goes wrong on its side (a
// crash, a hang, a short or garbage verdict) costs exactly that request a
// `parser failure` denial: the process is killed and reaped, and the next
// request gets a fresh one. Nothing here can hang the drain.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ipc/result.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/wire.hpp"

namespace hb::exec {

// The parser process, killed (SIGKILL) and reaped when this goes away.
using ParserChild = sys::ChildGuard;

// A started hostbridge-parser: our end of its socket (its fd 3) and the
// process. `mode` is its one argument (nullptr: none, the request parser;
// "--screen": the build-input screen, engines/build_input/screen_client.hpp).
// `argv0`: its name; the snapshot copy, hostbridge-snapshot, is started the
// same way (engines/build_input/build_snapshot.cpp).
struct SpawnedParser {
    UniqueFd sock;
    ParserChild child;
};
Result<SpawnedParser> spawn_parser(const std::string& path, const char* mode,
                                   const char* argv0 = "hostbridge-parser");

class ParserClient {
  public:
    // How long one request may take the parser. A sanitized build
    // (HB_SANITIZE, ./run-tests --sanitize) runs it several times slower,
    // and on a busy 2-core CI machine a warm parser missed 2 s: the bound
    // there is 15 s, so those tests do not depend on machine load.
#ifdef HB_SANITIZED
    static constexpr std::chrono::seconds kRoundTripTimeout{15};
#else
    static constexpr std::chrono::seconds kRoundTripTimeout{2};
#endif

    // `parser_path`: absolute path of hostbridge-parser (bridge.json `parser`).
    ParserClient(std::string parser_path, Startup startup);

    // Classifies one request: `fd` is open for reading, `basename` its name.
    // Starts the parser first when none runs. An error means "parser
    // failure" for this request; the parser is gone by then.
    Result<Verdict> classify(int fd, std::string_view basename);

    // The running parser's pid, or -1 (tests and benchmarks).
    [[nodiscard]] pid_t pid() const {
        return child_.pid();
    }
    // Kills and reaps the running parser, if any.
    void stop();

  private:
    Result<void> start();
    Result<Verdict> round_trip(int fd, std::string_view basename);
    Result<void> check_trust(const Verdict& verdict, std::string_view basename) const;

    std::string path_;
    Startup startup_;
    std::uint32_t next_seq_ = 1;
    UniqueFd sock_;
    ParserChild child_;
};

}  // namespace hb::exec
