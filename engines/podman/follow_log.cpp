#include "engines/podman/follow_log.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

#include "engines/podman/engine_relay.hpp"
#include "engines/podman/rows.hpp"
#include "engines/podman/settle.hpp"
#include "executor/responses.hpp"
#include "executor/runner.hpp"
#include "ipc/inspect_wire.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kQueryTimeout{30000};

// An anonymous file of kMaxEngineLogBytes that cannot grow: a write past
// its end fails (EPERM), so a container that logged gigabytes costs the
// host no more than this. Its pages exist only where written.
Result<UniqueFd> capped_scratch() {
    UniqueFd fd(::memfd_create("hostbridge-logs", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!fd) return make_error(sys::errno_text("memfd_create"));
    if (::ftruncate(fd.get(), static_cast<off_t>(kMaxEngineLogBytes)) != 0 ||
        ::fcntl(fd.get(), F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
        return make_error(sys::errno_text("cannot seal the log buffer"));
    }
    return fd;
}

struct EngineLog {
    UniqueFd fd;
    LogView view;
    std::string failure;  // empty when the engine answered
};

// Runs `row` with stdout and stderr both into a capped buffer (a container
// logs to either, in one order): the shared file offset says how much it
// wrote. podman 4.3 ignores its failed writes and would go on reading the
// whole log, so it is stopped once the buffer is full. Its bytes are never
// read here but in the ranges the sandbox chose (log_lines_client.cpp).
EngineLog read_engine_log(const Config& config, const Argv& row, Clock::time_point deadline) {
    EngineLog out;
    auto buffer = capped_scratch();
    if (!buffer) {
        out.failure = buffer.error().message;
        return out;
    }
    const Clock::time_point until = std::min(deadline, Clock::now() + kQueryTimeout);
    auto engine = engine_environment(config);
    if (!engine) {
        out.failure = engine.error().message;
        return out;
    }
    auto child = Child::spawn(row, buffer->get(), {}, engine->env, buffer->get());
    if (!child) {
        out.failure = child.error().message;
        return out;
    }
    const auto written = [&] { return ::lseek(buffer->get(), 0, SEEK_CUR); };
    while (!child->exited_within(milliseconds(20)) &&
           written() < static_cast<off_t>(kMaxEngineLogBytes) && Clock::now() < until) {
    }
    // Exited: its status; still running (full, or out of time): stopped,
    // SIGTERM then SIGKILL, and TimedOut.
    const RunResult r = child->wait(milliseconds(0), milliseconds(1000));
    const off_t end = written();
    if (end < 0) {
        out.failure = sys::errno_text("lseek");
        return out;
    }
    out.view.size = std::min(static_cast<std::size_t>(end), kMaxEngineLogBytes);
    out.view.cut = static_cast<std::size_t>(end) >= kMaxEngineLogBytes;
    out.fd = std::move(*buffer);
    out.view.fd = out.fd.get();
    // Stopped at the cap, what the engine wrote stands.
    if (!out.view.cut && !r.succeeded()) {
        out.failure = "the engine's logs " + run_failure(r);
    }
    return out;
}

}  // namespace

FollowOutcome follow_log(const Config& config, const Posture& posture, std::size_t service,
                         const LogWindow& window, int log_fd, Clock::time_point deadline) {
    FollowOutcome out;
    const auto fail = [&out](std::string why) {
        out.reason = std::move(why);
        return out;
    };
    const std::string& name = config.services.at(service);
    auto facts = ask_engine(config, posture, log_fd, deadline);
    if (!facts) return fail("the engine could not be asked: " + facts.error().message);
    std::vector<std::string> ids;
    for (const ContainerFacts& c : *facts) {
        if (c.labelled && c.service == service) ids.push_back(hex_id(c.id));
    }
    if (ids.size() != 1)
        return fail(ids.empty() ? name + " has no container"
                                : name + " has " + std::to_string(ids.size()) +
                                      " containers; lines and since follow one");
    const std::string& id = ids.front();
    // Every answer is chosen from a `--since` view of the log, the view the
    // next request's `since` will see (parser/log_lines.hpp). A tail asks
    // the engine only where its last N lines begin: the stamp of the first
    // complete line after 0:0, the cut view's unfinished line ignored.
    LogWindow view = window;
    if (window.since_ns == kNoTime) {
        const std::optional<Argv> tail_row = window_log(config, id, window);
        EngineLog tail = tail_row ? read_engine_log(config, *tail_row, deadline) : EngineLog{};
        if (!tail_row || !tail.failure.empty())
            return fail(tail_row ? tail.failure : "no logs row for this container");
        auto oldest = select_in_sandbox(config.parser, LogView{tail.view.fd, tail.view.size, false},
                                        LogWindow{1, 0, 0});
        if (!oldest) return fail(oldest.error().message);
        view.since_ns = oldest->cursor.ns;
    }
    const std::optional<Argv> row = window_log(config, id, LogWindow{0, view.since_ns, 0});
    if (!row) return fail("no logs row for this container");
    EngineLog log = read_engine_log(config, *row, deadline);
    auto selection = log.fd ? select_in_sandbox(config.parser, log.view, window, kMaxOutputBytes)
                            : Result<LogSelection>(make_error(log.failure));
    if (!selection) return fail(selection.error().message);
    out.selection = std::move(*selection);
    [[maybe_unused]] bool written = sys::write_all(log_fd, out.selection.untimed);
    if (!log.failure.empty()) return fail(log.failure);
    // A piece of the line before the last stamp's first line was written
    // at that stamp: the next view shows it as a line of its own. Count it
    // in that view, so `since` skips exactly the lines sent.
    if (out.selection.continued) {
        const std::int64_t stamp = out.selection.cursor.ns;
        const std::optional<Argv> next_row = window_log(config, id, LogWindow{0, stamp, 0});
        EngineLog next = next_row ? read_engine_log(config, *next_row, deadline) : EngineLog{};
        auto pieces =
            next_row && next.failure.empty()
                ? pieces_in_sandbox(config.parser, log.view, out.selection.group, next.view, stamp)
                : Result<std::optional<std::uint32_t>>(make_error("no view from its stamp"));
        if (!pieces || !*pieces || out.selection.cursor.seen + **pieces > kMaxCursorSeen)
            return fail("counting the lines stamped like the last one failed" +
                        (pieces ? std::string() : ": " + pieces.error().message));
        out.selection.cursor.seen += **pieces;
    }
    written = sys::write_all(log_fd, out.selection.text);
    out.ok = true;
    return out;
}

}  // namespace hb::exec
