// The processes of a user and of its subordinate ids: what `hostbridge
// engine remove` must end before it deletes the engine user. A rootless
// engine's containers run as that user's subordinate ids (/etc/subuid),
// which `pkill -u USER` never matches: a container running as a non-root
// user would outlive its engine user (admin/commands/engine.cpp).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace hb::admin {

struct UidRange {
    uid_t first = 0;
    uid_t count = 0;
    bool contains(uid_t uid) const { return uid >= first && uid - first < count; }
};

// NAME's (or UID's) ranges in a subordinate-id file's text ("name:first:count"
// or "uid:first:count" per line; anything else is skipped).
std::vector<UidRange> subordinate_ranges(const std::string& text, const std::string& name,
                                         uid_t uid);

// Every process any of whose ids (real, effective, saved, filesystem) lies in
// one of `ranges`, read from /proc now; never this process.
std::vector<pid_t> processes_with_uid_in(const std::vector<UidRange>& ranges);

// Sends SIGTERM to them all, waits up to `term_wait_ms` for them to go, then
// SIGKILL until none is left (up to 3 s more, new ones included). True when
// none is left.
bool end_processes_with_uid_in(const std::vector<UidRange>& ranges, int term_wait_ms);

}  // namespace hb::admin
