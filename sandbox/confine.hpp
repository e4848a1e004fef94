// An engine step in a process confined to what it needs: it reads beneath
// one directory, reads and writes beneath another, and can write nothing
// else, so a bug in it cannot write the person's files. hostbridge-snapshot,
// the build's snapshot copy, confines itself so (snapshot/serve.cpp); the
// parser's lockdown (sandbox/lockdown.hpp) is the stricter model.
//
// Two layers, each closing what the other leaves open:
//   - Landlock, with the access rights of ABI 2 only (Debian 12's kernel,
//     6.1): every file-system right outside the two directories is gone;
//   - a seccomp filter (written here, no library) for what ABI 2 does not
//     handle: truncate(2) by path, an open with O_TRUNC (openat2 at all),
//     chmod, chown,
//     utimes and xattrs by path, sockets (a connect to the person's session
//     bus or podman's socket is no file write, but can ask for one),
//     signals to other processes, TIOCSTI on an inherited terminal.
// SECURITY.md ("Engine steps and the privilege each keeps") says what stays.
#pragma once

#include "ipc/result.hpp"

namespace hb::sandbox {

// The highest Landlock ABI whose access rights a confinement uses: Debian
// 12's. A newer kernel handles exactly these rights too, so CI on a newer
// kernel shows Debian 12's behaviour.
inline constexpr int kLandlockAbi = 2;

// The Landlock ABI this kernel offers; 0 when it has none (not built in, or
// not enabled at boot: `lsm=` without landlock).
int landlock_abi();

struct Confinement {
    int read_dir = -1;   // a directory fd (O_PATH is enough): read beneath it
    int write_dir = -1;  // a directory fd: read, create and write beneath it
    // The Landlock ABI used is min(this, kLandlockAbi, the kernel's): the
    // tests force 1 or 2; hostbridge-snapshot passes nothing but the default.
    int max_abi = kLandlockAbi;
    // The seccomp filter; only a test turns it off, to show what it closes.
    bool seccomp = true;
};

// Confines the calling process, for good: stdin and stdout on /dev/null,
// every fd but 0-2, `keep_fd` and the two directories closed, no core
// dumps, no_new_privs, the Landlock ruleset (skipped, not refused, on a
// kernel without Landlock: SECURITY.md says why), then the seccomp filter.
// The ABI in force (0: no Landlock), or why the process could not be
// confined: it must then exit without doing the step.
Result<int> confine_self(const Confinement& confinement, int keep_fd);

}  // namespace hb::sandbox
