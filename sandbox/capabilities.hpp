// Identity and capabilities of the parser: drop root, clear every set.
#pragma once

#include "ipc/result.hpp"

namespace hb::sandbox {

// The unprivileged identity a root-started parser becomes ("nobody").
inline constexpr unsigned kNobodyId = 65534;

// What the kernel says about this process's capabilities (capget and
// prctl only: works after the filesystem is out of reach).
struct CapabilityState {
    bool effective_empty = false;
    bool permitted_empty = false;
    bool inheritable_empty = false;
    bool ambient_empty = false;
    bool bounding_empty = false;
    bool has_setpcap = false;  // effective CAP_SETPCAP: can shrink the bounding set
};
Result<CapabilityState> read_capability_state();

// When any of the real, effective or saved uids is 0: become uid and gid
// 65534 with no supplementary groups and an empty bounding set
// (capng_change_id), then check the kernel agrees. Returns whether it did.
Result<bool> drop_root_to_nobody();

// Clears the effective, permitted, inheritable and ambient sets, and the
// bounding set when the process may (it holds CAP_SETPCAP: it was root, or
// it is in a user namespace of its own). The result is read back from the
// kernel: any capability left is an error; a bounding set left non-empty
// only because it could not be touched is reported as `false`.
Result<bool> clear_capabilities();

}  // namespace hb::sandbox
