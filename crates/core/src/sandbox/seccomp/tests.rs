//! The profile as a whole value: every row on every ABI through the
//! interpreter (the refusal, its neighbours, argument rules with high bits
//! set), unknown ABIs, the kernel cache's view, the program's size and
//! shape, the native numbers against the C library's, and the table
//! against Docker's default profile.

use super::abi::{Abi, ALL, AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM, AUDIT_ARCH_I386, AUDIT_ARCH_X86_64, X32_BIT};
use super::bpf::{to_bytes, Insn, JA, JEQ_K, JGE_K, JSET_K, LD_W_ABS, OFF_ARCH, RET_ALLOW, RET_ERRNO, RET_K};
use super::generate::{program, UNKNOWN_ABI};
use super::interp::{const_allow, evaluate, evaluate_counting, Call};
use super::table::*;

const X86: &[Abi] = &[Abi::X86_64, Abi::X32, Abi::I386];
const ARM: &[Abi] = &[Abi::Aarch64, Abi::Arm];

fn ret(a: Action) -> u32 {
    match a {
        Action::Allow => RET_ALLOW,
        Action::Errno(e) => RET_ERRNO | u32::from(e),
    }
}

/// A fixed sequence of "random" 64-bit values (xorshift), so failures
/// reproduce.
fn noise(n: usize) -> Vec<u64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        })
        .collect()
}

fn call(abi: Abi, nr: u32, args: [u64; 6]) -> Call {
    Call { arch: abi.audit_arch(), nr: abi.seen_nr(nr), args }
}

/// Six noisy arguments with argument `i` replaced by `v`.
fn args_with(i: u8, v: u64, seed: u64) -> [u64; 6] {
    let mut a = [seed, seed.rotate_left(7), seed.rotate_left(13), seed.rotate_left(29), seed.rotate_left(41), seed.rotate_left(53)];
    a[i as usize] = v;
    a
}

fn family(abi: Abi) -> &'static [Abi] {
    if X86.contains(&abi) {
        X86
    } else {
        ARM
    }
}

#[test]
fn names_are_unique_and_numbers_unique_per_abi() {
    for (i, r) in ROWS.iter().enumerate() {
        assert!(ROWS[..i].iter().all(|o| o.name != r.name), "{} twice", r.name);
        assert!(!r.why.is_empty(), "{} has no reason", r.name);
        for abi in ALL {
            if let Some(nr) = r.nr(abi) {
                let clash = ROWS[..i].iter().find(|o| o.nr(abi) == Some(nr));
                assert!(clash.is_none(), "{} and {} share {} on {abi:?}", r.name, clash.map(|c| c.name).unwrap_or(""), nr);
                assert!(nr < 1024, "{} on {abi:?}: {nr} (x32 numbers go without the x32 bit)", r.name);
            }
        }
    }
}

#[test]
fn every_row_on_every_abi_gets_its_answer() {
    let seeds = noise(16);
    for abi in ALL {
        let prog = program(ROWS, family(abi));
        for r in ROWS {
            let Some(nr) = r.nr(abi) else { continue };
            let what = format!("{} on {abi:?}", r.name);
            for s in &seeds {
                let got = evaluate(&prog, &call(abi, nr, args_with(0, *s, *s)));
                match r.rule {
                    Rule::Deny(e) => assert_eq!(got, RET_ERRNO | u32::from(e), "{what}"),
                    Rule::Keep => assert_eq!(got, RET_ALLOW, "{what}"),
                    Rule::Arg { .. } | Rule::AnyBit { .. } => {}
                }
            }
            let cached = const_allow(&prog, abi.audit_arch(), abi.seen_nr(nr));
            assert_eq!(cached, r.rule == Rule::Keep, "{what}: the kernel cache's view");
            match r.rule {
                Rule::Arg { arg, values, then, otherwise } => arg_rule_answers(&prog, abi, nr, arg, values, ret(then), ret(otherwise), &what),
                Rule::AnyBit { arg, mask, then } => any_bit_answers(&prog, abi, nr, arg, mask, ret(then), &what),
                Rule::Deny(_) | Rule::Keep => {}
            }
        }
    }
}

/// Only the low 32 bits of the argument count: every value of the rule,
/// with any high half, gets `then`; values next to them get `otherwise`.
#[allow(clippy::too_many_arguments)]
fn arg_rule_answers(prog: &[Insn], abi: Abi, nr: u32, arg: u8, values: &[u32], then: u32, otherwise: u32, what: &str) {
    for (v, s) in values.iter().zip(noise(values.len())) {
        for high in [0u64, 0xffff_ffff, s >> 32 | 1] {
            let full = high << 32 | u64::from(*v);
            assert_eq!(evaluate(prog, &call(abi, nr, args_with(arg, full, s))), then, "{what}: {full:#x}");
        }
        for near in [v.wrapping_add(1), v.wrapping_sub(1), v ^ 0x8000_0000] {
            if !values.contains(&near) {
                let got = evaluate(prog, &call(abi, nr, args_with(arg, u64::from(near), s)));
                assert_eq!(got, otherwise, "{what}: {near:#x}");
                // A member's value in the high half alone does not count.
                let got = evaluate(prog, &call(abi, nr, args_with(arg, u64::from(*v) << 32 | u64::from(near), s)));
                assert_eq!(got, otherwise, "{what}: {v:#x} in the high half");
            }
        }
    }
}

/// Any bit of `mask` in the argument's low half (with anything else
/// there, and any high half) gets `then`; without them, allowed, whatever
/// the rest holds, and the mask in the high half alone does not count.
fn any_bit_answers(prog: &[Insn], abi: Abi, nr: u32, arg: u8, mask: u32, then: u32, what: &str) {
    let bits: Vec<u32> = (0..32).map(|b| 1u32 << b).filter(|b| mask & b != 0).collect();
    for (s, rest) in noise(16).into_iter().zip([0u32, 0o644, 0o777, 0o7777, 0o100_755, 0xffff_ffff].into_iter().cycle()) {
        for bit in &bits {
            for high in [0u64, 0xffff_ffff, s >> 32] {
                let full = high << 32 | u64::from(rest | bit);
                assert_eq!(evaluate(prog, &call(abi, nr, args_with(arg, full, s))), then, "{what}: {full:#x}");
            }
        }
        let clear = u64::from(rest & !mask);
        assert_eq!(evaluate(prog, &call(abi, nr, args_with(arg, clear, s))), RET_ALLOW, "{what}: {clear:#x}");
        let high_only = u64::from(mask) << 32 | clear;
        assert_eq!(evaluate(prog, &call(abi, nr, args_with(arg, high_only, s))), RET_ALLOW, "{what}: {high_only:#x}");
    }
}

#[test]
fn numbers_without_a_rule_are_allowed_and_cached() {
    for abi in ALL {
        let prog = program(ROWS, family(abi));
        let enforced: Vec<u32> = ROWS.iter().filter(|r| r.rule != Rule::Keep).filter_map(|r| r.nr(abi)).collect();
        for nr in (0..1100).filter(|n| !enforced.contains(n)) {
            let c = call(abi, nr, args_with(0, 0x28, 7));
            assert_eq!(evaluate(&prog, &c), RET_ALLOW, "{nr} on {abi:?}");
            assert!(const_allow(&prog, c.arch, c.nr), "{nr} on {abi:?} is not cacheable");
        }
    }
}

#[test]
fn unknown_abis_fail_closed() {
    const AUDIT_ARCH_PPC64LE: u32 = 0xC000_0015;
    const AUDIT_ARCH_RISCV64: u32 = 0xC000_00F3;
    let x86 = program(ROWS, X86);
    let arm = program(ROWS, ARM);
    for (prog, arches) in [(&x86, [AUDIT_ARCH_AARCH64, AUDIT_ARCH_ARM]), (&arm, [AUDIT_ARCH_X86_64, AUDIT_ARCH_I386])] {
        for arch in arches.into_iter().chain([AUDIT_ARCH_PPC64LE, AUDIT_ARCH_RISCV64, 0]) {
            for nr in [0, 1, 16, 29, 41, 198, 250, X32_BIT | 250] {
                assert_eq!(evaluate(prog, &Call { arch, nr, args: [0; 6] }), UNKNOWN_ABI, "{arch:#x} {nr}");
                assert!(!const_allow(prog, arch, nr));
            }
        }
    }
    assert_eq!(UNKNOWN_ABI, RET_ERRNO | EPERM as u32);
}

/// The cases the filter exists for, spelled out.
#[test]
fn spot_checks() {
    let p = program(ROWS, X86);
    let eval = |abi: Abi, name: &str, args: [u64; 6]| evaluate(&p, &call(abi, by_name(name).and_then(|r| r.nr(abi)).unwrap(), args));
    let errno = |e: u16| RET_ERRNO | u32::from(e);
    let vsock = libc::AF_VSOCK as u64;
    assert_eq!(eval(Abi::X86_64, "socket", [vsock, 1, 0, 0, 0, 0]), errno(EAFNOSUPPORT));
    assert_eq!(eval(Abi::X32, "socket", [vsock, 1, 0, 0, 0, 0]), errno(EAFNOSUPPORT));
    assert_eq!(eval(Abi::I386, "socket", [vsock, 1, 0, 0, 0, 0]), errno(EAFNOSUPPORT));
    assert_eq!(eval(Abi::X86_64, "socket", [1 << 32 | libc::AF_INET as u64, 1, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(eval(Abi::X86_64, "socket", [1 << 32 | vsock, 1, 0, 0, 0, 0]), errno(EAFNOSUPPORT));
    assert_eq!(eval(Abi::I386, "socketcall", [1, 0x1000, 0, 0, 0, 0]), errno(ENOSYS));
    assert_eq!(eval(Abi::I386, "socketcall", [3 /* SYS_CONNECT */, 0x1000, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(eval(Abi::X86_64, "ioctl", [0, 0xffff_ffff_0000_0000 | TIOCSTI as u64, 0, 0, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "ioctl", [0, 0x5413 /* TIOCGWINSZ */, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(eval(Abi::X86_64, "personality", [0x0040_0000 /* READ_IMPLIES_EXEC */, 0, 0, 0, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "personality", [0x0004_0000 /* ADDR_NO_RANDOMIZE */, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(eval(Abi::I386, "keyctl", [0; 6]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "io_uring_setup", [0; 6]), errno(ENOSYS));
    // x32's kexec_load is its own number; the x86_64 one with the x32 bit
    // is no call at all, and i386 numbers mean something else on x86_64.
    assert_eq!(evaluate(&p, &Call { arch: AUDIT_ARCH_X86_64, nr: X32_BIT | 528, args: [0; 6] }), errno(EPERM));
    assert_eq!(evaluate(&p, &Call { arch: AUDIT_ARCH_X86_64, nr: 288, args: [0; 6] }), RET_ALLOW);
    // Unshare and ptrace stay open (nested user namespaces, debuggers).
    assert_eq!(eval(Abi::X86_64, "unshare", [libc::CLONE_NEWUSER as u64, 0, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(eval(Abi::I386, "ptrace", [0; 6]), RET_ALLOW);
    // No setuid or setgid bit, whichever call sets a mode; plain modes pass.
    assert_eq!(eval(Abi::X86_64, "chmod", [0x1000, 0o4755, 0, 0, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "fchmod", [3, 0o2755, 0, 0, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "fchmod", [3, 0o1777, 0, 0, 0, 0]), RET_ALLOW);
    assert_eq!(eval(Abi::X86_64, "fchmodat", [0, 0x1000, 0o6755, 0, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "openat", [0, 0x1000, libc::O_CREAT as u64, 0o4700, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "openat", [0, 0x1000, libc::O_CREAT as u64, 0o644, 0, 0]), RET_ALLOW);
    assert_eq!(eval(Abi::X86_64, "mkdir", [0x1000, 0o2775, 0, 0, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::I386, "creat", [0x1000, 0o4755, 0, 0, 0, 0]), errno(EPERM));
    assert_eq!(eval(Abi::X86_64, "openat2", [0; 6]), errno(ENOSYS));
}

/// Size and shape: a few hundred instructions, every jump forward and in
/// range, conditional jumps of 0 or 1, and a short path for any call.
#[test]
fn program_size_and_shape() {
    for (abis, max_len) in [(X86, 720), (ARM, 480)] {
        let p = program(ROWS, abis);
        assert!(p.len() <= max_len, "{} instructions for {abis:?}", p.len());
        assert_eq!((p[0].code, p[0].k), (LD_W_ABS, OFF_ARCH));
        for (pc, i) in p.iter().enumerate() {
            match i.code {
                JA => assert!(pc + 1 + (i.k as usize) < p.len(), "{pc}: ja out of range"),
                JEQ_K | JGE_K | JSET_K => assert_eq!((i.jt, i.jf), (0, 1), "{pc}"),
                LD_W_ABS | RET_K => {}
                other => panic!("{pc}: unexpected opcode {other:#x}"),
            }
        }
        assert_eq!(p.last().map(|i| i.code), Some(RET_K));
        assert_eq!(to_bytes(&p).len(), p.len() * 8);
        let longest = abis.iter().flat_map(|abi| (0..1100).map(move |nr| call(*abi, nr, [0x28; 6]))).map(|c| evaluate_counting(&p, &c).1).max().unwrap_or(0);
        assert!(longest <= 30, "the longest path runs {longest} instructions");
    }
}

/// The columns we can check against the C library on this machine.
#[test]
fn native_numbers_match_the_c_library() {
    macro_rules! sys {
        ($($n:ident),* $(,)?) => { [$((stringify!($n), libc::$n as u32)),*] };
    }
    #[cfg(target_arch = "x86_64")]
    let known = sys!(
        SYS_add_key,
        SYS_request_key,
        SYS_keyctl,
        SYS_bpf,
        SYS_perf_event_open,
        SYS_userfaultfd,
        SYS_init_module,
        SYS_finit_module,
        SYS_delete_module,
        SYS_kexec_load,
        SYS_kexec_file_load,
        SYS_swapon,
        SYS_swapoff,
        SYS_reboot,
        SYS_acct,
        SYS_quotactl,
        SYS_quotactl_fd,
        SYS_syslog,
        SYS_vhangup,
        SYS_settimeofday,
        SYS_clock_settime,
        SYS_adjtimex,
        SYS_clock_adjtime,
        SYS_io_uring_setup,
        SYS_io_uring_enter,
        SYS_io_uring_register,
        SYS_open_by_handle_at,
        SYS_name_to_handle_at,
        SYS_fanotify_init,
        SYS_pidfd_getfd,
        SYS_process_madvise,
        SYS_migrate_pages,
        SYS_move_pages,
        SYS_uselib,
        SYS_ustat,
        SYS_sysfs,
        SYS__sysctl,
        SYS_nfsservctl,
        SYS_lookup_dcookie,
        SYS_iopl,
        SYS_ioperm,
        SYS_personality,
        SYS_socket,
        SYS_socketpair,
        SYS_ioctl,
        SYS_unshare,
        SYS_clone,
        SYS_clone3,
        SYS_setns,
        SYS_mount,
        SYS_umount2,
        SYS_pivot_root,
        SYS_chroot,
        SYS_open_tree,
        SYS_move_mount,
        SYS_fsopen,
        SYS_fsconfig,
        SYS_fsmount,
        SYS_fspick,
        SYS_mount_setattr,
        SYS_sethostname,
        SYS_setdomainname,
        SYS_ptrace,
        SYS_process_vm_readv,
        SYS_process_vm_writev,
        SYS_kcmp,
        SYS_get_mempolicy,
        SYS_set_mempolicy,
        SYS_mbind,
        SYS_set_mempolicy_home_node,
        SYS_seccomp,
        SYS_landlock_create_ruleset,
        SYS_landlock_add_rule,
        SYS_landlock_restrict_self,
        SYS_modify_ldt,
        SYS_fchmodat2,
        SYS_mseal,
        SYS_chmod,
        SYS_fchmod,
        SYS_fchmodat,
        SYS_open,
        SYS_openat,
        SYS_creat,
        SYS_openat2,
        SYS_mkdir,
        SYS_mkdirat,
        SYS_mknod,
        SYS_mknodat,
    );
    #[cfg(target_arch = "aarch64")]
    let known = sys!(
        SYS_add_key,
        SYS_request_key,
        SYS_keyctl,
        SYS_bpf,
        SYS_perf_event_open,
        SYS_userfaultfd,
        SYS_init_module,
        SYS_finit_module,
        SYS_delete_module,
        SYS_kexec_load,
        SYS_swapon,
        SYS_swapoff,
        SYS_reboot,
        SYS_acct,
        SYS_quotactl,
        SYS_quotactl_fd,
        SYS_syslog,
        SYS_vhangup,
        SYS_settimeofday,
        SYS_clock_settime,
        SYS_adjtimex,
        SYS_clock_adjtime,
        SYS_io_uring_setup,
        SYS_io_uring_enter,
        SYS_io_uring_register,
        SYS_open_by_handle_at,
        SYS_name_to_handle_at,
        SYS_fanotify_init,
        SYS_pidfd_getfd,
        SYS_process_madvise,
        SYS_migrate_pages,
        SYS_move_pages,
        SYS_nfsservctl,
        SYS_lookup_dcookie,
        SYS_personality,
        SYS_socket,
        SYS_socketpair,
        SYS_ioctl,
        SYS_unshare,
        SYS_clone,
        SYS_clone3,
        SYS_setns,
        SYS_mount,
        SYS_umount2,
        SYS_pivot_root,
        SYS_chroot,
        SYS_open_tree,
        SYS_move_mount,
        SYS_fsopen,
        SYS_fsconfig,
        SYS_fsmount,
        SYS_fspick,
        SYS_mount_setattr,
        SYS_sethostname,
        SYS_setdomainname,
        SYS_ptrace,
        SYS_process_vm_readv,
        SYS_process_vm_writev,
        SYS_kcmp,
        SYS_get_mempolicy,
        SYS_set_mempolicy,
        SYS_mbind,
        SYS_set_mempolicy_home_node,
        SYS_seccomp,
        SYS_landlock_create_ruleset,
        SYS_landlock_add_rule,
        SYS_landlock_restrict_self,
        SYS_mseal,
        SYS_fchmod,
        SYS_fchmodat,
        SYS_openat,
        SYS_openat2,
        SYS_mkdirat,
        SYS_mknodat,
    );
    // Obsolete calls the C library no longer names (and, on aarch64, ones
    // its musl build does not name).
    let unnamed = ["create_module", "query_module", "get_kernel_syms", "fchmodat2", "kexec_file_load"];
    let native = super::abi::native();
    for r in ROWS {
        let Some(nr) = r.nr(native) else { continue };
        match known.iter().find(|(n, _)| n.strip_prefix("SYS_") == Some(r.name)) {
            Some((_, want)) => assert_eq!(nr, *want, "{} on {native:?}", r.name),
            None => assert!(unnamed.contains(&r.name), "{}: not checked against the C library", r.name),
        }
    }
}

/// What Docker's default profile (moby profiles/seccomp/default.json)
/// refuses a container without capabilities, on x86_64, x32, i386, aarch64
/// and arm, for calls up to the C library's tables. Each is a row here
/// (refused, or kept with its reason), a stub the kernel no longer
/// implements, or an old form of a call every ABI allows.
const DOCKER_REFUSES: &[&str] = &[
    "_sysctl",
    "acct",
    "add_key",
    "afs_syscall",
    "bdflush",
    "bpf",
    "break",
    "chroot",
    "clock_settime",
    "clock_settime64",
    "create_module",
    "delete_module",
    "fanotify_init",
    "fchmodat2",
    "finit_module",
    "fsconfig",
    "fsmount",
    "fsopen",
    "fspick",
    "ftime",
    "get_kernel_syms",
    "get_mempolicy",
    "getpmsg",
    "gtty",
    "idle",
    "init_module",
    "ioperm",
    "iopl",
    "kcmp",
    "kexec_file_load",
    "kexec_load",
    "keyctl",
    "lock",
    "lookup_dcookie",
    "mbind",
    "migrate_pages",
    "mount",
    "mount_setattr",
    "move_mount",
    "move_pages",
    "mpx",
    "mseal",
    "nfsservctl",
    "nice",
    "oldfstat",
    "oldlstat",
    "oldolduname",
    "oldstat",
    "olduname",
    "open_by_handle_at",
    "open_tree",
    "pciconfig_iobase",
    "pciconfig_read",
    "pciconfig_write",
    "perf_event_open",
    "pidfd_getfd",
    "pivot_root",
    "process_madvise",
    "prof",
    "profil",
    "putpmsg",
    "query_module",
    "quotactl",
    "quotactl_fd",
    "readdir",
    "reboot",
    "request_key",
    "security",
    "set_mempolicy",
    "set_mempolicy_home_node",
    "setdomainname",
    "sethostname",
    "setns",
    "settimeofday",
    "sgetmask",
    "sigaction",
    "signal",
    "sigpending",
    "sigsuspend",
    "ssetmask",
    "stime",
    "stty",
    "swapoff",
    "swapon",
    "sysfs",
    "syslog",
    "tuxcall",
    "ulimit",
    "umount",
    "umount2",
    "unshare",
    "uselib",
    "userfaultfd",
    "ustat",
    "vhangup",
    "vm86",
    "vm86old",
    "vserver",
];

/// Entries the kernel keeps only as "not implemented" (ENOSYS).
const NOT_IMPLEMENTED: &[&str] = &[
    "afs_syscall",
    "bdflush",
    "break",
    "ftime",
    "getpmsg",
    "gtty",
    "idle",
    "lock",
    "mpx",
    "prof",
    "profil",
    "putpmsg",
    "security",
    "stty",
    "tuxcall",
    "ulimit",
    "vserver",
];

/// i386/arm forms of calls allowed everywhere (signal → rt_sigaction,
/// olduname → uname, readdir → getdents, nice → setpriority...): no kernel
/// code beyond their modern forms.
const OLD_FORMS: &[&str] = &[
    "nice",
    "oldfstat",
    "oldlstat",
    "oldolduname",
    "oldstat",
    "olduname",
    "readdir",
    "sgetmask",
    "ssetmask",
    "sigaction",
    "signal",
    "sigpending",
    "sigsuspend",
];

#[test]
fn every_docker_refusal_is_decided() {
    for name in DOCKER_REFUSES {
        let decided = by_name(name).is_some() || NOT_IMPLEMENTED.contains(name) || OLD_FORMS.contains(name);
        assert!(decided, "Docker refuses {name}; the table does not say what sessions get");
    }
    // Everything named in the brief's list of refusals is refused here.
    for name in [
        "add_key",
        "keyctl",
        "request_key",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
        "swapon",
        "swapoff",
        "reboot",
        "clock_settime",
        "settimeofday",
        "stime",
        "quotactl",
        "quotactl_fd",
        "open_by_handle_at",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
        "acct",
        "lookup_dcookie",
        "nfsservctl",
        "uselib",
        "ustat",
        "sysfs",
        "_sysctl",
        "vm86",
        "vm86old",
        "iopl",
        "ioperm",
        "syslog",
        "vhangup",
    ] {
        assert!(matches!(by_name(name).map(|r| r.rule), Some(Rule::Deny(_))), "{name} is not refused");
    }
}

/// The kernel accepts the program and answers as the interpreter says:
/// loaded in a forked child (after no-new-privs, as bwrap does).
#[test]
fn the_kernel_loads_it_and_enforces_it() {
    // The bytes bwrap gets.
    let bytes = to_bytes(&program(ROWS, super::abi::native_abis()));
    let fprog = libc::sock_fprog { len: (bytes.len() / 8) as u16, filter: bytes.as_ptr() as *mut libc::sock_filter };
    // Each probe: (syscall, args, expected return or -errno).
    let vsock = libc::AF_VSOCK as libc::c_long;
    let dir = tempfile::tempdir().unwrap();
    let file = std::ffi::CString::new(dir.path().join("f").as_os_str().as_encoded_bytes()).unwrap();
    std::fs::write(dir.path().join("f"), b"").unwrap();
    let path = file.as_ptr() as libc::c_long;
    let probes: [(libc::c_long, [libc::c_long; 3], libc::c_long); 9] = [
        (libc::SYS_keyctl, [0, 0, 0], -libc::EPERM as libc::c_long),
        (libc::SYS_socket, [vsock, libc::SOCK_STREAM as libc::c_long, 0], -libc::EAFNOSUPPORT as libc::c_long),
        (libc::SYS_io_uring_setup, [0, 0, 0], -libc::ENOSYS as libc::c_long),
        (libc::SYS_personality, [0x0040_0000, 0, 0], -libc::EPERM as libc::c_long),
        (libc::SYS_ioctl, [-1, TIOCSTI as libc::c_long, 0], -libc::EPERM as libc::c_long),
        // Allowed: ioctl on a bad descriptor reaches the kernel (EBADF).
        (libc::SYS_ioctl, [-1, 0x5413, 0], -libc::EBADF as libc::c_long),
        (libc::SYS_fchmodat, [libc::AT_FDCWD as libc::c_long, path, 0o4755], -libc::EPERM as libc::c_long),
        (libc::SYS_fchmodat, [libc::AT_FDCWD as libc::c_long, path, 0o755], 0),
        (libc::SYS_openat2, [libc::AT_FDCWD as libc::c_long, path, 0], -libc::ENOSYS as libc::c_long),
    ];
    // SAFETY: the child only makes raw system calls on data prepared
    // before the fork, then _exits with the index of the first mismatch.
    unsafe {
        let pid = libc::fork();
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog) != 0 {
                libc::_exit(100 + *libc::__errno_location());
            }
            for (i, (nr, a, want)) in probes.iter().enumerate() {
                let r = libc::syscall(*nr, a[0], a[1], a[2]);
                let got = if r < 0 { -(*libc::__errno_location() as libc::c_long) } else { r };
                if got != *want {
                    libc::_exit(1 + i as i32);
                }
            }
            libc::_exit(0);
        }
        let mut status = 0;
        libc::waitpid(pid, &mut status, 0);
        assert!(libc::WIFEXITED(status), "the child died: {status:#x}");
        let code = libc::WEXITSTATUS(status);
        assert!(code < 100, "the kernel refused the program (errno {})", code - 100);
        assert_eq!(code, 0, "probe {} answered differently: {:?}", code - 1, probes.get(code as usize - 1));
    }
}
