// The confinement of sandbox/confine.hpp. Landlock and seccomp through
// syscall(2) and the kernel's own headers: no library joins the process.
#include "sandbox/confine.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "ipc/sys.hpp"
#include "ipc/unique_fd.hpp"

namespace hb::sandbox {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "sandbox/confine.cpp: add this architecture's AUDIT_ARCH and check its syscall list"
#endif

// Numbered alike on every architecture since Linux 5.1; Debian 12's
// headers (6.1) predate them.
constexpr int kNrFchmodat2 = 452;
constexpr int kNrSetxattrat = 463;
constexpr int kNrRemovexattrat = 466;

// The file-system rights Landlock ABI 1 and 2 handle. A right handled and
// granted by no rule is denied everywhere: executing, making devices,
// FIFOs and sockets, removing, linking or renaming across directories.
constexpr std::uint64_t kAbi1Rights =
    LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |
    LANDLOCK_ACCESS_FS_READ_DIR | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
    LANDLOCK_ACCESS_FS_MAKE_SYM;
constexpr std::uint64_t kReadRights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
// What a copy into a fresh tree needs: no removing, no REFER (a link or a
// rename from the checkout into the tree), no FIFOs, sockets or devices.
constexpr std::uint64_t kWriteRights = kReadRights | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                       LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                                       LANDLOCK_ACCESS_FS_MAKE_SYM;

std::uint64_t handled_rights(int abi) {
    return abi >= 2 ? kAbi1Rights | LANDLOCK_ACCESS_FS_REFER : kAbi1Rights;
}

Error errno_error(const char* what) {
    return make_error(sys::errno_text(std::string("confining the step: ") + what));
}

Result<void> add_rule(int ruleset, int dir, std::uint64_t rights) {
    landlock_path_beneath_attr rule{};
    rule.allowed_access = rights;
    rule.parent_fd = dir;
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
        return errno_error("landlock_add_rule");
    }
    return {};
}

Result<void> apply_landlock(int abi, int read_dir, int write_dir) {
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = handled_rights(abi);
    const long fd = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0) return errno_error("landlock_create_ruleset");
    const UniqueFd ruleset(static_cast<int>(fd));
    if (auto r = add_rule(ruleset.get(), read_dir, kReadRights); !r) return r;
    if (auto r = add_rule(ruleset.get(), write_dir, kWriteRights); !r) return r;
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
        return errno_error("landlock_restrict_self");
    }
    return {};
}

// A classic BPF program, written out: one instruction a line in filter().
class Program {
  public:
    void load_arch() { stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)); }
    void load_nr() { stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)); }
    // The low 32 bits of argument `n`: every argument tested here is an int
    // or unsigned int to the kernel, which reads no more.
    void load_arg(unsigned n) {
        stmt(BPF_LD | BPF_W | BPF_ABS,
             static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * n));
    }
    void jump(std::uint16_t op, std::uint32_t k, std::uint8_t yes, std::uint8_t no) {
        code_.push_back(BPF_JUMP(BPF_JMP | op | BPF_K, k, yes, no));
    }
    void ret(std::uint32_t action) { stmt(BPF_RET | BPF_K, action); }
    void deny() { ret(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)); }

    // `nr` always refused (EPERM).
    void refuse(int nr) {
        jump(BPF_JEQ, static_cast<std::uint32_t>(nr), 0, 1);
        deny();
    }
    // `nr` refused when argument `arg` has any bit of `mask` set.
    void refuse_with_bits(int nr, unsigned arg, std::uint32_t mask) {
        jump(BPF_JEQ, static_cast<std::uint32_t>(nr), 0, 4);
        load_arg(arg);
        jump(BPF_JSET, mask, 0, 1);
        deny();
        ret(SECCOMP_RET_ALLOW);
    }
    // `nr` allowed only when argument `arg` is `value`.
    void allow_only_equal(int nr, unsigned arg, std::uint32_t value) {
        jump(BPF_JEQ, static_cast<std::uint32_t>(nr), 0, 4);
        load_arg(arg);
        jump(BPF_JEQ, value, 0, 1);
        ret(SECCOMP_RET_ALLOW);
        deny();
    }
    // `nr` refused when argument `arg` is `a` or `b`.
    void refuse_equal(int nr, unsigned arg, std::uint32_t a, std::uint32_t b) {
        jump(BPF_JEQ, static_cast<std::uint32_t>(nr), 0, 5);
        load_arg(arg);
        jump(BPF_JEQ, a, 2, 0);
        jump(BPF_JEQ, b, 1, 0);
        ret(SECCOMP_RET_ALLOW);
        deny();
    }

    [[nodiscard]] std::vector<sock_filter>& code() { return code_; }

  private:
    void stmt(std::uint16_t op, std::uint32_t k) { code_.push_back(BPF_STMT(op, k)); }
    std::vector<sock_filter> code_;
};

// A denylist on top of Landlock, not an allowlist: the step's own code
// (the copy, malloc, the sanitizers) keeps every other syscall. Each entry
// is a way to change a file, or to ask another process to, that ABI 2
// does not handle.
std::vector<sock_filter> filter(pid_t self) {
    Program p;
    p.load_arch();
    p.jump(BPF_JEQ, kAuditArch, 1, 0);
    p.ret(SECCOMP_RET_KILL_PROCESS);  // int 0x80 and other ABIs: another syscall table
    p.load_nr();
#if defined(__x86_64__)
    p.jump(BPF_JGE, 0x40000000U, 0, 1);  // x32's numbers
    p.ret(SECCOMP_RET_KILL_PROCESS);
#endif
    // Truncation by path (Landlock handles it from ABI 3 on).
    p.refuse(SYS_truncate);
    // An open with O_TRUNC: ABI 2 checks only read/write at open, so a file
    // the step may read could be truncated. openat2's flags lie behind a
    // pointer no filter reads: refused whole (the snapshot's link check,
    // which needs it, runs in the parent).
    p.refuse_with_bits(SYS_openat, 2, O_TRUNC);
    p.refuse(SYS_openat2);
#ifdef SYS_open
    p.refuse_with_bits(SYS_open, 1, O_TRUNC);
    p.refuse(SYS_creat);
#endif
    // Metadata by path or fd, which no Landlock ABI handles.
#ifdef SYS_chmod
    p.refuse(SYS_chmod);
    p.refuse(SYS_chown);
    p.refuse(SYS_lchown);
    p.refuse(SYS_utime);
    p.refuse(SYS_utimes);
    p.refuse(SYS_futimesat);
#endif
    p.refuse(SYS_fchmodat);
    p.refuse(kNrFchmodat2);
    p.refuse(SYS_fchownat);
    p.refuse(SYS_utimensat);
    p.refuse(SYS_setxattr);
    p.refuse(SYS_lsetxattr);
    p.refuse(SYS_fsetxattr);
    p.refuse(SYS_removexattr);
    p.refuse(SYS_lremovexattr);
    p.refuse(SYS_fremovexattr);
    p.refuse(kNrSetxattrat);
    p.refuse(kNrRemovexattrat);
    // Other processes of the person's uid: a socket (the session bus,
    // podman's API) or a signal could make them write; ABI 6 scopes some.
    p.refuse(SYS_socket);
    p.refuse(SYS_tkill);
    p.refuse(SYS_rt_sigqueueinfo);
    p.refuse(SYS_rt_tgsigqueueinfo);
    p.refuse(SYS_pidfd_send_signal);
    p.refuse(SYS_ptrace);
    p.refuse(SYS_process_vm_writev);
    p.refuse(SYS_io_uring_setup);  // its own way to every syscall above
    p.allow_only_equal(SYS_kill, 0, static_cast<std::uint32_t>(self));
    p.allow_only_equal(SYS_tgkill, 0, static_cast<std::uint32_t>(self));  // raise(): abort()
    // Typing into a terminal that stderr may be (no Landlock right before
    // ABI 5 covers an inherited fd's ioctl).
    p.refuse_equal(SYS_ioctl, 1, TIOCSTI, TIOCLINUX);
    p.ret(SECCOMP_RET_ALLOW);
    return std::move(p.code());
}

Result<void> apply_seccomp() {
    std::vector<sock_filter> code = filter(::getpid());
    sock_fprog program{static_cast<unsigned short>(code.size()), code.data()};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
        return errno_error("seccomp");
    }
    return {};
}

// Closes every fd from 3 but those in `keep` (close_range(2), Linux 5.9).
Result<void> close_all_but(std::array<int, 3> keep) {
    std::sort(keep.begin(), keep.end());
    unsigned first = 3;
    for (const int fd : keep) {
        if (fd < static_cast<int>(first)) continue;
        const auto k = static_cast<unsigned>(fd);
        if (k > first && ::syscall(SYS_close_range, first, k - 1, 0) != 0) {
            return errno_error("close_range");
        }
        first = k + 1;
    }
    if (::syscall(SYS_close_range, first, ~0U, 0) != 0) return errno_error("close_range");
    return {};
}

}  // namespace

int landlock_abi() {
    const long abi =
        ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : static_cast<int>(abi);
}

Result<int> confine_self(const Confinement& confinement, int keep_fd) {
    if (confinement.read_dir <= 2 || confinement.write_dir <= 2 || keep_fd <= 2) {
        return make_error("confining the step: no directory to confine it to");
    }
    // Nothing inherited but what the step needs: not the audit log, not
    // the spool's pinned directories, not a terminal to read.
    {
        const UniqueFd null(::open("/dev/null", O_RDWR | O_CLOEXEC));
        if (!null) return errno_error("/dev/null");
        if (::dup2(null.get(), 0) < 0 || ::dup2(null.get(), 1) < 0) return errno_error("dup2");
    }
    if (auto r = close_all_but({keep_fd, confinement.read_dir, confinement.write_dir}); !r) {
        return r.error();
    }
    const rlimit no_core{0, 0};
    if (::setrlimit(RLIMIT_CORE, &no_core) != 0) return errno_error("RLIMIT_CORE");
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno_error("no_new_privs");
    const int abi = std::min({confinement.max_abi, kLandlockAbi, landlock_abi()});
    if (abi >= 1) {
        if (auto r = apply_landlock(abi, confinement.read_dir, confinement.write_dir); !r) {
            return r.error();
        }
    }
    if (confinement.seccomp) {
        if (auto r = apply_seccomp(); !r) return r.error();
    }
    return abi < 0 ? 0 : abi;
}

}  // namespace hb::sandbox
