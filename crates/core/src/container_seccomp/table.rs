//! The container's syscall profile as data. Each group is a set of system
//! calls with what the profile does with them and why; a call in no group
//! gets the profile's default answer, EPERM. `super::profile` turns the
//! groups into the JSON file engines load.
//!
//! Three kinds of group:
//!
//! - `Source::EngineDefault`: what Docker's default profile (Docker 26;
//!   containerd's runtime default is derived from it, podman's and
//!   CRI-O's allows more) allows every container, whatever its
//!   capabilities. Kept as it is, so the file is
//!   "the engine's default" plus the additions below and nothing else.
//! - `Source::Added`: what the engine's default refuses a container without
//!   CAP_SYS_ADMIN (or refuses outright) that sessions need: bubblewrap and
//!   the egress jail start from a user namespace and build each session
//!   from mounts inside it, pasta joins the jail's namespaces, and agents
//!   keep nested user namespaces and debugging of their own children
//!   (docs/defences.md, `syscalls`). Each is also a row the session's own
//!   filter keeps on purpose (`sandbox::seccomp::table`, `KEEP`): the
//!   container grants nothing a session's filter would refuse.
//!   What the launcher, bubblewrap, the jail's holder and pasta call was
//!   read off `strace -f` of jailed sessions inside a podman container, as
//!   root and as a user (beyond the default: clone with namespace flags,
//!   unshare, setns, mount, umount2, pivot_root, open_tree); the rest of
//!   the additions are what verify 79 and 80 prove sessions keep.
//! - the rest of the engine's default refusals stay: kernel keyrings, bpf,
//!   perf events, userfaultfd, modules, kexec, swap, reboot, accounting,
//!   quotas, the kernel log, setting the clock, io_uring, file handles,
//!   other processes' memory, raw I/O ports, NUMA policy.
//!
//! Why each addition is safe for the container itself: namespaces, mounts
//! and root changes need capabilities in the namespace they act on, and a
//! container without capabilities (the manifests drop them all) holds
//! them only inside user namespaces it creates, over objects that
//! namespace owns. What the profile adds is the kernel's user-namespace
//! surface, the same as on a host where unprivileged users may create
//! them.

/// Who needs an added group (for the file's comments and the docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// Docker's default profile allows it to every container.
    EngineDefault,
    /// Added beyond the engine's default; the text says who needs it.
    Added(&'static str),
}

/// What the profile does with a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rule {
    Allow,
    /// Allowed when the first argument equals one of `values` (the
    /// kernel reads it as a 32-bit value).
    AllowArg0In(&'static [u32]),
    /// Allowed unless the first argument is `value`.
    AllowArg0Not(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Group {
    pub names: &'static [&'static str],
    pub rule: Rule,
    pub source: Source,
    pub why: &'static str,
}

/// AF_VSOCK: reaches the hypervisor host past every network namespace.
pub(super) const AF_VSOCK: u64 = 40;

/// Docker's default allow-list for every container (its unconditional
/// group, Docker 26). Names a kernel ABI lacks are skipped by libseccomp
/// for that ABI.
#[rustfmt::skip]
const ENGINE_DEFAULT: &[&str] = &[
    "accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk", "cachestat", "capget", "capset",
    "chdir", "chmod", "chown", "chown32", "clock_adjtime", "clock_adjtime64", "clock_getres",
    "clock_getres_time64", "clock_gettime", "clock_gettime64", "clock_nanosleep", "clock_nanosleep_time64",
    "close", "close_range", "connect", "copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create",
    "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait", "epoll_pwait2", "epoll_wait",
    "epoll_wait_old", "eventfd", "eventfd2", "execve", "execveat", "exit", "exit_group", "faccessat",
    "faccessat2", "fadvise64", "fadvise64_64", "fallocate", "fanotify_mark", "fchdir", "fchmod", "fchmodat",
    "fchmodat2", "fchown", "fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr",
    "flistxattr", "flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstat64", "fstatat64", "fstatfs",
    "fstatfs64", "fsync", "ftruncate", "ftruncate64", "futex", "futex_requeue", "futex_time64", "futex_wait",
    "futex_waitv", "futex_wake", "futimesat", "get_robust_list", "get_thread_area", "getcpu", "getcwd",
    "getdents", "getdents64", "getegid", "getegid32", "geteuid", "geteuid32", "getgid", "getgid32",
    "getgroups", "getgroups32", "getitimer", "getpeername", "getpgid", "getpgrp", "getpid", "getppid",
    "getpriority", "getrandom", "getresgid", "getresgid32", "getresuid", "getresuid32", "getrlimit",
    "getrusage", "getsid", "getsockname", "getsockopt", "gettid", "gettimeofday", "getuid", "getuid32",
    "getxattr", "inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch", "io_cancel",
    "io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64", "io_setup", "io_submit", "ioctl",
    "ioprio_get", "ioprio_set", "ipc", "kill", "landlock_add_rule", "landlock_create_ruleset",
    "landlock_restrict_self", "lchown", "lchown32", "lgetxattr", "link", "linkat", "listen", "listxattr",
    "llistxattr", "_llseek", "lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64", "madvise",
    "map_shadow_stack", "membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod",
    "mknodat", "mlock", "mlock2", "mlockall", "mmap", "mmap2", "mprotect", "mq_getsetattr", "mq_notify",
    "mq_open", "mq_timedreceive", "mq_timedreceive_time64", "mq_timedsend", "mq_timedsend_time64",
    "mq_unlink", "mremap", "msgctl", "msgget", "msgrcv", "msgsnd", "msync", "munlock", "munlockall",
    "munmap", "name_to_handle_at", "nanosleep", "newfstatat", "_newselect", "open", "openat", "openat2",
    "pause", "pidfd_open", "pidfd_send_signal", "pipe", "pipe2", "pkey_alloc", "pkey_free", "pkey_mprotect",
    "poll", "ppoll", "ppoll_time64", "prctl", "pread64", "preadv", "preadv2", "prlimit64",
    "process_mrelease", "pselect6", "pselect6_time64", "pwrite64", "pwritev", "pwritev2", "read",
    "readahead", "readlink", "readlinkat", "readv", "recv", "recvfrom", "recvmmsg", "recvmmsg_time64",
    "recvmsg", "remap_file_pages", "removexattr", "rename", "renameat", "renameat2", "restart_syscall",
    "rmdir", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn",
    "rt_sigsuspend", "rt_sigtimedwait", "rt_sigtimedwait_time64", "rt_tgsigqueueinfo",
    "sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity", "sched_getattr",
    "sched_getparam", "sched_getscheduler", "sched_rr_get_interval", "sched_rr_get_interval_time64",
    "sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield", "seccomp",
    "select", "semctl", "semget", "semop", "semtimedop", "semtimedop_time64", "send", "sendfile",
    "sendfile64", "sendmmsg", "sendmsg", "sendto", "set_robust_list", "set_thread_area", "set_tid_address",
    "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid", "setgid32", "setgroups", "setgroups32",
    "setitimer", "setpgid", "setpriority", "setregid", "setregid32", "setresgid", "setresgid32", "setresuid",
    "setresuid32", "setreuid", "setreuid32", "setrlimit", "setsid", "setsockopt", "setuid", "setuid32",
    "setxattr", "shmat", "shmctl", "shmdt", "shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4",
    "sigprocmask", "sigreturn", "socketcall", "socketpair", "splice", "stat", "stat64", "statfs", "statfs64",
    "statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee", "tgkill", "time",
    "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime", "timer_gettime64", "timer_settime",
    "timer_settime64", "timerfd_create", "timerfd_gettime", "timerfd_gettime64", "timerfd_settime",
    "timerfd_settime64", "times", "tkill", "truncate", "truncate64", "ugetrlimit", "umask", "uname",
    "unlink", "unlinkat", "utime", "utimensat", "utimensat_time64", "utimes", "vfork", "vmsplice", "wait4",
    "waitid", "waitpid", "write", "writev",
];

/// Calls that exist on some ABIs only, which Docker's default allows there.
#[rustfmt::skip]
const ARCH_SPECIFIC: &[&str] = &[
    // x86: the thread-pointer and segment calls (a flat list also allows
    // arch_prctl to i386 code, which Docker keeps to 64-bit and x32).
    "arch_prctl", "modify_ldt",
    // arm and arm64 (its 32-bit compat ABI). Docker also lists
    // sync_file_range2, which on these ABIs is arm_sync_file_range.
    "arm_fadvise64_64", "arm_sync_file_range", "breakpoint", "cacheflush", "set_tls",
];

/// Docker allows these on kernels 4.8 and later, where ptrace can no longer
/// be used to get around a seccomp filter.
const TRACING: &[&str] = &["ptrace", "process_vm_readv", "process_vm_writev"];

/// Docker's personalities: PER_LINUX, PER_LINUX32, UNAME26 and both, and
/// the 0xffffffff query.
const ENGINE_PERSONALITIES: &[u32] = &[0x0, 0x8, 0x2_0000, 0x2_0008, 0xffff_ffff];
/// The same with ADDR_NO_RANDOMIZE: debuggers turn address randomisation
/// off for the program they start. Together with the above, exactly what
/// the session's filter allows (`ALLOWED_PERSONALITIES`); the flags that
/// undo memory protections stay refused.
const NO_RANDOMIZE_PERSONALITIES: &[u32] = &[0x4_0000, 0x4_0008, 0x6_0000, 0x6_0008];

#[rustfmt::skip]
pub(super) const GROUPS: &[Group] = &[
    Group { names: ENGINE_DEFAULT, rule: Rule::Allow, source: Source::EngineDefault,
        why: "Docker's default profile allows these to every container" },
    Group { names: ARCH_SPECIFIC, rule: Rule::Allow, source: Source::EngineDefault,
        why: "Docker's default profile allows these on the ABIs that have them" },
    Group { names: TRACING, rule: Rule::Allow, source: Source::EngineDefault,
        why: "Docker's default profile allows these on Linux 4.8 and later (ptrace then respects seccomp)" },
    Group { names: &["socket"], rule: Rule::AllowArg0Not(AF_VSOCK), source: Source::EngineDefault,
        why: "Docker's default profile allows sockets of every family but vsock, which reaches the hypervisor host" },
    Group { names: &["personality"], rule: Rule::AllowArg0In(ENGINE_PERSONALITIES), source: Source::EngineDefault,
        why: "Docker's default profile allows these personalities; the flags that undo memory protections stay refused" },

    Group { names: &["unshare", "clone", "clone3"], rule: Rule::Allow,
        source: Source::Added("bubblewrap, the egress jail's holder and agents' nested sandboxes"),
        why: "new namespaces: bubblewrap and the egress jail start from a user namespace, and sessions keep nested ones (Chromium's sandbox, unshare -r); Docker's default allows clone without namespace flags and unshare only with CAP_SYS_ADMIN. clone3, whose flags a filter cannot read, answers ENOSYS there so that C libraries fall back to clone; with clone allowed whole it adds nothing, and refusing it with EPERM would break thread creation" },
    Group { names: &["setns"], rule: Rule::Allow,
        source: Source::Added("pasta and the egress jail"),
        why: "pasta and the jail's helpers join the jail's user and network namespaces; Docker's default allows it only with CAP_SYS_ADMIN" },
    Group { names: &["mount", "umount2", "umount", "pivot_root"], rule: Rule::Allow,
        source: Source::Added("bubblewrap"),
        why: "bubblewrap builds each session from mounts in its own mount namespace and pivots into it; Docker's default allows mount and umount only with CAP_SYS_ADMIN and pivot_root never. Without capabilities over the container's own mounts, they change nothing outside a namespace the caller made" },
    Group { names: &["open_tree", "move_mount", "mount_setattr"], rule: Rule::Allow,
        source: Source::Added("the launcher"),
        why: "the new mount API: the launcher probes for it and, for a root launcher, places the idmapped trees and pins by descriptor, so nothing a session can swap is resolved by path (docs/defences.md, file system); Docker's default allows them only with CAP_SYS_ADMIN. fsopen, fsconfig, fsmount and fspick stay refused: nothing here uses them" },
    Group { names: &["chroot", "sethostname", "setdomainname"], rule: Rule::Allow,
        source: Source::Added("agents' nested sandboxes"),
        why: "Chromium's sandbox chroots into an empty directory inside its user namespace, and a nested UTS namespace gets its own name (verify 79); Docker's default allows them only with CAP_SYS_CHROOT / CAP_SYS_ADMIN" },
    Group { names: &["personality"], rule: Rule::AllowArg0In(NO_RANDOMIZE_PERSONALITIES),
        source: Source::Added("agents' debuggers"),
        why: "the same personalities with ADDR_NO_RANDOMIZE: gdb turns address randomisation off for the program it starts (verify 80)" },
    Group { names: &["kcmp"], rule: Rule::Allow,
        source: Source::Added("agents' debuggers"),
        why: "compares kernel objects of processes the caller may trace (verify 80); Docker's default allows it only with CAP_SYS_PTRACE" },
];
