//! verify's side of the host view (docs/defences.md, "root launcher" and "file system"):
//! canaries only root could use, planted for a root launcher's session to
//! fail to reach, and the launcher-side check that a symbolic link planted
//! at a protected workspace path refuses the launch instead of being
//! followed.

use crate::agents::Agent;
use crate::config::{Config, EnvMap};
use crate::launch::{self, LaunchError, Request};
use crate::sandbox::plan::PlanError;
use crate::Outcome;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

/// Where a root launcher's canaries go: a root-owned system location, not
/// the home, the workspace, /tmp or /run (all replaced in sessions).
pub(crate) const CANARY_ROOT: &str = crate::sandbox::rootscan::CANARIES;

/// Files only root may use, alive for one verify run: a 0600 file, a 0700
/// directory with a readable file, a 0600 listening socket, another user's
/// file whose only grant to root is an ACL entry; and a 0600 file in a
/// top-level directory of its own (where `/` can be written).
pub(crate) struct RootCanaries {
    dir: PathBuf,
    top: Option<PathBuf>,
    acl: bool,
    _socket: UnixListener,
    /// What could not be planted (the check says so).
    pub notes: Vec<String>,
}

impl RootCanaries {
    pub(crate) fn plant(nonce: &str) -> std::io::Result<RootCanaries> {
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
        let mut notes = Vec::new();
        let acl = match plant_acl_only(&dir.join("acl-only"), nonce) {
            Ok(()) => true,
            Err(e) => {
                notes.push(format!("no ACL canary: {e}"));
                false
            }
        };
        let top = Path::new("/").join(format!("agent-sandbox-verify-{nonce}"));
        let top = match plant_top(&top, nonce) {
            Ok(()) => Some(top),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&top);
                notes.push(format!("no canary in a top-level directory of its own ({e})"));
                None
            }
        };
        Ok(RootCanaries { dir, top, acl, _socket: sock, notes })
    }

    /// The paths the session must not reach.
    pub(crate) fn paths(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = ["secret", "private", "svc.sock"].iter().map(|n| self.dir.join(n)).collect();
        v.extend(self.acl.then(|| self.dir.join("acl-only")));
        v.extend(self.top.as_ref().map(|t| t.join("secret")));
        v
    }
}

/// A 0600 file in a top-level directory made for it.
fn plant_top(dir: &Path, nonce: &str) -> std::io::Result<()> {
    std::fs::create_dir(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
    std::fs::write(dir.join("secret"), nonce)?;
    std::fs::set_permissions(dir.join("secret"), std::fs::Permissions::from_mode(0o600))
}

/// `nobody`'s file, mode 0000, readable by uid 0 through an ACL entry only.
fn plant_acl_only(path: &Path, nonce: &str) -> std::io::Result<()> {
    std::fs::write(path, nonce)?;
    std::os::unix::fs::chown(path, Some(65534), Some(65534))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000))?;
    let mut acl = 2u32.to_le_bytes().to_vec();
    // user::---, user:0:r--, group::---, mask::r--, other::---
    for (tag, perm, id) in [(0x01u16, 0u16, u32::MAX), (0x02, 4, 0), (0x04, 0, u32::MAX), (0x10, 4, u32::MAX), (0x20, 0, u32::MAX)] {
        acl.extend(tag.to_le_bytes());
        acl.extend(perm.to_le_bytes());
        acl.extend(id.to_le_bytes());
    }
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: setxattr reads the NUL-terminated path and name and `acl`,
    // all live for the call.
    let rc = unsafe { libc::setxattr(c.as_ptr(), c"system.posix_acl_access".as_ptr(), acl.as_ptr().cast(), acl.len(), 0) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

impl Drop for RootCanaries {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(t) = &self.top {
            let _ = std::fs::remove_dir_all(t);
        }
    }
}

/// The kernel's interfaces only root may read, which a root launcher's
/// session must not (`/sys/kernel/slab` where the kernel has it).
const KERNEL_ROOT_ONLY: &[&str] = &["/proc/slabinfo", "/proc/kpageflags", "/proc/vmallocinfo"];

/// Inside: none of the canaries shows anything (a masked file reads as
/// empty, a masked directory lists nothing, the socket refuses).
pub(crate) fn root_only_unreachable(paths: &[PathBuf], nonce: &str) -> Outcome {
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
    // A masked file reads as nothing; the real one has content.
    let readable = |p: &Path| std::fs::File::open(p).and_then(|mut f| std::io::Read::read(&mut f, &mut [0u8; 64])).is_ok_and(|n| n > 0);
    for k in KERNEL_ROOT_ONLY.iter().map(Path::new) {
        if readable(k) {
            bad.push(format!("{} can be read", k.display()));
        }
    }
    let slab = std::fs::read_dir("/sys/kernel/slab").ok().and_then(|mut d| d.next()).and_then(Result::ok).map(|e| e.path().join("aliases"));
    if let Some(a) = slab.filter(|a| readable(a)) {
        bad.push(format!("{} can be read", a.display()));
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
pub(crate) fn protected_symlink_refused(config: &Config, env: &EnvMap, home: &Path, nonce: &str, unprotected: bool) -> Outcome {
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
