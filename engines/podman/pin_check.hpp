// The post-start check of pinned bind sources (issue 27, item 5; docs/COMPOSE.md,
// "Bind sources are pinned"). The pin (engines/podman/bind_pin.hpp) makes every
// bind source of the rendered compose file a path nobody but the host user
// can change. What a container was really given is checked after it
// starts: while the settle step waits (engines/podman/settle.hpp), every running
// container of the project that started since the request began has its
// bind mounts listed (a row of the argv table, read here: only ids,
// numbers and the approved file's paths, never agent text) and, in the
// container's own mount namespace, what it finds at each pinned target is
// compared with the pin by device and inode. A container that bind-mounts
// a checkout path (created before pinning: runc resolves that path at
// every start, where a swap wins), or has something other than the pin at
// a pinned target, is stopped, and the answer, the audit and `doctor` say so.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/config.hpp"
#include "engines/podman/pin_compare.hpp"  // AtTarget
#include "ipc/result.hpp"

namespace hb::exec {

struct BindMount {
    std::string source;       // on the host, as the engine stores it
    std::string destination;  // in the container
};
struct ContainerBinds {
    std::string id;               // 64 lowercase hex digits
    std::uint32_t pid = 0;        // State.Pid: 0 when not running
    std::int64_t started_ns = 0;  // State.StartedAt (negative: never started)
    std::vector<BindMount> binds;
};

// The settle_mounts row's output (engines/argv_table.hpp,
// kBindMountsFormat): one line per container, "ID PID STARTED_NS", then for
// each bind a space and a Go-quoted source, a space and a Go-quoted
// destination. Strict: a quoted path with an escape in it (Go escapes
// control characters, quotes and backslashes), a path that is not absolute
// and normal, or anything else is an error, so a check that cannot read a
// bind fails.
Result<std::vector<ContainerBinds>> parse_bind_mounts(std::string_view text);

// What one container's binds ask of the check: the (pinned source, target)
// pairs to compare, or a refusal sentence when a bind names the checkout
// itself (a container created before pinning, or by hand).
struct PinCheckPlan {
    std::vector<std::pair<std::string, std::string>> compare;
    std::string refusal;
};
PinCheckPlan plan_pin_check(const Config& config, const std::vector<BindMount>& binds);

// The binds (index, Other or Unreadable) the check-pins output says are
// not their pins; an error unless it answers each of `pairs` exactly once,
// in order.
Result<std::vector<std::pair<std::size_t, AtTarget>>> parse_check_answer(std::string_view out,
                                                                         std::size_t pairs);
// What the check-pins output `out` for the pairs `compared` says, as the
// executor and doctor report it: empty when every target holds its pin,
// else the first failing bind's sentence ("... (and N more of its binds)");
// an error when `out` is not an answer to exactly those pairs.
Result<std::string> check_answer_problem(
    std::string_view out, const std::vector<std::pair<std::string, std::string>>& compared);

// The executor's side, from the settle loop: of the project's containers
// `ids`, each that runs and started at or after `since_ns` and is not in
// `checked` (id and start time, added here) is checked, and every one that
// fails is stopped. Returns, per container id it stopped, the problem to
// report ("its bind at /srv/src is not the pinned src: ...").
std::map<std::string, std::string> check_started_pins(
    const Config& config, const std::vector<std::string>& ids, std::int64_t since_ns,
    std::map<std::string, std::int64_t>& checked, int log_fd,
    std::chrono::steady_clock::time_point deadline);

}  // namespace hb::exec
