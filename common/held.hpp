// Requests held for a person (policy `ask`): the record the drain writes
// and the decision `hostbridge allow|deny` writes, both in <state_dir>/held/,
// out of the agent's reach (docs/DECIDE-AND-RUN.md, "Held for a person").
// Linked into both the executor and the admin tool, so the two read one
// format and compare one generation.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/config.hpp"
#include "ipc/result.hpp"
#include "ipc/unique_fd.hpp"
#include "ipc/wire.hpp"

namespace hb::common {

inline constexpr std::string_view kHeldDir = "held";

// The states a held request goes through, each a file held/<request><suffix>
// (docs/DECIDE-AND-RUN.md, "Held for a person"). The drain and the admin
// tool move a request between them only with the transitions below:
//
//   (none) --hold_record--> Record --(a person)publish_decision--> Record + Decision
//   Record + Decision --take_up--> Taken + Decided --finish_taken--> Decided
//   Record --end_undecided (expired)--> Gone
//   Taken, or Record + Decided (a drain died) --> failed, removed
//   Decided, Gone --(decided_keep_seconds after)--> removed
//
// While any of a name's files is there, the name is not held again
// (held_name_used): a person's `allow NAME` must never meet another request.
enum class HeldFile : std::uint8_t {
    Record,    // held/<request>: the record, waiting for a person
    Decision,  // .decision: a person's say, not yet taken up
    Taken,     // .taken: the record once a drain has taken it up
    Decided,   // .decided: the decision a drain took up, kept (with its nonce)
               // so each `allow`/`deny` can tell whether its own was the one used
    Gone,      // .gone: a hold that expired or was failed without a person's
               // decision being used
};
inline constexpr std::array<HeldFile, 5> kHeldFiles = {
    HeldFile::Record, HeldFile::Decision, HeldFile::Taken, HeldFile::Decided, HeldFile::Gone};

constexpr std::string_view held_suffix(HeldFile file) {
    switch (file) {
        case HeldFile::Record:
            return "";
        case HeldFile::Decision:
            return ".decision";
        case HeldFile::Taken:
            return ".taken";
        case HeldFile::Decided:
            return ".decided";
        case HeldFile::Gone:
            return ".gone";
    }
    return "";
}

// held/<request><suffix>.
std::string held_name(std::string_view request, HeldFile file);

struct HeldName {
    std::string request;
    HeldFile file = HeldFile::Record;
};
// Which state's file `name` in held/ is: a suffix's, or a Record when it is
// a request name; nullopt for anything else (temporary files, a record
// moved aside).
std::optional<HeldName> parse_held_name(std::string_view name);

// The digest a person is shown and names in `allow NAME DIGEST`: the first
// kShortDigest hex digits of held_digest().
inline constexpr std::size_t kShortDigest = 16;
// At most this many requests merged into one held request.
inline constexpr std::size_t kMaxMerged = 16;

struct HeldRequest {
    std::string request;  // on-schema name (archive/ has the file)
    Verb verb = Verb::Ping;
    std::optional<std::string> service;  // the service's name, not its index
    std::string command;                 // what would run, docs/ARGV-TABLE.md's names
    std::string generation;              // config_generation() when it was held
    std::int64_t requested_at = 0;
    std::int64_t held_at = 0;
    std::int64_t expires_at = 0;      // requested_at + the TTL
    std::vector<std::string> merged;  // later requests for the same thing
    // logs: the lines asked for (docs/PROTOCOL.md, "Following logs"); only a
    // request with the same window merges into this one.
    LogWindow window;
    // A build: the hash of the snapshot taken when it was held, the one the
    // person is shown and the only one that builds (engines/build_input/build_input.hpp);
    // empty otherwise.
    std::string snapshot;
    bool operator==(const HeldRequest&) const = default;
};

struct HeldDecision {
    bool allow = false;
    std::string generation;  // what the person was shown
    std::string reason;      // deny only, may be empty
    // held_digest() of the record the person was shown: a decision is for
    // that record, never for another held later under the same name.
    std::string record;
    // 32 lowercase hex digits the deciding `allow`/`deny` drew: the one it
    // finds in held/<request>.decided tells it its decision was used.
    std::string nonce;
    bool operator==(const HeldDecision&) const = default;
};

std::string render_held(const HeldRequest& held);
// SHA-256 over what identifies a held request and what the person is shown
// (everything but `merged`, which grows while it waits).
std::string held_digest(const HeldRequest& held);
// Its first kShortDigest digits, as `pending` and the notification show it.
std::string held_short_digest(const HeldRequest& held);
Result<HeldRequest> parse_held(std::string_view text);
// The admin tool writes decisions (admin/audit/held_decision.hpp); the drain
// only reads them.
Result<HeldDecision> parse_decision(std::string_view text);

// SHA-256 over everything a held request was checked against that a
// re-install or `approve` can change: services and their order, what is
// buildable, the backend, the pins and the rendered files.
std::string config_generation(const Config& config);

// <state_dir>/held, created 0700 if missing; never a symlink.
Result<UniqueFd> open_held_dir(const std::string& state_dir);
// The names in it (records, decisions, taken records, temporary files).
Result<std::vector<std::string>> list_held(int held_fd);
// A regular file of at most 64 KiB in it, read without following a link;
// nullopt when there is none.
Result<std::optional<std::string>> read_held_file(int held_fd, const std::string& name);
// How long held/<request>.decided (and .gone) is kept after the person decided (its
// mtime): a TTL and the skew, time enough for every `allow`/`deny` of that
// hold to read it, while hold() refuses the name.
std::int64_t decided_keep_seconds(const Limits& limits);
// Writes `bytes` to <dir>/<name> through its pinned fd atomically (a
// temporary file, synced, then a rename); with `no_replace`, fails with
// EEXIST (false) if the name exists. held/ and grants/ (common/grant.hpp).
Result<bool> publish_file_at(int dir_fd, std::string_view dir, const std::string& name,
                             std::string_view bytes, bool no_replace);
inline Result<bool> publish_held_file(int held_fd, const std::string& name, std::string_view bytes,
                                      bool no_replace) {
    return publish_file_at(held_fd, kHeldDir, name, bytes, no_replace);
}

// --- The transitions (the states above) -----------------------------------

// Whether any state's file of `request` is there.
bool held_name_used(int held_fd, const std::string& request);
// (none) -> Record; false when the name is taken.
Result<bool> hold_record(int held_fd, const HeldRequest& held);
// Record + Decision -> Taken + Decided, synced: a crash from here on fails
// the request, never runs it twice.
Result<void> take_up(int held_fd, const std::string& request);
// Record -> Gone, the tombstone synced before the record goes.
Result<void> end_undecided(int held_fd, const std::string& request);
// Removes the file of `request` in state `file` (Taken once finished,
// what a crash left, a moot decision, a Decided or Gone kept long enough).
void remove_held(int held_fd, const std::string& request, HeldFile file);
// Record -> Record + Decision: what `hostbridge allow|deny` publishes (the
// text from admin/audit/held_decision.hpp); false when a decision is there
// already (a decision is used once). Inline: the executor never decides.
inline Result<bool> publish_decision(int held_fd, const std::string& request,
                                     std::string_view text) {
    return publish_held_file(held_fd, held_name(request, HeldFile::Decision), text, true);
}

}  // namespace hb::common
