//! The session's syscall profile as data: one row per system call the
//! profile decides about, with its number on every ABI, what happens, and
//! why. A syscall without a row is allowed. Rows marked `KEEP` are allowed
//! too; they are written down because an agent needs them and a stricter
//! profile (Docker's, for a container without capabilities) would refuse
//! them, so a reader sees the whole policy here.
//!
//! Numbers: columns are x86_64, x32 (the x32 table's own number; the filter
//! adds bit 30), i386, aarch64, arm (EABI, also the compat ABI of aarch64
//! hosts). `NONE`: that ABI has no such call. Sources: the kernel's
//! `syscall_64.tbl`, `syscall_32.tbl`, `asm-generic/unistd.h` and
//! `arch/arm/tools/syscall.tbl`; the unit tests compare the native column
//! with the C library's numbers.
//!
//! The errno of a refusal is EPERM (what Docker answers too) unless the row
//! says otherwise: ENOSYS where programs have a fallback for a kernel
//! without the feature (io_uring), EOPNOTSUPP where they have one for a
//! file system without it (file handles), EAFNOSUPPORT for address families.

use super::abi::Abi;

/// "This ABI has no such call."
pub(crate) const NONE: u32 = u32::MAX;

pub const EPERM: u16 = libc::EPERM as u16;
pub const ENOSYS: u16 = libc::ENOSYS as u16;
pub const EOPNOTSUPP: u16 = libc::EOPNOTSUPP as u16;
pub const EAFNOSUPPORT: u16 = libc::EAFNOSUPPORT as u16;

pub const TIOCSTI: u32 = 0x5412;
pub const TIOCLINUX: u32 = 0x541C;

/// Address families sessions may create sockets of: unix sockets, IPv4,
/// IPv6, and netlink (ip, ss, getifaddrs, and nested network namespaces).
pub const ALLOWED_FAMILIES: &[u32] = &[libc::AF_UNIX as u32, libc::AF_INET as u32, libc::AF_INET6 as u32, libc::AF_NETLINK as u32];

/// Personalities Docker allows (PER_LINUX, PER_LINUX32, UNAME26 and both,
/// the 0xffffffff query), each also with ADDR_NO_RANDOMIZE (gdb, `setarch
/// -R`). Refused: READ_IMPLIES_EXEC, MMAP_PAGE_ZERO and the other flags
/// that weaken memory protections.
pub(crate) const ALLOWED_PERSONALITIES: &[u32] = &[0, 0x8, 0x2_0000, 0x2_0008, 0x4_0000, 0x4_0008, 0x6_0000, 0x6_0008, 0xffff_ffff];

/// S_ISUID | S_ISGID: the mode bits no session may set (a file left with
/// them runs with its owner's or group's ids for whoever starts it later,
/// outside the sandbox).
const SETID_BITS: u32 = libc::S_ISUID | libc::S_ISGID;

/// `socketcall` sub-calls that create sockets (SYS_SOCKET, SYS_SOCKETPAIR).
const SOCKETCALL_CREATE: &[u32] = &[1, 8];

/// What the filter answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Allow,
    Errno(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Always refused with this errno.
    Deny(u16),
    /// Allowed on purpose (see the module comment).
    Keep,
    /// Decided by the low 32 bits of argument `arg` (the kernel reads these
    /// arguments as `int`/`unsigned int`, so the high half must not count):
    /// `then` when they are one of `values`, else `otherwise`.
    Arg { arg: u8, values: &'static [u32], then: Action, otherwise: Action },
    /// `then` when the low 32 bits of argument `arg` have any bit of `mask`
    /// set, else allowed (a file mode's setuid and setgid bits).
    AnyBit { arg: u8, mask: u32, then: Action },
}

/// The groups `verify` checks one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Group {
    Keyrings,
    KernelHooks,
    Modules,
    HostAdmin,
    Clock,
    IoUring,
    FileHandles,
    OtherProcesses,
    Obsolete,
    Personality,
    Sockets,
    Terminal,
    SetId,
    Kept,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub name: &'static str,
    /// Numbers per ABI, in `abi::ALL` order; `NONE` where absent.
    pub nrs: [u32; 5],
    pub group: Group,
    pub rule: Rule,
    pub why: &'static str,
}

impl Row {
    /// The number this row has on `abi`'s table, if any.
    pub fn nr(&self, abi: Abi) -> Option<u32> {
        Some(self.nrs[abi.column()]).filter(|n| *n != NONE)
    }
}

const fn row(name: &'static str, nrs: [u32; 5], group: Group, rule: Rule, why: &'static str) -> Row {
    Row { name, nrs, group, rule, why }
}

const DENY: Rule = Rule::Deny(EPERM);
const SETID_MODE_ARG1: Rule = Rule::AnyBit { arg: 1, mask: SETID_BITS, then: Action::Errno(EPERM) };
const SETID_MODE_ARG2: Rule = Rule::AnyBit { arg: 2, mask: SETID_BITS, then: Action::Errno(EPERM) };
const SETID_MODE_ARG3: Rule = Rule::AnyBit { arg: 3, mask: SETID_BITS, then: Action::Errno(EPERM) };
const KEEP: Rule = Rule::Keep;

use Group::*;

#[rustfmt::skip]
pub const ROWS: &[Row] = &[
    //   name                  x86_64 x32   i386  aarch64 arm
    row("add_key",             [248,  248,  286,  217,  309], Keyrings, DENY, "kernel keyrings are shared by every process of the user: a key is found and read by its id, whichever session keyring holds it"),
    row("request_key",         [249,  249,  287,  218,  310], Keyrings, DENY, "searches the user's keyrings and can start an upcall outside the sandbox"),
    row("keyctl",              [250,  250,  288,  219,  311], Keyrings, DENY, "reads, describes and links keys by id, across session keyrings"),

    row("bpf",                 [321,  321,  357,  280,  386], KernelHooks, DENY, "loads programs into the kernel; no agent needs it, and its verifier is a large attack surface"),
    row("perf_event_open",     [298,  298,  336,  241,  364], KernelHooks, DENY, "kernel and hardware event counters: a side channel and a frequent source of kernel bugs"),
    row("userfaultfd",         [323,  323,  374,  282,  388], KernelHooks, DENY, "lets a process stall the kernel mid-copy, the standard tool for widening kernel races"),

    row("init_module",         [175,  175,  128,  105,  128], Modules, DENY, "loads kernel code"),
    row("finit_module",        [313,  313,  350,  273,  379], Modules, DENY, "loads kernel code"),
    row("delete_module",       [176,  176,  129,  106,  129], Modules, DENY, "unloads kernel code"),
    row("create_module",       [174, NONE,  127, NONE, NONE], Modules, DENY, "obsolete module interface"),
    row("query_module",        [178, NONE,  167, NONE, NONE], Modules, DENY, "obsolete module interface"),
    row("get_kernel_syms",     [177, NONE,  130, NONE, NONE], Modules, DENY, "obsolete module interface"),
    row("kexec_load",          [246,  528,  283,  104,  347], Modules, DENY, "replaces the running kernel"),
    row("kexec_file_load",     [320,  320, NONE,  294,  401], Modules, DENY, "replaces the running kernel"),

    row("swapon",              [167,  167,   87,  224,   87], HostAdmin, DENY, "changes the host's swap"),
    row("swapoff",             [168,  168,  115,  225,  115], HostAdmin, DENY, "changes the host's swap"),
    row("reboot",              [169,  169,   88,  142,   88], HostAdmin, DENY, "reboots the host (or kills a nested pid namespace); no agent needs either"),
    row("acct",                [163,  163,   51,   89,   51], HostAdmin, DENY, "switches the host's process accounting"),
    row("quotactl",            [179,  179,  131,   60,  131], HostAdmin, DENY, "reads and sets the host's disk quotas"),
    row("quotactl_fd",         [443,  443,  443,  443,  443], HostAdmin, DENY, "reads and sets the host's disk quotas"),
    row("syslog",              [103,  103,  103,  116,  103], HostAdmin, DENY, "the kernel log: addresses and other processes' messages"),
    row("vhangup",             [153,  153,  111,   58,  111], HostAdmin, DENY, "hangs up the terminal of the user's shell"),

    row("settimeofday",        [164,  164,   79,  170,   79], Clock, DENY, "sets the host's clock"),
    row("clock_settime",       [227,  227,  264,  112,  262], Clock, DENY, "sets the host's clock"),
    row("clock_settime64",     [NONE, NONE, 404, NONE,  404], Clock, DENY, "sets the host's clock"),
    row("stime",               [NONE, NONE,  25, NONE, NONE], Clock, DENY, "sets the host's clock"),
    row("adjtimex",            [159,  159,  124,  171,  124], Kept, KEEP, "reads the clock's state (ntp_gettime); setting it needs CAP_SYS_TIME over the host, which no session has, and the mode sits behind a pointer the filter cannot read"),
    row("clock_adjtime",       [305,  305,  343,  266,  372], Kept, KEEP, "as adjtimex"),
    row("clock_adjtime64",     [NONE, NONE, 405, NONE,  405], Kept, KEEP, "as adjtimex"),

    row("io_uring_setup",      [425,  425,  425,  425,  425], IoUring, Rule::Deny(ENOSYS), "a second system-call interface that seccomp cannot see into; ENOSYS makes runtimes (libuv, tokio) fall back as on a kernel without it"),
    row("io_uring_enter",      [426,  426,  426,  426,  426], IoUring, Rule::Deny(ENOSYS), "as io_uring_setup"),
    row("io_uring_register",   [427,  427,  427,  427,  427], IoUring, Rule::Deny(ENOSYS), "as io_uring_setup"),

    row("open_by_handle_at",   [304,  304,  342,  265,  371], FileHandles, DENY, "opens files by handle, past the session's mount view"),
    row("name_to_handle_at",   [303,  303,  341,  264,  370], FileHandles, Rule::Deny(EOPNOTSUPP), "handles are useful only to open_by_handle_at; EOPNOTSUPP is what callers already handle for file systems without them"),
    row("fanotify_init",       [300,  300,  338,  262,  367], FileHandles, DENY, "watches whole file systems by handle; file watchers use inotify"),

    row("pidfd_getfd",         [438,  438,  438,  438,  438], OtherProcesses, DENY, "takes descriptors out of another process; debuggers use ptrace"),
    row("process_madvise",     [440,  440,  440,  440,  440], OtherProcesses, DENY, "changes another process's memory; only memory managers use it"),
    row("migrate_pages",       [256,  256,  294,  238,  400], OtherProcesses, DENY, "moves another process's memory between NUMA nodes"),
    row("move_pages",          [279,  533,  317,  239,  344], OtherProcesses, DENY, "moves another process's memory between NUMA nodes"),

    row("uselib",              [134, NONE,   86, NONE,   86], Obsolete, DENY, "obsolete a.out loader"),
    row("ustat",               [136,  136,   62, NONE,   62], Obsolete, DENY, "obsolete"),
    row("sysfs",               [139,  139,  135, NONE,  135], Obsolete, DENY, "obsolete"),
    row("_sysctl",             [156, NONE,  149, NONE,  149], Obsolete, DENY, "obsolete (removed from the kernel)"),
    row("nfsservctl",          [180, NONE,  169,   42,  169], Obsolete, DENY, "obsolete (removed from the kernel)"),
    row("lookup_dcookie",      [212,  212,  253,   18,  249], Obsolete, DENY, "obsolete profiling interface"),
    row("iopl",                [172,  172,  110, NONE, NONE], Obsolete, DENY, "direct hardware port access"),
    row("ioperm",              [173,  173,  101, NONE, NONE], Obsolete, DENY, "direct hardware port access"),
    row("vm86",                [NONE, NONE, 166, NONE, NONE], Obsolete, DENY, "virtual 8086 mode"),
    row("vm86old",             [NONE, NONE, 113, NONE, NONE], Obsolete, DENY, "virtual 8086 mode"),
    row("pciconfig_iobase",    [NONE, NONE, NONE, NONE, 271], Obsolete, DENY, "direct PCI access"),
    row("pciconfig_read",      [NONE, NONE, NONE, NONE, 272], Obsolete, DENY, "direct PCI access"),
    row("pciconfig_write",     [NONE, NONE, NONE, NONE, 273], Obsolete, DENY, "direct PCI access"),

    row("personality",         [135,  135,  136,   92,  136], Personality,
        Rule::Arg { arg: 0, values: ALLOWED_PERSONALITIES, then: Action::Allow, otherwise: Action::Errno(EPERM) },
        "READ_IMPLIES_EXEC and MMAP_PAGE_ZERO undo memory protections that kernel exploits rely on being there"),

    row("socket",              [41,    41,  359,  198,  281], Sockets,
        Rule::Arg { arg: 0, values: ALLOWED_FAMILIES, then: Action::Allow, otherwise: Action::Errno(EAFNOSUPPORT) },
        "only unix, IPv4, IPv6 and netlink: vsock reaches the hypervisor host past every network namespace, and the other families (packet, bluetooth, alg, key, tipc, rds, xdp...) are hardware or kernel plumbing no agent uses and a steady source of kernel bugs"),
    row("socketpair",          [53,    53,  360,  199,  288], Sockets,
        Rule::Arg { arg: 0, values: ALLOWED_FAMILIES, then: Action::Allow, otherwise: Action::Errno(EAFNOSUPPORT) },
        "as socket"),
    row("socketcall",          [NONE, NONE, 102, NONE, NONE], Sockets,
        Rule::Arg { arg: 0, values: SOCKETCALL_CREATE, then: Action::Errno(ENOSYS), otherwise: Action::Allow },
        "i386's multiplexer hides the family behind a pointer the filter cannot read, so it cannot create sockets; i386 programs create them with the socket and socketpair calls (Linux 4.3+), filtered as above"),

    row("ioctl",               [16,   514,   54,   29,   54], Terminal,
        Rule::Arg { arg: 1, values: &[TIOCSTI, TIOCLINUX], then: Action::Errno(EPERM), otherwise: Action::Allow },
        "TIOCSTI types into the terminal of the user's shell, TIOCLINUX pastes the console selection; bwrap --new-session would stop them too but breaks job control and SIGWINCH"),

    // The mode argument's setuid and setgid bits, wherever a mode is set
    // (as systemd's RestrictSUIDSGID): a session could otherwise leave a
    // setuid program of its uid (of root's, for a root launcher) in the
    // workspace for another account to run.
    row("chmod",               [90,    90,   15, NONE,   15], SetId, SETID_MODE_ARG1, "sets a file's mode"),
    row("fchmod",              [91,    91,   94,   52,   94], SetId, SETID_MODE_ARG1, "as chmod"),
    row("fchmodat",            [268,  268,  306,   53,  333], SetId, SETID_MODE_ARG2, "as chmod"),
    row("fchmodat2",           [452,  452,  452,  452,  452], SetId, SETID_MODE_ARG2, "as chmod (glibc 2.39+ uses it for a path not followed)"),
    row("open",                [2,      2,    5, NONE,    5], SetId, SETID_MODE_ARG2, "creates a file with a mode (C libraries pass 0 without O_CREAT)"),
    row("openat",              [257,  257,  295,   56,  322], SetId, SETID_MODE_ARG3, "as open"),
    row("creat",               [85,    85,    8, NONE,    8], SetId, SETID_MODE_ARG1, "as open"),
    row("openat2",             [437,  437,  437,  437,  437], SetId, Rule::Deny(ENOSYS), "its mode sits in a structure the filter cannot read; ENOSYS makes callers fall back to openat, as on a kernel before 5.6"),
    row("mkdir",               [83,    83,   39, NONE,   39], SetId, SETID_MODE_ARG1, "creates a directory with a mode"),
    row("mkdirat",             [258,  258,  296,   34,  323], SetId, SETID_MODE_ARG2, "as mkdir"),
    row("mknod",               [133,  133,   14, NONE,   14], SetId, SETID_MODE_ARG1, "creates a file with a mode"),
    row("mknodat",             [259,  259,  297,   33,  324], SetId, SETID_MODE_ARG2, "as mknod"),

    row("unshare",             [272,  272,  310,   97,  337], Kept, KEEP, "nested user namespaces: Chromium's and Electron's sandboxes, `unshare -r`, rootless containers; the session's own mounts stay locked"),
    row("clone",               [56,    56,  120,  220,  120], Kept, KEEP, "as unshare (Chromium creates its namespaces with clone)"),
    row("clone3",              [435,  435,  435,  435,  435], Kept, KEEP, "as clone (glibc's threads and posix_spawn use it)"),
    row("setns",               [308,  308,  346,  268,  375], Kept, KEEP, "joining a namespace the session made"),
    row("mount",               [165,  165,   21,   40,   21], Kept, KEEP, "mounting inside a nested user namespace; the session's own mounts are locked"),
    row("umount",              [NONE, NONE,  22, NONE, NONE], Kept, KEEP, "as umount2"),
    row("umount2",             [166,  166,   52,   39,   52], Kept, KEEP, "as mount"),
    row("pivot_root",          [155,  155,  217,   41,  218], Kept, KEEP, "as mount"),
    row("chroot",              [161,  161,   61,   51,   61], Kept, KEEP, "Chromium's sandbox chroots into an empty directory"),
    row("open_tree",           [428,  428,  428,  428,  428], Kept, KEEP, "the new mount API, as mount"),
    row("move_mount",          [429,  429,  429,  429,  429], Kept, KEEP, "the new mount API, as mount"),
    row("fsopen",              [430,  430,  430,  430,  430], Kept, KEEP, "the new mount API, as mount"),
    row("fsconfig",            [431,  431,  431,  431,  431], Kept, KEEP, "the new mount API, as mount"),
    row("fsmount",             [432,  432,  432,  432,  432], Kept, KEEP, "the new mount API, as mount"),
    row("fspick",              [433,  433,  433,  433,  433], Kept, KEEP, "the new mount API, as mount"),
    row("mount_setattr",       [442,  442,  442,  442,  442], Kept, KEEP, "the new mount API, as mount"),
    row("sethostname",         [170,  170,   74,  161,   74], Kept, KEEP, "changes only a UTS namespace the caller owns (the session's own)"),
    row("setdomainname",       [171,  171,  121,  162,  121], Kept, KEEP, "as sethostname"),
    row("ptrace",              [101,  521,   26,  117,   26], Kept, KEEP, "gdb, strace and crash reporters trace the session's own processes; outer ones are in another pid namespace"),
    row("process_vm_readv",    [310,  539,  347,  270,  376], Kept, KEEP, "debuggers and profilers (py-spy) read their children's memory; same access rule as ptrace"),
    row("process_vm_writev",   [311,  540,  348,  271,  377], Kept, KEEP, "as process_vm_readv"),
    row("kcmp",                [312,  312,  349,  272,  378], Kept, KEEP, "compares kernel objects of processes it could trace (checkpointing, descriptor dedup)"),
    row("get_mempolicy",       [239,  239,  275,  236,  320], Kept, KEEP, "NUMA policy of the caller's own memory (libnuma, hwloc, the JVM)"),
    row("set_mempolicy",       [238,  238,  276,  237,  321], Kept, KEEP, "as get_mempolicy"),
    row("mbind",               [237,  237,  274,  235,  319], Kept, KEEP, "as get_mempolicy"),
    row("set_mempolicy_home_node", [450, 450, 450,  450,  450], Kept, KEEP, "as get_mempolicy"),
    row("seccomp",             [317,  317,  354,  277,  383], Kept, KEEP, "agents and browsers add filters of their own (they can only narrow this one)"),
    row("landlock_create_ruleset", [444, 444, 444,  444,  444], Kept, KEEP, "agents restrict themselves further with Landlock"),
    row("landlock_add_rule",   [445,  445,  445,  445,  445], Kept, KEEP, "as landlock_create_ruleset"),
    row("landlock_restrict_self", [446, 446, 446,   446,  446], Kept, KEEP, "as landlock_create_ruleset"),
    row("mseal",               [462,  462,  462,  462,  462], Kept, KEEP, "seals the caller's own mappings against change (hardening in glibc and browsers)"),
    row("modify_ldt",          [154,  154,  123, NONE, NONE], Kept, KEEP, "Wine and some JITs need per-process segments; Docker allows it too"),
];

/// The row called `name`.
pub fn by_name(name: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.name == name)
}

impl Group {
    pub fn label(self) -> &'static str {
        match self {
            Keyrings => "kernel keyrings",
            KernelHooks => "bpf, perf events, userfaultfd",
            Modules => "kernel modules and kexec",
            HostAdmin => "host administration (swap, reboot, accounting, quotas, kernel log, hangup)",
            Clock => "setting the clock",
            IoUring => "io_uring",
            FileHandles => "file handles and fanotify",
            OtherProcesses => "other processes' memory and descriptors",
            Obsolete => "obsolete calls and hardware access",
            Personality => "personality flags",
            Sockets => "address families",
            Terminal => "terminal injection",
            SetId => "setuid and setgid mode bits",
            Kept => "kept for agents",
        }
    }
}
