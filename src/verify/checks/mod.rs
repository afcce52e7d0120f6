//! The check functions, run inside the session by the probe. Each takes
//! the probe's context and returns an `Outcome`; none panics on purpose,
//! and whatever one creates it removes. Grouped by area:
//! `env`, `home`, `fs`, `privs`, `tty`, `misc` (git, entry points,
//! helpers, recursion, descriptors), `net` (the egress jail), `attack`
//! (the adversarial probes), `procs` (the outer processes through /proc), `syscalls` (the seccomp profile's refusals)
//! and `needs` (what the profile keeps for agents). `sys`
//! holds the shared syscall helpers, `abi` the calls through each ABI.

pub mod abi;
pub mod allow;
pub mod attack;
pub mod env;
pub mod fs;
pub mod home;
pub mod misc;
pub mod needs;
pub mod net;
pub mod privs;
pub mod procs;
pub mod sys;
pub mod syscalls;
pub mod tty;

use crate::verify::spec::Spec;

/// What every check can see.
pub struct Ctx {
    pub spec: Spec,
    /// Descriptors open when the probe started (before it opened any).
    pub initial_fds: Vec<i32>,
}
