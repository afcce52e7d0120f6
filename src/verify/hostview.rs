//! verify's side of the host view (docs/defences.md, "root launcher" and "file system"):
//! canaries only root could use, planted for a root launcher's session to
//! fail to reach, and the launcher-side check that a symbolic link planted
//! at a protected workspace path refuses the launch instead of being
//! followed.

use crate::agents::Agent;
use crate::config::{Config, EnvMap};
use crate::launch::{self, LaunchError, Request};
use crate::sandbox::plan::PlanError;
use crate::verify::Outcome;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

/// Where a root launcher's canaries go: a root-owned system location, not
/// the home, the workspace, /tmp or /run (all replaced in sessions).
pub const CANARY_ROOT: &str = crate::sandbox::rootscan::CANARIES;

/// Files only root may use, alive for one verify run: a 0600 file, a 0700
/// directory with a readable file, a 0600 listening socket.
pub struct RootCanaries {
    dir: PathBuf,
    _socket: UnixListener,
}

impl RootCanaries {
    pub fn plant(nonce: &str) -> std::io::Result<RootCanaries> {
        let dir = Path::new(CANARY_ROOT).join(nonce);
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        let secret = dir.join("secret");
        std::fs::write(&secret, nonce)?;
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600))?;
        let private = dir.join("private");
        std::fs::create_dir(&private)?;
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700))?;
        std::fs::write(private.join("inside"), nonce)?;
        std::fs::set_permissions(private.join("inside"), std::fs::Permissions::from_mode(0o644))?;
        let sock = UnixListener::bind(dir.join("svc.sock"))?;
        std::fs::set_permissions(dir.join("svc.sock"), std::fs::Permissions::from_mode(0o600))?;
        Ok(RootCanaries { dir, _socket: sock })
    }

    /// The paths the session must not reach.
    pub fn paths(&self) -> Vec<PathBuf> {
        ["secret", "private", "svc.sock"].iter().map(|n| self.dir.join(n)).collect()
    }
}

impl Drop for RootCanaries {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Inside: none of the canaries shows anything (a masked file reads as
/// empty, a masked directory lists nothing, the socket refuses).
pub fn root_only_unreachable(paths: &[PathBuf], nonce: &str) -> Outcome {
    if paths.is_empty() {
        return Outcome::pass_note("the launcher is not root: file modes keep root's files from its sessions");
    }
    let mut bad = Vec::new();
    for p in paths {
        if p.ends_with("svc.sock") {
            if std::os::unix::net::UnixStream::connect(p).is_ok() {
                bad.push(format!("{} accepts a connection", p.display()));
            }
        } else if p.ends_with("private") {
            if std::fs::read_dir(p).is_ok_and(|mut d| d.next().is_some()) {
                bad.push(format!("{} can be listed", p.display()));
            }
            if std::fs::read_to_string(p.join("inside")).is_ok_and(|t| t.contains(nonce)) {
                bad.push(format!("{}/inside can be read", p.display()));
            }
        } else if std::fs::read_to_string(p).is_ok_and(|t| t.contains(nonce)) {
            bad.push(format!("{} can be read", p.display()));
        }
    }
    Outcome::from_problems(bad)
}

/// A directory removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A relative link from `ws` up to `/` and down to `target`: what a
/// session plants so that a path resolved outside lands on a host path.
fn up_to(ws: &Path, target: &Path) -> PathBuf {
    let depth = ws.components().count().saturating_sub(1);
    let mut p = PathBuf::new();
    for _ in 0..depth {
        p.push("..");
    }
    p.join(target.strip_prefix("/").unwrap_or(target))
}

/// Outside: a scratch workspace whose `.devcontainer` is a link to the
/// launcher's home; deciding a session there must refuse, naming it.
/// `unprotected` (a weakening) decides it with the protections off.
pub fn protected_symlink_refused(config: &Config, env: &EnvMap, home: &Path, nonce: &str, unprotected: bool) -> Outcome {
    let scratch = Scratch(std::env::temp_dir().join(format!("agent-sandbox-verify-{nonce}")));
    if let Err(e) = std::fs::create_dir(&scratch.0) {
        return Outcome::fail(format!("cannot make a scratch workspace {}: {e}", scratch.0.display()));
    }
    let ws = scratch.0.clone();
    if let Err(e) = std::os::unix::fs::symlink(up_to(&ws, home), ws.join(".devcontainer")) {
        return Outcome::fail(format!("cannot plant the link: {e}"));
    }
    let mut config = config.clone();
    config.workspace_root = Some(ws.clone());
    config.egress_jail = false;
    if unprotected {
        config.protect_devcontainer = false;
    }
    let req = Request { agent: Agent::Claude, command: Some(vec!["/bin/true".into()]), agent_args: Vec::new(), peers: false };
    match launch::decide(&req, &config, env) {
        Err(LaunchError::Plan(PlanError::UnsafeEntry(e))) if e.path == Path::new(".devcontainer") => Outcome::pass(),
        Err(e) => Outcome::fail(format!("refused for another reason: {e}")),
        Ok(_) => Outcome::fail(format!("a session would start with {}/.devcontainer -> {}", ws.display(), home.display())),
    }
}
