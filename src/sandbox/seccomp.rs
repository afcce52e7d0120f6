//! The terminal-injection filter: a classic-BPF seccomp program, built as a
//! pure value, that makes `ioctl(fd, TIOCSTI, ..)` and `ioctl(fd, TIOCLINUX,
//! ..)` fail with EPERM and allows everything else. bwrap loads it
//! (`--seccomp FD`) after no-new-privs, so it covers the whole session.
//!
//! We filter instead of using `bwrap --new-session`: a new session detaches
//! the controlling terminal, which breaks job control and SIGWINCH.

/// `struct sock_filter` from <linux/filter.h>.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20)
const BPF_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_RET_K: u16 = 0x06;

const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const EPERM: u32 = 1;

/// Offsets into `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
/// Low 32 bits of args[1] (little-endian): the kernel reads an ioctl
/// request as `unsigned int`, so the high half must be ignored here too.
const OFF_ARG1_LO: u32 = 16 + 8;

pub const TIOCSTI: u32 = 0x5412;
pub const TIOCLINUX: u32 = 0x541C;

/// An ABI the kernel may present to the filter, with its ioctl numbers.
#[derive(Debug, Clone, Copy)]
pub struct Abi {
    pub audit_arch: u32,
    pub ioctl_nrs: &'static [u32],
}

const X32_BIT: u32 = 0x4000_0000;
pub const X86_64: Abi = Abi { audit_arch: 0xC000_003E, ioctl_nrs: &[16, X32_BIT | 514] };
pub const I386: Abi = Abi { audit_arch: 0x4000_0003, ioctl_nrs: &[54] };
pub const AARCH64: Abi = Abi { audit_arch: 0xC000_00B7, ioctl_nrs: &[29] };
pub const ARM: Abi = Abi { audit_arch: 0x4000_0028, ioctl_nrs: &[54] };

/// The ABIs a process on this machine can use (native plus compat).
pub fn native_abis() -> &'static [Abi] {
    if cfg!(target_arch = "aarch64") {
        &[AARCH64, ARM]
    } else {
        &[X86_64, I386]
    }
}

fn ld(off: u32) -> Insn {
    Insn { code: BPF_LD_W_ABS, jt: 0, jf: 0, k: off }
}
fn jeq(k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code: BPF_JEQ_K, jt, jf, k }
}
fn ret(k: u32) -> Insn {
    Insn { code: BPF_RET_K, jt: 0, jf: 0, k }
}

/// The filter program for `abis`. Layout (all jumps forward):
/// per ABI: load arch, skip the block if it differs; load nr, jump to the
/// argument check on an ioctl, else allow. After the blocks: an unknown ABI
/// is denied (fail closed). The shared tail checks the request.
pub fn program(abis: &[Abi]) -> Vec<Insn> {
    let mut blocks: Vec<Vec<Insn>> = Vec::new();
    for abi in abis {
        let mut b = vec![ld(OFF_ARCH), jeq(abi.audit_arch, 0, 0 /* patched */), ld(OFF_NR)];
        // jt: patched below to the argument check; jf: next comparison.
        b.extend(abi.ioctl_nrs.iter().map(|nr| jeq(*nr, 0, 0)));
        b.push(ret(RET_ALLOW));
        let len = b.len();
        // Arch mismatch jumps past this block (to the next one).
        b[1].jf = (len - 2) as u8;
        blocks.push(b);
    }
    let tail = [
        ret(RET_ERRNO | EPERM), // unknown ABI
        ld(OFF_ARG1_LO),
        jeq(TIOCSTI, 2, 0),
        jeq(TIOCLINUX, 1, 0),
        ret(RET_ALLOW),
        ret(RET_ERRNO | EPERM),
    ];
    // The arg check starts at tail[1]; patch every ioctl jump to it.
    let total_blocks: usize = blocks.iter().map(Vec::len).sum();
    let mut prog = Vec::with_capacity(total_blocks + tail.len());
    for b in blocks {
        let start = prog.len();
        for (i, mut insn) in b.into_iter().enumerate() {
            let pc = start + i;
            if insn.code == BPF_JEQ_K && i >= 3 {
                let target = total_blocks + 1;
                insn.jt = (target - pc - 1) as u8;
            }
            prog.push(insn);
        }
    }
    prog.extend_from_slice(&tail);
    prog
}

/// The program as the bytes bwrap reads from `--seccomp FD`.
pub fn to_bytes(prog: &[Insn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(prog.len() * 8);
    for i in prog {
        out.extend_from_slice(&i.code.to_ne_bytes());
        out.push(i.jt);
        out.push(i.jf);
        out.extend_from_slice(&i.k.to_ne_bytes());
    }
    out
}

/// A tiny interpreter for the subset of BPF we emit, so the program's
/// decisions are tested as a whole value without a kernel.
pub fn evaluate(prog: &[Insn], arch: u32, nr: u32, arg1: u64) -> u32 {
    let mut acc = 0u32;
    let mut pc = 0usize;
    while let Some(i) = prog.get(pc) {
        match i.code {
            BPF_LD_W_ABS => {
                acc = match i.k {
                    OFF_NR => nr,
                    OFF_ARCH => arch,
                    OFF_ARG1_LO => arg1 as u32,
                    _ => 0,
                }
            }
            BPF_JEQ_K => {
                pc += if acc == i.k { i.jt as usize } else { i.jf as usize };
            }
            BPF_RET_K => return i.k,
            _ => return 0,
        }
        pc += 1;
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const DENY: u32 = RET_ERRNO | EPERM;

    #[test]
    fn denies_injection_ioctls_on_every_x86_abi() {
        let p = program(&[X86_64, I386]);
        for (arch, nr) in [(X86_64.audit_arch, 16), (X86_64.audit_arch, X32_BIT | 514), (I386.audit_arch, 54)] {
            assert_eq!(evaluate(&p, arch, nr, TIOCSTI as u64), DENY);
            assert_eq!(evaluate(&p, arch, nr, TIOCLINUX as u64), DENY);
            // High bits set must not smuggle the request past the filter.
            assert_eq!(evaluate(&p, arch, nr, 0xffff_ffff_0000_0000 | TIOCSTI as u64), DENY);
            // Window size and job-control ioctls pass.
            for ok in [0x5413u64 /* TIOCGWINSZ */, 0x5414 /* TIOCSWINSZ */, 0x5410 /* TIOCSPGRP */] {
                assert_eq!(evaluate(&p, arch, nr, ok), RET_ALLOW);
            }
        }
    }

    #[test]
    fn other_syscalls_pass_and_unknown_abi_fails_closed() {
        let p = program(&[X86_64, I386]);
        assert_eq!(evaluate(&p, X86_64.audit_arch, 0 /* read */, TIOCSTI as u64), RET_ALLOW);
        assert_eq!(evaluate(&p, I386.audit_arch, 16 /* not ioctl on i386 */, TIOCSTI as u64), RET_ALLOW);
        assert_eq!(evaluate(&p, AARCH64.audit_arch, 29, 0), DENY);
    }

    #[test]
    fn aarch64_program() {
        let p = program(&[AARCH64, ARM]);
        assert_eq!(evaluate(&p, AARCH64.audit_arch, 29, TIOCSTI as u64), DENY);
        assert_eq!(evaluate(&p, ARM.audit_arch, 54, TIOCLINUX as u64), DENY);
        assert_eq!(evaluate(&p, AARCH64.audit_arch, 29, 0x5413), RET_ALLOW);
    }

    #[test]
    fn bytes_are_eight_per_insn() {
        let p = program(native_abis());
        assert_eq!(to_bytes(&p).len(), p.len() * 8);
    }
}
