#include "sandbox/capabilities.hpp"

#include <cap-ng.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace hb::sandbox {
namespace {

Error errno_error(const std::string& what) {
    return make_error(what + ": " + std::strerror(errno));
}

// prctl(PR_CAPBSET_READ) answers EINVAL past the kernel's last capability,
// so the loop needs no /proc/sys/kernel/cap_last_cap.
constexpr int kMaxCap = 63;

}  // namespace

Result<CapabilityState> read_capability_state() {
    __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return errno_error("capget");

    CapabilityState state;
    state.effective_empty = (data[0].effective | data[1].effective) == 0;
    state.permitted_empty = (data[0].permitted | data[1].permitted) == 0;
    state.inheritable_empty = (data[0].inheritable | data[1].inheritable) == 0;
    state.has_setpcap = (data[0].effective & (1U << CAP_SETPCAP)) != 0;

    state.bounding_empty = true;
    state.ambient_empty = true;
    for (int cap = 0; cap <= kMaxCap; ++cap) {
        const int in_bounding = ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
        if (in_bounding < 0) break;  // EINVAL: past the last capability
        if (in_bounding == 1) state.bounding_empty = false;
        // EINVAL here means a kernel without ambient capabilities (< 4.3).
        if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0) == 1) {
            state.ambient_empty = false;
        }
    }
    return state;
}

Result<bool> drop_root_to_nobody() {
    uid_t ruid = 0, euid = 0, suid = 0;
    if (::getresuid(&ruid, &euid, &suid) != 0) return errno_error("getresuid");
    if (ruid != 0 && euid != 0 && suid != 0) return false;

    // Keep nothing across the change; capng_change_id adds back only what
    // it needs to make the change and drops that again afterwards.
    capng_clear(CAPNG_SELECT_BOTH);
    const int rc =
        capng_change_id(static_cast<int>(kNobodyId), static_cast<int>(kNobodyId),
                        static_cast<capng_flags_t>(CAPNG_DROP_SUPP_GRP | CAPNG_CLEAR_BOUNDING));
    if (rc != 0) {
        return make_error("capng_change_id(65534, 65534) failed with " + std::to_string(rc) + " (" +
                          std::strerror(errno) + "); is uid 65534 mapped in this namespace?");
    }

    // Believe the kernel, not the library.
    gid_t rgid = 0, egid = 0, sgid = 0;
    if (::getresuid(&ruid, &euid, &suid) != 0 || ::getresgid(&rgid, &egid, &sgid) != 0) {
        return errno_error("getresuid/getresgid");
    }
    const bool uids_ok = ruid == kNobodyId && euid == kNobodyId && suid == kNobodyId;
    const bool gids_ok = rgid == kNobodyId && egid == kNobodyId && sgid == kNobodyId;
    if (!uids_ok || !gids_ok) return make_error("uid/gid change to 65534 did not take effect");
    if (::getgroups(0, nullptr) != 0) return make_error("supplementary groups still set");
    return true;
}

Result<bool> clear_capabilities() {
    auto before = read_capability_state();
    if (!before) return before.error();
    const bool could_shrink_bounding = before->has_setpcap;

    capng_clear(CAPNG_SELECT_ALL);
    // The bounding set first, while CAP_SETPCAP is still effective. Without
    // it libcap-ng skips the bounding set and (with SELECT_BOTH) still
    // reports success, so the outcome is read back below instead.
    (void)capng_apply(CAPNG_SELECT_BOUNDS);
    if (capng_apply(CAPNG_SELECT_CAPS) != 0) return errno_error("capng_apply(CAPNG_SELECT_CAPS)");
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) {
        return errno_error("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
    }

    auto after = read_capability_state();
    if (!after) return after.error();
    if (!after->effective_empty || !after->permitted_empty || !after->inheritable_empty) {
        return make_error("capabilities still set after clearing them");
    }
    if (!after->ambient_empty)
        return make_error("ambient capabilities still set after clearing them");
    if (!after->bounding_empty && could_shrink_bounding) {
        return make_error("bounding set not empty although CAP_SETPCAP was held");
    }
    return after->bounding_empty;
}

}  // namespace hb::sandbox
