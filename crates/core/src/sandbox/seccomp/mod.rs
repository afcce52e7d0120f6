//! The session's syscall profile: a classic-BPF seccomp program, built as a
//! pure value from one table, that bwrap loads (`--seccomp FD`, after
//! no-new-privs) for the whole session.
//!
//! - `table`: the rows — syscall, number per ABI, what happens, why. The
//!   profile refuses, on every ABI, what Docker's default profile refuses a
//!   container without capabilities and no agent needs (kernel keyrings,
//!   bpf, perf, userfaultfd, modules, kexec, swap, reboot, setting the clock,
//!   quotas, the kernel log, io_uring, file handles, obsolete and hardware
//!   calls), limits personality flags and address families, and stops
//!   terminal injection. It keeps what agents need that Docker would refuse
//!   them: nested user namespaces and mounts inside them, ptrace and
//!   process_vm_* on their own processes, kcmp.
//! - `abi`: the ABIs and their audit architectures; `generate`: the program;
//!   `bpf`: instructions and the assembler; `interp`: runs a program in tests
//!   and in `verify` (the kernel's cache rules included).
//!
//! A deny-list over an allow-by-default, not Docker's allow-list: agents run
//! arbitrary toolchains, and a call unknown to an allow-list breaks them
//! with an error nobody can trace to the sandbox. The unit tests hold the
//! table against Docker's refusals, name by name.
//!
//! Not here: loading (bwrap does), Landlock (`sandbox::landlock`).

pub mod abi;
mod bpf;
pub mod generate;
// The tests' interpreter of the generated programs.
#[cfg(test)]
mod interp;
pub mod table;

pub use abi::{native_abis, Abi};
pub use bpf::{to_bytes, Insn};
pub use table::{TIOCLINUX, TIOCSTI};

/// The session's filter for `abis`.
pub fn program(abis: &[Abi]) -> Vec<Insn> {
    generate::program(table::ROWS, abis)
}

#[cfg(test)]
mod tests;
