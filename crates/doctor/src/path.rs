//! PATH order, as pure functions over what is known about each entry:
//! system directories must come before any venv or user-writable directory
//! (only the shim directory goes first), and a command run without shell
//! start-up files must reach the shims before anything `npm install -g`
//! or a vendor installer may write. Gathering the facts (`dir_info`) is
//! the only impure function here.

use crate::layout::{EXEC_LINK_DIR, SHIM_DIR, SYSTEM_PATH_DIRS};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// One PATH entry and what matters about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirInfo {
    pub dir: String,
    pub exists: bool,
    /// Writable by someone other than root (owner not root, or group/world
    /// writable).
    pub writable: bool,
    /// A Python virtual environment's bin directory.
    pub venv: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offence {
    Venv,
    Writable,
    /// Relative entries (`.`, empty) resolve against the current directory.
    Relative,
}

impl Offence {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Offence::Venv => "a virtual environment",
            Offence::Writable => "a directory writable by non-root users",
            Offence::Relative => "a relative entry (the current directory)",
        }
    }
}

/// A PATH entry that comes before a system directory it must not precede.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ahead {
    pub dir: String,
    pub(crate) offence: Offence,
    /// The first system directory it precedes.
    pub before: String,
}

pub(crate) fn is_system(dir: &str) -> bool {
    SYSTEM_PATH_DIRS.contains(&dir)
}

pub(crate) fn dir_info(dir: &str) -> DirInfo {
    let p = Path::new(dir);
    let meta = std::fs::metadata(p).ok();
    // The directory or any directory above it: whoever can write a parent
    // can rename the directory away and put their own in its place.
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let writable = meta.is_some() && real.ancestors().any(|a| std::fs::metadata(a).is_ok_and(|m| crate::sysbin::untrusted_reason(m.uid(), m.mode()).is_some()));
    let venv = p.join("activate").is_file() || p.parent().is_some_and(|d| d.join("pyvenv.cfg").is_file());
    DirInfo { dir: dir.to_string(), exists: meta.is_some_and(|m| m.is_dir()), writable, venv }
}

/// Entries of PATH (in order, once each) that users other than root can
/// write: harmless to them, but a command a root process finds there runs
/// as root — and "after the system directories" protects only the names
/// the system directories have (`ps`, `less`, `make` are missing from many
/// images).
pub(crate) fn user_writable(entries: &[DirInfo]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for e in entries {
        if e.exists && e.writable && e.dir.starts_with('/') && !out.contains(&e.dir.as_str()) {
            out.push(&e.dir);
        }
    }
    out
}

/// The PATH that commands run without a shell get — `docker exec CTR
/// claude`, tasks and tools started from the container's environment: the
/// container's first process's (readable by root), or else that of the
/// oldest ancestor of this process whose environment is readable (a shell
/// started by `docker exec` has the container's). With where it came from.
pub(crate) fn exec_path() -> Option<(String, String)> {
    let read = |pid: u32| -> Option<String> {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        env.split(|b| *b == 0).find_map(|kv| kv.strip_prefix(b"PATH=")).map(|v| String::from_utf8_lossy(v).into_owned())
    };
    if let Some(p) = read(1) {
        return Some((p, "the container's first process (pid 1)".into()));
    }
    let mut chain = Vec::new();
    let mut pid = std::process::id();
    while pid > 1 && chain.len() < 64 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        pid = status.lines().find_map(|l| l.strip_prefix("PPid:")).and_then(|v| v.trim().parse().ok())?;
        if pid > 1 {
            chain.push(pid);
        }
    }
    chain.iter().rev().find_map(|pid| {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        read(*pid).map(|p| (p, format!("process {pid} ({}), the oldest one here whose environment is readable", comm.trim())))
    })
}

/// Whether pid 1 runs as root (its PATH is then root's).
pub(crate) fn pid1_is_root() -> bool {
    std::fs::read_to_string("/proc/1/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|v| v.split_whitespace().next().map(|u| u == "0")))
        .unwrap_or(false)
}

pub(crate) fn split(path: &str) -> Vec<&str> {
    path.split(':').collect()
}

/// Entries that come before a system directory although they are a venv,
/// writable by users, or relative.
pub(crate) fn ahead_of_system(entries: &[DirInfo]) -> Vec<Ahead> {
    let mut out = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let offence = if !e.dir.starts_with('/') {
            Some(Offence::Relative)
        } else if e.dir == SHIM_DIR || is_system(&e.dir) || !e.exists {
            None
        } else if e.venv {
            Some(Offence::Venv)
        } else if e.writable {
            Some(Offence::Writable)
        } else {
            None
        };
        let Some(offence) = offence else { continue };
        if let Some(sys) = entries[i + 1..].iter().find(|s| is_system(&s.dir)) {
            out.push(Ahead { dir: e.dir.clone(), offence, before: sys.dir.clone() });
        }
    }
    out
}

/// For commands that get PATH straight from the image (`docker exec CTR
/// claude`): the entries searched before the first shim location (the
/// shim directory or its links in /usr/local/sbin). `None`: PATH reaches
/// no shim location at all.
pub(crate) fn before_shims<'a>(entries: &[&'a str]) -> Option<Vec<&'a str>> {
    let first = entries.iter().position(|d| *d == SHIM_DIR || *d == EXEC_LINK_DIR)?;
    Some(entries[..first].iter().copied().filter(|d| !d.is_empty()).collect())
}

/// A PATH value with system directories first: what the installer's
/// profile snippet computes, for messages ("set ENV PATH=...").
pub(crate) fn suggested(entries: &[&str]) -> String {
    let mut sys: Vec<&str> = Vec::new();
    let mut rest: Vec<&str> = Vec::new();
    for d in entries {
        let bucket = if is_system(d) { &mut sys } else { &mut rest };
        if !d.is_empty() && *d != SHIM_DIR && !bucket.contains(d) {
            bucket.push(d);
        }
    }
    let mut all = vec![SHIM_DIR];
    all.extend(sys);
    all.extend(rest);
    all.join(":")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(dir: &str, writable: bool, venv: bool) -> DirInfo {
        DirInfo { dir: dir.into(), exists: true, writable, venv }
    }

    #[test]
    fn venv_and_writable_dirs_before_system_are_flagged() {
        let entries = vec![
            info("/opt/venv/bin", false, true),
            info("/home/u/.local/bin", true, false),
            info("/opt/tool/bin", false, false),
            info("/usr/local/bin", false, false),
            info("/usr/bin", false, false),
            info("/home/u/after", true, false),
        ];
        let got = ahead_of_system(&entries);
        assert_eq!(
            got,
            vec![
                Ahead { dir: "/opt/venv/bin".into(), offence: Offence::Venv, before: "/usr/local/bin".into() },
                Ahead { dir: "/home/u/.local/bin".into(), offence: Offence::Writable, before: "/usr/local/bin".into() },
            ]
        );
    }

    #[test]
    fn relative_entries_and_missing_dirs() {
        let mut missing = info("/nope", true, false);
        missing.exists = false;
        let entries = vec![info(".", false, false), missing, info("/usr/bin", false, false)];
        let got = ahead_of_system(&entries);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].offence, Offence::Relative);
    }

    #[test]
    fn exec_path_must_reach_the_shims_first() {
        assert_eq!(before_shims(&split("/usr/local/sbin:/usr/local/bin:/usr/bin")), Some(vec![]));
        assert_eq!(before_shims(&split("/usr/local/bin:/usr/local/sbin:/usr/bin")), Some(vec!["/usr/local/bin"]));
        assert_eq!(before_shims(&split(&format!("{SHIM_DIR}:/usr/local/bin"))), Some(vec![]));
        assert_eq!(before_shims(&split("/usr/local/bin:/usr/bin")), None);
    }

    /// A root-owned, 0755 directory is still writable by users when a
    /// directory above it is (it can be renamed away and replaced).
    #[test]
    fn a_writable_parent_makes_a_directory_writable() {
        assert!(!dir_info("/usr/bin").writable);
        let d = tempfile::tempdir_in("/tmp").unwrap();
        let inner = d.path().join("bin");
        std::fs::create_dir(&inner).unwrap();
        std::fs::set_permissions(d.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let info = dir_info(inner.to_str().unwrap());
        assert!(info.exists && info.writable, "/tmp above it is world-writable: {info:?}");
        assert_eq!(user_writable(&[info.clone(), dir_info("/usr/bin"), info]), vec![inner.to_str().unwrap()]);
    }

    #[test]
    fn suggestion_puts_shims_then_system_first() {
        assert_eq!(suggested(&split("/opt/venv/bin:/usr/local/bin:/usr/bin:/usr/bin")), format!("{SHIM_DIR}:/usr/local/bin:/usr/bin:/opt/venv/bin"));
    }
}
