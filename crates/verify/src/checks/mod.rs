//! The check functions, run inside the session by the probe. Each takes
//! the probe's context and returns an `Outcome`; none panics on purpose,
//! and whatever one creates it removes. Grouped by area:
//! `env`, `home`, `fs`, `privs`, `tty`, `misc` (git, entry points,
//! helpers, recursion, descriptors), `net` (the egress jail), `attack`
//! (the adversarial probes), `procs` (the outer processes through /proc), `syscalls` (the seccomp profile's refusals)
//! and `needs` (what the profile keeps for agents). `sys`
//! holds the shared syscall helpers, `abi` the calls through each ABI.

pub(super) mod abi;
pub(super) mod allow;
pub(super) mod attack;
pub(super) mod env;
pub(super) mod fs;
pub(super) mod home;
pub(super) mod misc;
pub(super) mod needs;
pub(super) mod net;
pub(super) mod privs;
pub(super) mod procs;
pub(super) mod sys;
pub(super) mod syscalls;
pub(super) mod tty;

use crate::spec::Spec;

/// What every check can see.
pub struct Ctx {
    pub spec: Spec,
    /// Descriptors open when the probe started (before it opened any).
    pub(crate) initial_fds: Vec<i32>,
}
