//! Runs a filter program without a kernel, so its decisions are tested as
//! a whole value: `evaluate` for one call, `const_allow` for what the
//! kernel's per-syscall cache would conclude (the same rules as its
//! emulator in kernel/seccomp.c: only the number and the architecture may
//! be read on the way to "allow").

use super::bpf::{Insn, JA, JEQ_K, JGE_K, JSET_K, LD_W_ABS, OFF_ARCH, OFF_ARGS, OFF_NR, RET_ALLOW, RET_K};

/// `struct seccomp_data` without the instruction pointer.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Call {
    pub arch: u32,
    pub nr: u32,
    pub args: [u64; 6],
}

/// The word at `off` of the call's `seccomp_data` (little-endian layout of
/// the arguments, as the generator assumes on this machine).
fn word(c: &Call, off: u32) -> Option<u32> {
    match off {
        OFF_NR => Some(c.nr),
        OFF_ARCH => Some(c.arch),
        o if (OFF_ARGS..OFF_ARGS + 48).contains(&o) && o % 4 == 0 => {
            let a = c.args[((o - OFF_ARGS) / 8) as usize];
            let high = ((o - OFF_ARGS) % 8 == 4) != cfg!(target_endian = "big");
            Some(if high { (a >> 32) as u32 } else { a as u32 })
        }
        _ => None,
    }
}

/// Runs `prog` on `call`. Falls off the end or meets an opcode we never
/// emit: 0 (SECCOMP_RET_KILL_THREAD), as the kernel would refuse it.
pub(super) fn evaluate(prog: &[Insn], call: &Call) -> u32 {
    evaluate_counting(prog, call).0
}

/// `evaluate`, and how many instructions ran (the cost of a call the
/// kernel's cache does not answer).
pub(super) fn evaluate_counting(prog: &[Insn], call: &Call) -> (u32, usize) {
    let mut steps = 0;
    let r = run(prog, |off| word(call, off), &mut steps);
    (r.unwrap_or(0), steps)
}

/// Whether the kernel's cache would mark (`arch`, `nr`) "always allowed".
pub(super) fn const_allow(prog: &[Insn], arch: u32, nr: u32) -> bool {
    let c = Call { arch, nr, args: [0; 6] };
    run(prog, |off| matches!(off, OFF_NR | OFF_ARCH).then(|| word(&c, off)).flatten(), &mut 0) == Some(RET_ALLOW)
}

/// The return value, or None when a load is not answered by `load`.
fn run(prog: &[Insn], load: impl Fn(u32) -> Option<u32>, steps: &mut usize) -> Option<u32> {
    let mut acc = 0u32;
    let mut pc = 0usize;
    while let Some(i) = prog.get(pc) {
        pc += 1;
        *steps += 1;
        match i.code {
            LD_W_ABS => acc = load(i.k)?,
            JA => pc += i.k as usize,
            JEQ_K => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
            JGE_K => pc += usize::from(if acc >= i.k { i.jt } else { i.jf }),
            JSET_K => pc += usize::from(if acc & i.k != 0 { i.jt } else { i.jf }),
            RET_K => return Some(i.k),
            _ => return Some(0),
        }
    }
    Some(0)
}
