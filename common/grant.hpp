// Grants for a working session: `hostbridge allow --for DURATION VERB
// [SERVICE]` lets the executor run a verb the policy holds (`ask`) without
// a person until a deadline, at most a number of times
// (docs/DECIDE-AND-RUN.md, "Grants"). The admin tool writes each as a file
// in <state_dir>/grants, off the shared mount; the executor reads it with
// the same reader (read_grant) and counts its runs in it. A verb held for
// containment (common/engine_hold.hpp) is never run by a grant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/verbs.hpp"

namespace hb::common {

inline constexpr std::string_view kGrantDir = "grants";
// The longest a grant may last, and the most runs it may allow.
inline constexpr std::int64_t kMaxGrantSeconds = 12 * 3600;
inline constexpr std::uint32_t kMaxGrantRuns = 1000;
// What `allow --for` allows without --runs: a day's edit-rebuild-check
// loop at the default rate limit (docs/PERFORMANCE.md, "A working session").
inline constexpr std::uint32_t kDefaultGrantRuns = 100;

struct Grant {
    std::string id;  // 16 lowercase hex digits, also the file's name
    Verb verb = Verb::Ping;
    std::optional<std::string> service;  // exactly the one the verb names, or none
    std::int64_t granted_at = 0;         // wall clock, seconds
    std::int64_t until = 0;
    std::uint32_t runs = 0;  // allowed
    std::uint32_t used = 0;
    bool operator==(const Grant&) const = default;
    [[nodiscard]] std::uint32_t runs_left() const { return used < runs ? runs - used : 0; }
    [[nodiscard]] bool live(std::int64_t now) const { return now < until && runs_left() > 0; }
    // The same verb and the same service (or both none): a grant for one
    // service never covers another.
    [[nodiscard]] bool covers(Verb verb_asked, std::string_view service_asked) const {
        return verb_asked == verb && service_asked == service.value_or("");
    }
};

std::string render_grant(const Grant& grant);
// The one reader of grants/<name>, the admin tool's and the executor's: a
// regular file of this user, no one else's permission bits, one link,
// opened without following one, holding exactly what render_grant writes
// with `name` as its id. Anything else is refused, so it grants nothing.
Result<Grant> read_grant(int dir_fd, const std::string& name);

// <state_dir>/grants, never a symlink, this user's and no one else's to
// write; with `create`, made 0700 when missing. nullopt: there is none.
Result<std::optional<UniqueFd>> open_grant_dir(const std::string& state_dir, bool create);

// While held, no one else reads, writes or removes a grant: an exclusive
// flock on the dir (the executor counting a run must not bring back a
// grant `revoke` just removed).
Result<void> lock_grants(int dir_fd);
void unlock_grants(int dir_fd);
// Writes grants/<grant.id> (a temporary file, then a rename); with the lock held.
Result<void> write_grant(int dir_fd, const Grant& grant);
// The executor: under the lock, a live grant that covers verb and service,
// with one of its runs used (written back; removed after its last);
// nullopt when none does.
Result<std::optional<Grant>> use_grant(int dir_fd, Verb verb, std::string_view service,
                                       std::int64_t now);

}  // namespace hb::common
