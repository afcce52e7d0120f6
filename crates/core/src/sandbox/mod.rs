//! The sandbox: a session is a bubblewrap process whose whole command line,
//! environment and data files are one pure value (`Plan`), built from the
//! configuration and the facts of this launch (`Context`). Only `exec`
//! touches the system.
//!
//! - `context`: gathers the facts (user, home, workspace, helpers) — impure.
//! - `fsview`: the file-system questions the plan asks, behind a trait.
//! - `plan`: the pure plan; `mounts`: the mount list; `env`: the environment.
//! - `scope`: what a mount list lets a session read or write at a path.
//! - `seccomp`: the syscall profile; `landlock`: abstract-socket scoping;
//!   `gitconfig`: the curated git config.
//! - `exec`: the one place that turns a plan into a running session.

pub mod context;
pub mod env;
pub mod exec;
pub mod fsview;
pub mod gitconfig;
pub mod hostview;
pub mod landlock;
pub mod mountfd;
pub mod mounts;
pub mod plan;
mod premount;
mod protect;
pub mod rootscan;
pub mod scope;
pub mod seccomp;
pub mod shellrc;
pub mod supervise;

pub use context::{Context, Network};
pub use plan::{build, Plan, PlanError};

/// Inside a session this file exists (bound from plan data into the
/// session's private /dev). Outside, only root can create files in /dev, so
/// neither a workspace file nor another user can fake being inside.
pub const SESSION_MARKER: &str = "/dev/.agent-sandbox-session";

/// True when this process runs inside a session (recursion guard).
pub fn inside_session() -> bool {
    std::path::Path::new(SESSION_MARKER).exists()
}
