// What an engine escape reaches of the person's, in either posture
// (docs/ENGINE-USER.md, SECURITY.md "Two postures"): doctor's answer to
// "who runs the engine, and what would its escape get".
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace hb::admin {

// Where the engine runs as the person: the key and credential files present
// in `home`, the groups that give power over the host (sudo, docker, ...),
// and the other bridges' configs under `installs_root`
// (<config_home>/hostbridge) besides `slug`'s. One short phrase each.
std::vector<std::string> same_user_reach(const std::string& home, const std::string& installs_root,
                                         const std::string& slug);

// Another user, as the kernel sees it when it checks a file: its uid and
// every group it is in.
struct OtherUser {
    uid_t uid = 0;
    std::vector<gid_t> groups;
};
std::optional<OtherUser> other_user(const std::string& name);

// The r/w/x bits (4/2/1) `who` gets on the file at `path` (not followed),
// from its mode and its access ACL (POSIX.1e order: owner, named user
// masked, groups masked, others; the ACL ignored while the mask is zero,
// as Linux does). 0 where `path` cannot be looked at. Ask one bit at a
// time: for groups it is the union of every matching entry, and the kernel
// grants a bit that any one of them grants.
unsigned access_bits(const std::string& path, const OtherUser& who);

// What the engine user can read of the person's home (absolute, links
// resolved): nothing where it cannot reach and pass `home`; else the home's
// own entries it can read or enter (links left out), each "name" or
// "name/" with its mode, sorted.
struct HomeExposure {
    bool passes = false;
    std::vector<std::string> entries;
};
HomeExposure home_exposure(const std::string& home, const OtherUser& engine);

// The first directory from "/" down to `dir` (absolute, links resolved;
// included) that `who` cannot pass, or nullopt when it reaches `dir`. A
// relative `dir` is returned as it is: closed.
std::optional<std::string> first_closed_dir(const std::string& dir, const OtherUser& who);

}  // namespace hb::admin
