//! What a session can do at a path, derived from the same mount list the
//! launcher hands to bwrap: the last mount covering a path decides.
//! `effective_mounts` first turns the plan's list into what bwrap really
//! applies (optional binds whose source is missing are skipped; symlinked
//! destinations resolved); `real_path` resolves a query path the same way.

use crate::sandbox::fsview::FsView;
use crate::sandbox::mounts::{Mount, DEV_HOST_NODES, DEV_MADE};
use serde::Serialize;
use std::borrow::Borrow;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    /// Not visible inside the session.
    Hidden,
    /// Visible but empty (a masked file or a fresh directory).
    Empty,
    /// Readable, not writable.
    Read,
    /// Readable and writable; changes reach the outside.
    Write,
    /// Writable, but only inside the session (a private tmpfs).
    Private,
}

impl Access {
    pub fn readable(self) -> bool {
        matches!(self, Access::Read | Access::Write | Access::Private)
    }
    /// Writable from inside in a way that persists outside the session.
    pub fn writable_outside(self) -> bool {
        self == Access::Write
    }
    /// Writable from inside at all (even if only in a private tmpfs).
    pub fn writable(self) -> bool {
        matches!(self, Access::Write | Access::Private)
    }
}

/// The access a session has at `path` (absolute, normalised).
pub fn access<M: Borrow<Mount>>(mounts: &[M], path: &Path) -> Access {
    let Some(i) = mounts.iter().rposition(|m| path.starts_with(m.borrow().dest())) else {
        return Access::Hidden;
    };
    let m = mounts[i].borrow();
    // bwrap creates a later mount's destination (and its parents) inside
    // a fresh tmpfs: such a directory is visible, holding only that path.
    let exact = path == m.dest().as_path() || mounts[i + 1..].iter().any(|l| l.borrow().dest().starts_with(path));
    match m {
        Mount::RoBind { .. } | Mount::Proc { .. } | Mount::ContainerProc { .. } | Mount::Data { .. } => Access::Read,
        Mount::Dev { dest } => match path.strip_prefix(dest).ok().and_then(|r| r.components().next()) {
            None => Access::Read,
            Some(Component::Normal(n)) if n == "shm" => Access::Private,
            // Device nodes (null, tty, pts...): usable, read-write;
            // everything else under /dev is hidden.
            Some(Component::Normal(n)) if DEV_HOST_NODES.iter().chain(&DEV_MADE).any(|d| n == *d) => Access::Write,
            Some(_) => Access::Hidden,
        },
        Mount::Bind { .. } | Mount::DevBind { .. } | Mount::BindFd { writable: true, .. } => Access::Write,
        Mount::BindFd { writable: false, .. } => Access::Read,
        Mount::Tmpfs { .. } => {
            if exact {
                Access::Private
            } else {
                // Below a fresh tmpfs nothing of the outside exists; the
                // session may create files there, private to it.
                Access::Hidden
            }
        }
        Mount::TmpfsRo { .. } | Mount::Mask { .. } | Mount::EarlyMask { .. } => {
            if exact {
                Access::Empty
            } else {
                Access::Hidden
            }
        }
    }
}

/// The mounts as bwrap will apply them: optional binds whose source does
/// not exist are dropped (bwrap skips them), and each destination is passed
/// through `resolve` (bwrap follows symlinks in destinations).
pub fn effective_mounts<M: Borrow<Mount>>(mounts: &[M], fs: &dyn FsView, resolve: &dyn Fn(&Path) -> PathBuf) -> Vec<Mount> {
    mounts
        .iter()
        .map(|m| m.borrow())
        .filter(|m| match m {
            Mount::RoBind { src, optional: true, .. } | Mount::Bind { src, optional: true, .. } | Mount::DevBind { src, optional: true, .. } => {
                fs.kind(src).is_some()
            }
            _ => true,
        })
        .map(|m| {
            let mut m = m.clone();
            let dest = resolve(m.dest());
            match &mut m {
                Mount::RoBind { dest: d, .. }
                | Mount::Bind { dest: d, .. }
                | Mount::DevBind { dest: d, .. }
                | Mount::Tmpfs { dest: d }
                | Mount::TmpfsRo { dest: d }
                | Mount::EarlyMask { dest: d }
                | Mount::Dev { dest: d }
                | Mount::Proc { dest: d }
                | Mount::ContainerProc { dest: d }
                | Mount::Mask { dest: d, .. }
                | Mount::Data { dest: d, .. }
                | Mount::BindFd { dest: d, .. } => *d = dest,
            }
            m
        })
        .collect()
}

/// `p` made absolute against `cwd`, with symlinks resolved as far as the
/// path exists (the kernel's view, `..` after a symlink included) and the
/// missing rest appended lexically.
pub fn real_path(p: &Path, cwd: &Path) -> PathBuf {
    let abs = if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
    if let Ok(c) = std::fs::canonicalize(&abs) {
        return c;
    }
    // The longest existing prefix, resolved; then the rest, lexically.
    let comps: Vec<Component> = abs.components().collect();
    for split in (1..comps.len()).rev() {
        let head: PathBuf = comps[..split].iter().collect();
        if let Ok(mut out) = std::fs::canonicalize(&head) {
            for c in &comps[split..] {
                match c {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::Normal(n) => out.push(n),
                    _ => {}
                }
            }
            return out;
        }
    }
    abs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn last_covering_mount_wins() {
        let mounts = vec![
            Mount::RoBind { src: p("/"), dest: p("/"), optional: false },
            Mount::Tmpfs { dest: p("/home/u") },
            Mount::Bind { src: p("/home/u/.claude"), dest: p("/home/u/.claude"), optional: true },
            Mount::Mask { dest: p("/etc/shadow"), data: 3 },
            Mount::Bind { src: p("/w/p"), dest: p("/w/p"), optional: false },
        ];
        assert_eq!(access(&mounts, &p("/usr/bin/ls")), Access::Read);
        assert_eq!(access(&mounts, &p("/home/u")), Access::Private);
        assert_eq!(access(&mounts, &p("/home/u/.ssh/id_rsa")), Access::Hidden);
        assert_eq!(access(&mounts, &p("/home/u/.claude/settings.json")), Access::Write);
        assert_eq!(access(&mounts, &p("/etc/shadow")), Access::Empty);
        assert_eq!(access(&mounts, &p("/w/p/src/main.rs")), Access::Write);
        assert_eq!(access(&mounts, &p("/w/other")), Access::Read);
        // Path prefix is by component, not by string.
        assert_eq!(access(&mounts, &p("/home/user2")), Access::Read);
    }

    #[test]
    fn mount_points_created_in_a_tmpfs_are_visible() {
        let mounts = vec![
            Mount::RoBind { src: p("/"), dest: p("/"), optional: false },
            Mount::Tmpfs { dest: p("/home/u") },
            Mount::Bind { src: p("/home/u/src/app"), dest: p("/home/u/src/app"), optional: false },
        ];
        assert_eq!(access(&mounts, &p("/home/u/src")), Access::Private);
        assert_eq!(access(&mounts, &p("/home/u/src/lib")), Access::Hidden);
        assert_eq!(access(&mounts, &p("/home/u/src/app")), Access::Write);
    }

    #[test]
    fn dev_shows_only_what_bwrap_creates() {
        let mounts = vec![
            Mount::RoBind { src: p("/"), dest: p("/"), optional: false },
            Mount::Dev { dest: p("/dev") },
            Mount::DevBind { src: p("/dev/kvm"), dest: p("/dev/kvm"), optional: false },
        ];
        assert_eq!(access(&mounts, &p("/dev")), Access::Read);
        assert_eq!(access(&mounts, &p("/dev/null")), Access::Write);
        assert_eq!(access(&mounts, &p("/dev/pts/0")), Access::Write);
        assert_eq!(access(&mounts, &p("/dev/shm")), Access::Private);
        assert_eq!(access(&mounts, &p("/dev/sda")), Access::Hidden);
        assert_eq!(access(&mounts, &p("/dev/kvm")), Access::Write);
    }

    #[test]
    fn optional_binds_of_missing_sources_are_skipped_and_destinations_resolved() {
        use crate::sandbox::fsview::{Kind, TableFs};
        let fs = TableFs::default().with("/home/u/.claude", Kind::Dir);
        let mounts = vec![
            Mount::RoBind { src: p("/"), dest: p("/"), optional: false },
            Mount::Tmpfs { dest: p("/home/u") },
            Mount::Bind { src: p("/home/u/.claude"), dest: p("/home/u/.claude"), optional: true },
            Mount::Bind { src: p("/home/u/.claude.json"), dest: p("/home/u/.claude.json"), optional: true },
            Mount::Mask { dest: p("/var/run/docker.sock"), data: 3 },
        ];
        // /var/run is a symlink to /run on most systems.
        let resolve = |d: &Path| if d.starts_with("/var/run") { p("/run").join(d.strip_prefix("/var/run").unwrap()) } else { d.to_path_buf() };
        let eff = effective_mounts(&mounts, &fs, &resolve);
        assert_eq!(access(&eff, &p("/home/u/.claude/x")), Access::Write);
        // Not bound (no source): under the home's tmpfs, so not visible.
        assert_eq!(access(&eff, &p("/home/u/.claude.json")), Access::Hidden);
        assert_eq!(access(&mounts, &p("/home/u/.claude.json")), Access::Write, "the raw list would claim it");
        assert_eq!(access(&eff, &p("/run/docker.sock")), Access::Empty);
    }

    #[test]
    fn real_path_resolves_the_existing_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(real_path(Path::new("link/missing/../x"), dir.path()), base.join("real/x"));
        assert_eq!(real_path(Path::new("link"), dir.path()), base.join("real"));
        assert_eq!(real_path(&dir.path().join("nope/a"), Path::new("/")), base.join("nope/a"));
    }
}
