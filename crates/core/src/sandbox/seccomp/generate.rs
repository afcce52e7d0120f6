//! The filter program: a pure function of the table and the ABIs.
//!
//! Shape (all jumps forward):
//!  1. load the architecture; jump to its block; an architecture not
//!     listed is refused (fail closed: a filter that only knows some ABIs
//!     must not let the others through);
//!  2. per architecture block: load the number and walk a balanced search
//!     tree over the numbers that have rows (x86_64 and x32 share one block:
//!     they share the audit architecture). A leaf either answers at once
//!     (allow, or the row's errno) or jumps to the row's argument check; a
//!     number without a row is allowed;
//!  3. one block per argument rule: load the argument's low half, compare.
//!
//! The kernel caches "always allowed" per architecture and number when the
//! answer does not depend on the arguments (`seccomp_cache_prepare`). This
//! shape keeps that true for every syscall without an argument rule: steps
//! 1-2 read only the architecture and the number, with instructions the
//! kernel's emulator follows (ld, jeq, jge, ja, ret). Only ioctl, socket,
//! socketpair, personality, socketcall and the calls that take a file mode
//! (chmod, open, mkdir, mknod and their relatives) run the filter on every
//! call.

use super::abi::Abi;
use super::bpf::{off_arg_lo, Asm, Insn, Label, OFF_ARCH, OFF_NR, RET_ALLOW, RET_ERRNO};
use super::table::{Action, Row, Rule};

/// What a calling process of an unknown architecture gets.
pub(crate) const UNKNOWN_ABI: u32 = RET_ERRNO | libc::EPERM as u32;

/// Leaves of the search tree hold at most this many numbers.
const LEAF: usize = 3;

/// What the tree does for one number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    Ret(u32),
    /// Where the row's argument rule decides.
    Arg(Label),
}

fn ret_of(a: Action) -> u32 {
    match a {
        Action::Allow => RET_ALLOW,
        Action::Errno(e) => RET_ERRNO | u32::from(e),
    }
}

/// The program for `rows` on `abis`.
pub fn program(rows: &[Row], abis: &[Abi]) -> Vec<Insn> {
    let mut a = Asm::default();
    let arches = arch_blocks(abis);
    let blocks: Vec<Label> = arches.iter().map(|_| a.label()).collect();
    // One per row; only those of argument rules are placed and jumped to.
    let arg_labels: Vec<Label> = rows.iter().map(|_| a.label()).collect();
    // Step 1.
    a.ld(OFF_ARCH);
    for ((arch, _), l) in arches.iter().zip(&blocks) {
        a.jeq(*arch, *l);
    }
    a.ret(UNKNOWN_ABI);
    // Step 2.
    for ((_, members), l) in arches.iter().zip(&blocks) {
        a.place(*l);
        a.ld(OFF_NR);
        tree(&mut a, &leaves(rows, members, &arg_labels));
    }
    // Step 3.
    for (row, l) in rows.iter().zip(&arg_labels) {
        match row.rule {
            Rule::Arg { arg, values, then, otherwise } => {
                a.place(*l);
                a.ld(off_arg_lo(arg));
                for v in values {
                    a.if_eq(*v);
                    a.ret(ret_of(then));
                }
                a.ret(ret_of(otherwise));
            }
            Rule::AnyBit { arg, mask, then } => {
                a.place(*l);
                a.ld(off_arg_lo(arg));
                a.if_any(mask);
                a.ret(ret_of(then));
                a.ret(RET_ALLOW);
            }
            Rule::Deny(_) | Rule::Keep => {}
        }
    }
    a.finish()
}

/// The audit architectures of `abis` in order, each with its ABIs.
fn arch_blocks(abis: &[Abi]) -> Vec<(u32, Vec<Abi>)> {
    let mut out: Vec<(u32, Vec<Abi>)> = Vec::new();
    for abi in abis {
        match out.iter_mut().find(|(arch, _)| *arch == abi.audit_arch()) {
            Some((_, members)) => members.push(*abi),
            None => out.push((abi.audit_arch(), vec![*abi])),
        }
    }
    out
}

/// The numbers the filter sees from `abis` that have a row to enforce,
/// sorted; the first row wins a number (the table's tests keep numbers
/// unique per ABI).
fn leaves(rows: &[Row], abis: &[Abi], arg_labels: &[Label]) -> Vec<(u32, Leaf)> {
    let mut out: Vec<(u32, Leaf)> = Vec::new();
    for (row, label) in rows.iter().zip(arg_labels) {
        let leaf = match row.rule {
            Rule::Keep => continue,
            Rule::Deny(e) => Leaf::Ret(RET_ERRNO | u32::from(e)),
            Rule::Arg { .. } | Rule::AnyBit { .. } => Leaf::Arg(*label),
        };
        for abi in abis {
            if let Some(nr) = row.nr(*abi) {
                out.push((abi.seen_nr(nr), leaf));
            }
        }
    }
    out.sort_by_key(|(nr, _)| *nr);
    out.dedup_by_key(|(nr, _)| *nr);
    out
}

/// A balanced search tree over sorted `entries`; falls through to "allow".
fn tree(a: &mut Asm, entries: &[(u32, Leaf)]) {
    if entries.len() <= LEAF {
        for (nr, leaf) in entries {
            match leaf {
                Leaf::Ret(k) => {
                    a.if_eq(*nr);
                    a.ret(*k);
                }
                Leaf::Arg(l) => a.jeq(*nr, *l),
            }
        }
        a.ret(RET_ALLOW);
        return;
    }
    let mid = entries.len() / 2;
    let right = a.label();
    a.jge(entries[mid].0, right);
    tree(a, &entries[..mid]);
    a.place(right);
    tree(a, &entries[mid..]);
}
