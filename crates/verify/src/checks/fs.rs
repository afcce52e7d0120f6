//! File-system checks (docs/defences.md, IPC/runtime, container engines, file
//! system): private /tmp, masked runtime and engine sockets, a read-only
//! root, writes confined to the workspace, host-executed files read-only,
//! and `scope`'s answers matching what the session really sees.

use super::sys::{self, open_for_write, try_create};
use super::Ctx;
use crate::sandbox::plan::{ENGINE_SOCKETS, MASKED_DIRS};
use crate::Outcome;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

fn is_tmpfs(p: &Path) -> bool {
    nix::sys::statfs::statfs(p).is_ok_and(|s| s.filesystem_type() == nix::sys::statfs::TMPFS_MAGIC)
}

/// A unix socket at `p` that accepts a connection.
fn socket_reachable(p: &Path) -> bool {
    UnixStream::connect(p).is_ok()
}

pub(crate) fn tmp_private(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for d in ["/tmp", "/var/tmp"] {
        if Path::new(d).exists() && !is_tmpfs(Path::new(d)) {
            bad.push(format!("{d} is not a private tmpfs"));
        }
    }
    for s in &c.spec.tmp_sockets {
        if socket_reachable(s) {
            bad.push(format!("the outer socket {} accepts connections", s.display()));
        } else if s.exists() {
            bad.push(format!("the outer socket {} is visible", s.display()));
        }
    }
    Outcome::from_problems(bad)
}

pub(crate) fn run_masked(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for d in ["/run/user", "/run/secrets", "/var/run/secrets"] {
        let p = Path::new(d);
        if !p.exists() {
            continue;
        }
        let e = sys::entries(p);
        if !e.is_empty() {
            bad.push(format!("{d} shows {}", e.join(", ")));
        }
        if try_create(p, &c.spec.nonce).is_ok() {
            bad.push(format!("{d} is writable"));
        }
    }
    for s in &c.spec.run_user_sample {
        if std::fs::symlink_metadata(s).is_ok() {
            bad.push(format!("{} is visible", s.display()));
        }
    }
    let seen: Vec<&String> = c.spec.run_sample.iter().filter(|n| std::fs::symlink_metadata(Path::new("/run").join(n)).is_ok()).collect();
    if !seen.is_empty() {
        bad.push(format!("the outer /run shows {}", seen.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")));
    }
    Outcome::from_problems(bad)
}

/// The canaries only root may use (planted by a root launcher) show nothing.
pub(crate) fn root_only_unreachable(c: &Ctx) -> Outcome {
    if let Some(e) = &c.spec.root_canary_error {
        return Outcome::fail(format!("the canaries could not be planted: {e}"));
    }
    let outcome = crate::hostview::root_only_unreachable(&c.spec.root_canaries, &c.spec.nonce);
    match (outcome.status, c.spec.root_canary_notes.is_empty()) {
        (crate::Status::Pass, false) => Outcome::pass_note(c.spec.root_canary_notes.join("; ")),
        _ => outcome,
    }
}

pub(crate) fn engine_sockets(_c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for s in ENGINE_SOCKETS {
        let p = Path::new(s);
        if socket_reachable(p) {
            bad.push(format!("{s} accepts connections"));
        } else if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_socket()) {
            bad.push(format!("{s} is a visible socket"));
        }
    }
    let engine_dirs = MASKED_DIRS.iter().filter(|d| !d.contains("/user") && !d.contains("secrets"));
    for d in engine_dirs {
        let e = sys::entries(Path::new(d));
        if !e.is_empty() {
            bad.push(format!("{d} shows {}", e.join(", ")));
        }
    }
    Outcome::from_problems(bad)
}

/// System directories no session may write.
const SYSTEM_WRITE_TARGETS: &[&str] = &["/", "/etc", "/usr", "/usr/bin", "/usr/local/bin", "/var", "/var/lib", "/opt", "/srv"];

/// The workspace, allowWrite paths, and the session's private tmpfs
/// directories (the home, /tmp, /var/tmp, /run), and what lies below them.
fn writable_by_design(c: &Ctx, p: &Path) -> bool {
    let s = &c.spec;
    p.starts_with(&s.workspace)
        || p.starts_with(&s.home)
        || p.starts_with("/tmp")
        || p.starts_with("/var/tmp")
        || crate::sandbox::plan::RUNTIME_DIRS.iter().any(|d| p.starts_with(d))
        || s.allow_write.iter().any(|a| p.starts_with(a))
}

pub(crate) fn root_read_only(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    match nix::sys::statvfs::statvfs("/") {
        Ok(s) if s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY) => {}
        Ok(_) => bad.push("/ is mounted read-write".into()),
        Err(e) => bad.push(format!("statvfs /: {e}")),
    }
    for d in SYSTEM_WRITE_TARGETS.iter().map(Path::new).filter(|p| p.is_dir() && !writable_by_design(c, p)) {
        if try_create(d, &c.spec.nonce).is_ok() {
            bad.push(format!("created a file in {}", d.display()));
        }
    }
    if open_for_write(Path::new("/etc/passwd")).is_ok() {
        bad.push("/etc/passwd opens for writing".into());
    }
    Outcome::from_problems(bad)
}

pub(crate) fn outside_workspace(c: &Ctx) -> Outcome {
    let ws = &c.spec.workspace;
    let mut targets: Vec<PathBuf> = Vec::new();
    if let Some(parent) = ws.parent() {
        if parent != Path::new("/") && !writable_by_design(c, parent) {
            targets.push(parent.to_path_buf());
            for name in sys::entries(parent) {
                let p = parent.join(name);
                // Ancestors of the home or of allowWrite paths hold them.
                let holds = c.spec.home.starts_with(&p) || c.spec.allow_write.iter().any(|a| a.starts_with(&p));
                if p != *ws && p.is_dir() && !holds && !writable_by_design(c, &p) {
                    targets.push(p);
                }
            }
        }
    }
    let bad: Vec<String> = targets.iter().filter(|d| try_create(d, &c.spec.nonce).is_ok()).map(|d| format!("created a file in {}", d.display())).collect();
    if targets.is_empty() {
        return Outcome::pass_note("the workspace has no parent outside the home to test");
    }
    Outcome::from_problems(bad)
}

pub(crate) fn workspace_writable(c: &Ctx) -> Outcome {
    let ws = &c.spec.workspace;
    let mut bad = Vec::new();
    if let Err(e) = try_create(ws, &c.spec.nonce) {
        bad.push(format!("cannot create a file in {}: {e}", ws.display()));
    }
    match std::env::current_dir() {
        Ok(cwd) if cwd.starts_with(ws) => {}
        Ok(cwd) => bad.push(format!("the session starts in {}, outside the workspace", cwd.display())),
        Err(e) => bad.push(format!("getcwd: {e}")),
    }
    Outcome::from_problems(bad)
}

pub(crate) fn host_executed_read_only(c: &Ctx) -> Outcome {
    let (ws, s) = (&c.spec.workspace, &c.spec);
    let mut targets: Vec<PathBuf> = Vec::new();
    if s.protect_devcontainer {
        targets.extend([ws.join(".devcontainer"), ws.join(".devcontainer.json")]);
    }
    if ws.join(".git").is_dir() {
        if s.protect_git_hooks {
            targets.push(ws.join(".git/hooks"));
        }
        if s.protect_git_config {
            targets.push(ws.join(".git/config"));
        }
    }
    let present: Vec<&PathBuf> = targets.iter().filter(|p| p.exists()).collect();
    if present.is_empty() {
        return Outcome::pass_note("nothing host-executed to protect in the workspace (or its protection is switched off)");
    }
    let bad: Vec<String> = present
        .iter()
        .filter(|p| if p.is_dir() { try_create(p, &c.spec.nonce).is_ok() } else { open_for_write(p).is_ok() })
        .map(|p| format!("{} is writable", p.display()))
        .collect();
    Outcome::from_problems(bad)
}

/// Whether `p` is writable from here without changing it.
fn writable(p: &Path, nonce: &str) -> bool {
    if p.is_dir() {
        try_create(p, nonce).is_ok()
    } else {
        open_for_write(p).is_ok()
    }
}

pub(crate) fn scope_matches(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for s in &c.spec.scope {
        let p = &s.path;
        let exists = std::fs::symlink_metadata(p).is_ok();
        let problem = match s.access.as_str() {
            "hidden" => exists.then(|| "visible".to_string()),
            "empty" => {
                let empty =
                    !exists || if p.is_dir() { sys::dir_is_empty(p).unwrap_or(true) } else { std::fs::metadata(p).map(|m| m.len() == 0).unwrap_or(true) };
                (!empty).then(|| "not empty".to_string())
            }
            "read" => {
                if !exists {
                    Some("not visible".into())
                } else if writable(p, &c.spec.nonce) {
                    Some("writable".into())
                } else if s.readable_outside && std::fs::metadata(p).is_ok_and(|m| m.is_file()) && std::fs::File::open(p).is_err() {
                    Some("not readable".into())
                } else {
                    None
                }
            }
            "write" | "private" => {
                if !exists {
                    Some("not visible".into())
                } else if s.writable_outside && !writable(p, &c.spec.nonce) {
                    Some("not writable".into())
                } else {
                    None
                }
            }
            other => Some(format!("unknown access {other}")),
        };
        if let Some(why) = problem {
            bad.push(format!("{}: scope says {}, but it is {why}", p.display(), s.access));
        }
    }
    Outcome::from_problems(bad)
}
