//! Classic BPF as seccomp uses it: the instruction format, the few opcodes
//! the generator emits, and a tiny assembler whose only far jump is `ja`
//! (32-bit offset), so no program size can overflow the 8-bit offsets of
//! conditional jumps: those always jump 0 or 1 instruction.

/// `struct sock_filter` from <linux/filter.h>.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// BPF_LD | BPF_W | BPF_ABS: load a word of `struct seccomp_data`.
pub(super) const LD_W_ABS: u16 = 0x20;
/// BPF_JMP | BPF_JA: jump forward `k` instructions.
pub(super) const JA: u16 = 0x05;
/// BPF_JMP | BPF_JEQ | BPF_K.
pub(super) const JEQ_K: u16 = 0x15;
/// BPF_JMP | BPF_JGE | BPF_K.
pub(super) const JGE_K: u16 = 0x35;
/// BPF_JMP | BPF_JSET | BPF_K: jump when `A & k` is not zero.
pub(super) const JSET_K: u16 = 0x45;
/// BPF_RET | BPF_K.
pub(super) const RET_K: u16 = 0x06;

pub(super) const RET_ALLOW: u32 = 0x7fff_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// SECCOMP_RET_ERRNO; the errno goes in the low 16 bits.
pub(super) const RET_ERRNO: u32 = 0x0005_0000;

/// Offsets into `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }`.
pub(super) const OFF_NR: u32 = 0;
pub(super) const OFF_ARCH: u32 = 4;
pub(super) const OFF_ARGS: u32 = 16;

/// The offset of the low 32 bits of argument `i` (the word order of a u64
/// follows the machine's byte order).
pub(super) const fn off_arg_lo(i: u8) -> u32 {
    OFF_ARGS + 8 * i as u32 + if cfg!(target_endian = "big") { 4 } else { 0 }
}

/// A place in the program, resolved when the program is finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Label(usize);

enum Op {
    Insn(Insn),
    Ja(Label),
    Place(Label),
}

/// Collects instructions and labels; `finish` resolves the jumps.
#[derive(Default)]
pub(super) struct Asm {
    ops: Vec<Op>,
    labels: usize,
}

impl Asm {
    pub(super) fn label(&mut self) -> Label {
        self.labels += 1;
        Label(self.labels - 1)
    }

    pub(super) fn place(&mut self, l: Label) {
        self.ops.push(Op::Place(l));
    }

    fn insn(&mut self, code: u16, jt: u8, jf: u8, k: u32) {
        self.ops.push(Op::Insn(Insn { code, jt, jf, k }));
    }

    pub(super) fn ld(&mut self, off: u32) {
        self.insn(LD_W_ABS, 0, 0, off);
    }

    pub(super) fn ret(&mut self, k: u32) {
        self.insn(RET_K, 0, 0, k);
    }

    pub(super) fn ja(&mut self, l: Label) {
        self.ops.push(Op::Ja(l));
    }

    /// When the accumulator equals `k`, run the next instruction (the one
    /// the caller emits right after); otherwise skip it.
    pub(super) fn if_eq(&mut self, k: u32) {
        self.insn(JEQ_K, 0, 1, k);
    }

    /// When the accumulator has any bit of `k` set, run the next
    /// instruction; otherwise skip it.
    pub(super) fn if_any(&mut self, k: u32) {
        self.insn(JSET_K, 0, 1, k);
    }

    /// When the accumulator is at least `k`, jump to `l`; otherwise fall
    /// through.
    pub(super) fn jge(&mut self, k: u32, l: Label) {
        self.insn(JGE_K, 0, 1, k);
        self.ja(l);
    }

    /// When the accumulator equals `k`, jump to `l`; otherwise fall through.
    pub(super) fn jeq(&mut self, k: u32, l: Label) {
        self.if_eq(k);
        self.ja(l);
    }

    /// The program, jumps resolved. A jump to a label that was never placed,
    /// or placed before it (BPF only jumps forward), would be a bug of the
    /// generator (its unit tests run every shape it emits); such a jump
    /// becomes "kill the process", so even that bug fails closed.
    pub(super) fn finish(self) -> Vec<Insn> {
        let mut at = vec![usize::MAX; self.labels];
        let mut pc = 0;
        for op in &self.ops {
            match op {
                Op::Place(l) => at[l.0] = pc,
                Op::Insn(_) | Op::Ja(_) => pc += 1,
            }
        }
        let mut out = Vec::with_capacity(pc);
        for op in self.ops {
            match op {
                Op::Place(_) => {}
                Op::Insn(i) => out.push(i),
                Op::Ja(l) => {
                    let from = out.len() + 1;
                    let insn = match at[l.0].checked_sub(from) {
                        Some(k) if at[l.0] != usize::MAX => Insn { code: JA, jt: 0, jf: 0, k: k as u32 },
                        _ => Insn { code: RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
                    };
                    debug_assert_eq!(insn.code, JA, "seccomp generator: a jump to an unplaced or earlier label");
                    out.push(insn);
                }
            }
        }
        out
    }
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
