//! The launcher: from a request to a running session. It decides
//! everything as data (config, agents, the sandbox plan, the jail's plan)
//! and keeps side effects behind narrow seams (`sandbox::exec`, `jail`).
//! Review lives here because the launch itself uses it (around each
//! session); verify, install and doctor, which only look at what this
//! crate decides or lays out, are crates above it.

// The floor below, under the names this crate has always used.
use agent_sandbox_sys::{child, confinement, env_vars, fixes, idmap, jsonc, nofollow, resident, terminal};

pub mod agents;
pub mod arch;
pub mod config;
pub mod container_seccomp;
pub mod jail;
pub mod launch;
pub mod layout;
pub mod review;
pub mod sandbox;
pub mod sysbin;
