#include "engines/podman/pin_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <optional>

#include "engines/podman/engine_relay.hpp"
#include "engines/podman/rows.hpp"
#include "executor/runner.hpp"
#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::exec {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kCheckTimeout{30000};
// A line per container, each bind two paths of at most PATH_MAX.
constexpr std::size_t kMaxMountsBytes = 1u << 20;
constexpr std::size_t kMaxAnswerBytes = 64u << 10;

// One Go-quoted path at `at`: '"', then no '"' nor '\\' (an escape means a
// byte Go would not print as itself), then '"'.
Result<std::string> quoted_path(std::string_view line, std::size_t& at) {
    if (at >= line.size() || line[at] != '"') return make_error("a bind path is not quoted");
    const std::size_t end = line.find_first_of("\"\\", at + 1);
    if (end == std::string_view::npos || line[end] != '"') {
        return make_error("a bind path holds a character the bridge does not read (an escape)");
    }
    std::string path(line.substr(at + 1, end - at - 1));
    at = end + 1;
    if (!is_container_path(path)) return make_error("a bind path is not absolute and normal");
    return path;
}

// " N" at `at`: a space, then a decimal number (a '-' only for a signed
// one), ending at a space or the line's end.
template <typename Int>
bool number_at(std::string_view line, std::size_t& at, Int& out) {
    if (at >= line.size() || line[at] != ' ') return false;
    const char* begin = line.data() + at + 1;
    const char* end = line.data() + line.size();
    const char* stop = std::find(begin, end, ' ');
    const auto [ptr, ec] = std::from_chars(begin, stop, out);
    if (ec != std::errc() || ptr != stop || ptr == begin) return false;
    at = static_cast<std::size_t>(stop - line.data());
    return true;
}

// Runs `argv`, its stdout (at most `limit` bytes) returned, its stderr to
// the log; an error says how it failed unless it exited 0 or `also_ok`.
Result<std::string> query(const Config& config, const Argv& argv, int log_fd,
                          Clock::time_point deadline, std::size_t limit, int also_ok = 0) {
    auto out = scratch_file("hostbridge-pins");
    if (!out) return out.error();
    const RunResult ran =
        run_query(config, argv, out->get(), log_fd, std::min(kCheckTimeout, time_left(deadline)));
    if (ran.status != RunResult::Status::Exited ||
        (ran.exit_code != 0 && (also_ok == 0 || ran.exit_code != also_ok))) {
        return make_error(run_failure(ran));
    }
    return read_scratch(out->get(), limit);
}

// The sentence for one bind that failed: "its bind at /srv/src is not the
// pinned src (...)" or "... cannot be checked against ...".
std::string pin_problem(const std::pair<std::string, std::string>& bind, AtTarget what) {
    const auto& [source, target] = bind;
    if (what == AtTarget::Other) {
        return "its bind at " + target + " is not the pinned " + source +
               " (the engine mounted another file or directory there)";
    }
    return "its bind at " + target + " cannot be checked against the pinned " + source +
           " (nothing there, a link on the way in the container, or the pin is gone)";
}

// Why one running container fails the check, or empty when it passes.
std::string check_one(const Config& config, const ContainerBinds& c, int log_fd,
                      Clock::time_point deadline) {
    PinCheckPlan plan = plan_pin_check(config, c.binds);
    if (!plan.refusal.empty()) return plan.refusal;
    if (plan.compare.empty()) return {};
    const std::optional<Argv> row = settle_pin_check(config, c.pid, plan.compare);
    if (!row) return "its bind mounts cannot be checked (a target that is not absolute and normal)";
    auto said = query(config, *row, log_fd, deadline, kMaxAnswerBytes, 1);
    if (!said) return "the pin check " + said.error().message;
    auto problem = check_answer_problem(*said, plan.compare);
    return problem ? *problem : "the pin check answered what the bridge does not read";
}

// Fail closed: a container whose binds are not known to be the pins may
// hold the host user's files. Its own time, not what the verb has left.
std::string stop(const Config& config, const std::string& id, int log_fd) {
    const std::optional<Argv> row = settle_stop(config, id);
    if (!row) return "; it has no stop row";
    auto ended = query(config, *row, log_fd, Clock::now() + kCheckTimeout, 4096);
    return ended ? "; the bridge stopped it" : "; stopping it " + ended.error().message;
}

}  // namespace

Result<std::vector<ContainerBinds>> parse_bind_mounts(std::string_view text) {
    std::vector<ContainerBinds> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = text.find('\n', at);
        if (end == std::string_view::npos) return make_error("the bind list is cut short");
        const std::string_view line = text.substr(at, end - at);
        at = end + 1;
        if (line.size() < 64 || !sys::is_lower_hex(line.substr(0, 64), 64)) {
            return make_error("a bind list line does not start with a container id");
        }
        ContainerBinds c;
        c.id = std::string(line.substr(0, 64));
        std::size_t pos = 64;
        if (!number_at(line, pos, c.pid) || !number_at(line, pos, c.started_ns)) {
            return make_error("a bind list line has no process id and start time");
        }
        while (pos < line.size()) {
            if (line[pos] != ' ') return make_error("a bind list line is malformed");
            ++pos;
            auto source = quoted_path(line, pos);
            if (!source) return source.error();
            if (pos >= line.size() || line[pos] != ' ')
                return make_error("a bind has no destination");
            ++pos;
            auto destination = quoted_path(line, pos);
            if (!destination) return destination.error();
            c.binds.push_back({std::move(*source), std::move(*destination)});
        }
        out.push_back(std::move(c));
    }
    return out;
}

PinCheckPlan plan_pin_check(const Config& config, const std::vector<BindMount>& binds) {
    PinCheckPlan plan;
    for (const BindMount& b : binds) {
        const BindSourceOf of = bind_source_of(config, b.source);
        if (of.pinned) {
            plan.compare.emplace_back(*of.pinned, b.destination);
        } else if (of.inside) {
            // Stored as a checkout path: runc resolves it again at every
            // start, where the agent's swap wins (SECURITY.md).
            plan.refusal = "it bind-mounts " + b.source + " of the checkout at " + b.destination +
                           " by its path, which every start resolves again (created before "
                           "bind sources were pinned, or by hand): remove it, and up creates "
                           "it with the pin";
            plan.compare.clear();
            return plan;
        }
    }
    return plan;
}

Result<std::vector<std::pair<std::size_t, AtTarget>>> parse_check_answer(std::string_view out,
                                                                         std::size_t pairs) {
    std::vector<std::pair<std::size_t, AtTarget>> differ;
    std::size_t at = 0;
    for (std::size_t i = 0; i < pairs; ++i) {
        const std::size_t end = out.find('\n', at);
        if (end == std::string_view::npos) return make_error("the pin check is cut short");
        const std::string_view line = out.substr(at, end - at);
        at = end + 1;
        const std::size_t space = line.find(' ');
        if (space == std::string_view::npos) return make_error("a pin check line is malformed");
        const std::string_view word = line.substr(0, space);
        std::string_view rest = line.substr(space + 1);
        const std::string index = std::to_string(i);
        if (!rest.starts_with(index) || (rest.size() > index.size() && rest[index.size()] != ' ')) {
            return make_error("a pin check line answers another bind");
        }
        if (word == "pinned" && rest.size() == index.size()) continue;
        if (word == "other") {
            differ.emplace_back(i, AtTarget::Other);
        } else if (word == "unreadable") {
            differ.emplace_back(i, AtTarget::Unreadable);
        } else {
            return make_error("a pin check line is malformed");
        }
    }
    if (at != out.size()) return make_error("the pin check answers more binds than asked");
    return differ;
}

Result<std::string> check_answer_problem(
    std::string_view out, const std::vector<std::pair<std::string, std::string>>& compared) {
    auto differ = parse_check_answer(out, compared.size());
    if (!differ) return differ.error();
    if (differ->empty()) return std::string();
    const auto [index, what] = differ->front();
    std::string problem = pin_problem(compared[index], what);
    if (differ->size() > 1)
        problem += " (and " + std::to_string(differ->size() - 1) + " more of its binds)";
    return problem;
}

std::map<std::string, std::string> check_started_pins(const Config& config,
                                                      const std::vector<std::string>& ids,
                                                      std::int64_t since_ns,
                                                      std::map<std::string, std::int64_t>& checked,
                                                      int log_fd, Clock::time_point deadline) {
    std::map<std::string, std::string> stopped;
    if (!config.pins || ids.empty()) return stopped;
    const auto failed = [&](const std::string& id, std::string problem) {
        problem += stop(config, id, log_fd);
        log_line(log_fd, "container " + id.substr(0, 12) + ": " + problem);
        stopped.emplace(id, std::move(problem));
    };
    std::string cannot;
    std::vector<ContainerBinds> listed;
    const std::optional<Argv> row = settle_mounts(config, ids);
    if (!row) {
        cannot = "its bind mounts cannot be listed";
    } else if (auto text = query(config, *row, log_fd, deadline, kMaxMountsBytes); !text) {
        cannot = "listing its bind mounts " + text.error().message;
    } else if (auto parsed = parse_bind_mounts(*text); !parsed) {
        cannot = "its bind mounts cannot be read: " + parsed.error().message;
    } else {
        listed = std::move(*parsed);
    }
    if (!cannot.empty()) {
        // Which of them started is unknown: every one not yet checked.
        for (const std::string& id : ids) {
            if (!checked.contains(id)) failed(id, cannot);
        }
        return stopped;
    }
    for (const ContainerBinds& c : listed) {
        // Running, started by this request, and not yet checked in this run
        // of it (a restart policy may start it again: checked again).
        if (c.pid == 0 || c.started_ns < since_ns) continue;
        const auto seen = checked.find(c.id);
        if (seen != checked.end() && seen->second == c.started_ns) continue;
        checked[c.id] = c.started_ns;
        if (std::string problem = check_one(config, c, log_fd, deadline); !problem.empty())
            failed(c.id, std::move(problem));
    }
    return stopped;
}

}  // namespace hb::exec
