//! `sandbox-install`: puts agent-sandbox into a system or an image — the
//! binary, the claude/codex/pi shims (ahead of anything `npm install -g`
//! writes), PATH order for every kind of shell, the default configuration,
//! the agents' managed settings (updaters off), the remote user's agent
//! state directories, and the dependencies (bubblewrap, passt) — and takes
//! it all out again.
//!
//! Plan, then apply: `gather` observes (`facts`), `plan::plan` decides the
//! whole change as a value, `exec::apply` is the one executor, and the
//! manifest records what was done so a second run changes nothing and
//! `--uninstall` undoes exactly that. After applying, the host checks the
//! caller passes in (`doctor::after_install`) say whether sessions can
//! start here; this module does not import doctor (doctor reads the
//! installation, so the dependency runs the other way).
//!
//! - `crate::layout`: every path; `content`: every generated text; `users`:
//!   the remote user; `packages`: the package managers; `render`: output.
//!
//! Its own crate above the launcher's (it reads the layout, the agents and
//! the configuration's defaults; nothing the launch does uses it), beside
//! doctor, which reads what it installed.

// The crates below, under the names this crate has always used.
use agent_sandbox_core::{agents, config, layout, sysbin};
use agent_sandbox_sys::{env_vars, finding};

pub mod content;
mod error;
mod exec;
pub mod facts;
pub mod manifest;
mod packages;
mod plan;
pub mod render;
pub mod users;

pub use error::InstallError;

use crate::agents::Agent;
use crate::finding::Finding;
use crate::layout::Layout;
use content::ConfigSeed;
use facts::{Facts, ManifestState};
use plan::{InstallPlan, Note, Request};
use std::path::{Path, PathBuf};

/// The installer's options (validated by the command line).
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub agents: Vec<Agent>,
    /// `--root DIR`: stage into a directory.
    pub root: Option<PathBuf>,
    pub dry_run: bool,
    pub uninstall: bool,
    pub no_deps: bool,
    /// The remote user and where the name came from (`--user`, `_REMOTE_USER`).
    pub user: Option<(String, &'static str)>,
    /// The agent-sandbox binary to install (default: beside this program).
    pub binary: Option<PathBuf>,
    pub seed: ConfigSeed,
}

/// What a run did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Outcome {
    pub plan: InstallPlan,
    pub applied: bool,
    /// What the executor had to say (kept directories, kept packages).
    pub notes: Vec<Note>,
    /// Whether sessions can start here (prerequisites, PATH for commands
    /// run without a shell).
    pub checks: Vec<Finding>,
}

/// Observes everything the planner needs.
pub fn gather(opts: &Options, layout: &Layout) -> Result<Facts, InstallError> {
    let manifest = facts::read_manifest(layout);
    let user = match &opts.user {
        None => None,
        Some((name, from)) => {
            let passwd = layout.real(Path::new("/etc/passwd"));
            let text = std::fs::read_to_string(&passwd).unwrap_or_default();
            let u = users::lookup(&text, name).ok_or_else(|| InstallError::NoUser { name: name.clone(), from, passwd: passwd.clone() })?;
            (u.uid != 0).then_some(u)
        }
    };
    let me = std::env::current_exe().ok();
    let (binary, installer) = if opts.uninstall {
        (None, None)
    } else {
        let path = opts
            .binary
            .clone()
            .or_else(|| me.as_ref().and_then(|e| e.parent()).map(|d| d.join("agent-sandbox")))
            .unwrap_or_else(|| PathBuf::from("agent-sandbox"));
        let bin = facts::source(&path).map_err(|e| InstallError::NoBinary { path: path.clone(), why: e.to_string() })?;
        (Some(bin), me.as_deref().and_then(|p| facts::source(p).ok()))
    };
    let old = match &manifest {
        ManifestState::Valid(m) => Some(m),
        _ => None,
    };
    let paths = facts::observe_all(layout, &plan::paths_of_interest(user.as_ref(), old));
    let packages =
        if layout.staged() || opts.uninstall { packages::PackageFacts { manager: None, os: String::new(), missing: Vec::new() } } else { packages::gather() };
    // A dry run of a system install shows what root would do.
    let can_chown = nix::unistd::geteuid().is_root() || (opts.dry_run && !layout.staged());
    Ok(Facts { can_chown, paths, manifest, binary, installer, user, packages })
}

/// Plans, and unless `--dry-run`, applies and checks: `host_checks` runs
/// after a real install on this system (not staged, not `--uninstall`).
pub fn run(opts: &Options, host_checks: fn() -> Vec<Finding>) -> Result<Outcome, InstallError> {
    let euid = nix::unistd::geteuid();
    if !euid.is_root() && !opts.dry_run && opts.root.is_none() {
        return Err(InstallError::NotRoot(euid.as_raw()));
    }
    let layout = Layout::new(opts.root.as_deref());
    let facts = gather(opts, &layout)?;
    let req = Request { agents: opts.agents.clone(), uninstall: opts.uninstall, no_deps: opts.no_deps, staged: layout.staged(), seed: opts.seed.clone() };
    let plan = plan::plan(&req, &facts)?;
    if opts.dry_run {
        return Ok(Outcome { plan, applied: false, notes: Vec::new(), checks: Vec::new() });
    }
    let old = match &facts.manifest {
        ManifestState::Valid(m) => Some(m),
        _ => None,
    };
    let notes = exec::apply(&plan, &layout, old)?;
    let checks = if layout.staged() || opts.uninstall { Vec::new() } else { host_checks() };
    Ok(Outcome { plan, applied: true, notes, checks })
}

/// For the race tests: exchanges the names `a` and `b` atomically
/// (renameat2 RENAME_EXCHANGE; called by number, which every C library
/// the tests build with has, where nix's wrapper is glibc's only).
#[cfg(test)]
pub(crate) fn rename_exchange(a: &std::path::Path, b: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    const RENAME_EXCHANGE: libc::c_uint = 2;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths that outlive the call; integer flags.
    let rc = unsafe { libc::syscall(libc::SYS_renameat2, libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), RENAME_EXCHANGE) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
