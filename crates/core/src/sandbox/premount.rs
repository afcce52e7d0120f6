//! Which of a plan's mounts the launcher makes itself, before bwrap starts,
//! by descriptor, in the mount namespace bwrap's recursive bind of `/`
//! then carries into the session.
//!
//! Where the kernel has the whole mount API (`MountApi::Full`) that is
//! every mount but those bwrap must make in the session's own namespaces:
//! `/dev` and `/proc` (fresh ones for its pid namespace) and what lies in
//! them. bwrap then gets `--bind / /` and those: each read-only bind bwrap
//! makes re-reads the whole mount table (mountinfo) to remount what lies
//! below it, which was most of a session's start-up; the launcher knows
//! what it mounted and sets the flags on the tree it attaches.
//!
//! With `open_tree` and `move_mount` only (`MountApi::Tree`) it is the
//! mounts whose destination lies inside a place sessions write (the
//! workspace, `allowWrite` paths, the bound-back agent state, the private
//! tool dirs, a pinned directory): bwrap resolves a destination by its
//! path, following links, at the moment it mounts; a session running
//! meanwhile in the same workspace could swap a name on that path for a
//! link (a protected `.git/hooks` for a link to the home) and have the
//! protection land elsewhere.
//!
//! Either way the launcher walks to a destination in a place sessions
//! write without following anything and mounts onto the very object it
//! opened.
//!
//! Pure: the answer depends on the mount list alone.

use crate::sandbox::mounts::Mount;
use crate::sandbox::plan::{DataFile, OpenBeneath};
use std::borrow::Borrow;
use std::path::{Path, PathBuf};

/// A mount made before bwrap: `Plan::mounts[mount]`, at `rel` under the
/// trusted directory `root`, walked without following anything. With
/// `MountApi::Tree`, `root` is where the place that holds it really is on
/// the host; with `Full`, the mount point that covers it in the launcher's
/// namespace (the executor attached that mount first), or the parent
/// directory of a destination only the host's read-only tree covers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Premount {
    pub mount: usize,
    pub root: PathBuf,
    pub rel: PathBuf,
    /// Inside a place sessions write, on the host (`root` + `rel` there):
    /// a missing mount point is made there before any idmapped tree
    /// covers it, so it gets the launcher's owner.
    pub host: Option<(PathBuf, PathBuf)>,
    /// Inside a fresh file system the executor mounted (a tmpfs): a
    /// missing mount point is made there, just before the mount.
    pub fresh: bool,
}

/// Where `m` binds from on the host (the root to walk from and the path
/// under it), for a bind of a place on disk.
fn on_disk(m: &Mount, data: &[DataFile]) -> Option<(PathBuf, PathBuf)> {
    match m {
        Mount::Bind { src, .. } | Mount::RoBind { src, .. } => Some((src.clone(), PathBuf::new())),
        Mount::BindFd { data: d, .. } => data.get(*d)?.open.as_ref().map(|o: &OpenBeneath| (o.root.clone(), o.rel.clone())),
        _ => None,
    }
}

/// The mounts to make before bwrap, in plan order. A mount goes there when
/// the mount that covers its destination at that point (the last earlier
/// one whose destination strictly holds it) is a bind sessions can write
/// through, or is itself made before bwrap (its place is inside one). Only
/// the kinds the launcher can make by descriptor: binds, empty files, empty
/// directories.
pub(super) fn plan<M: Borrow<Mount>>(mounts: &[M], data: &[DataFile]) -> Vec<Premount> {
    let mounts: Vec<&Mount> = mounts.iter().map(Borrow::borrow).collect();
    let mut out: Vec<Premount> = Vec::new();
    for (i, host) in in_writable_places(&mounts, data).into_iter().enumerate() {
        if let Some((root, rel)) = host {
            out.push(Premount { mount: i, root: root.clone(), rel: rel.clone(), host: Some((root, rel)), fresh: false });
        }
    }
    out
}

/// For each mount, where its destination lies on the host when that is
/// inside a place sessions write (the `MountApi::Tree` rule above).
fn in_writable_places(mounts: &[&Mount], data: &[DataFile]) -> Vec<Option<(PathBuf, PathBuf)>> {
    let mut out: Vec<Option<(PathBuf, PathBuf)>> = Vec::with_capacity(mounts.len());
    for (i, m) in mounts.iter().enumerate() {
        if !matches!(m, Mount::Bind { .. } | Mount::RoBind { .. } | Mount::BindFd { .. } | Mount::Mask { .. } | Mount::TmpfsRo { .. }) {
            out.push(None);
            continue;
        }
        let Some(j) = cover(mounts, i) else {
            out.push(None);
            continue;
        };
        let cover = mounts[j];
        let base = match &out[j] {
            Some(b) => Some(b.clone()),
            None if matches!(cover, Mount::Bind { .. } | Mount::BindFd { writable: true, .. }) => on_disk(cover, data),
            None => None,
        };
        let rest = m.dest().strip_prefix(cover.dest()).unwrap_or(Path::new(""));
        out.push(base.map(|(root, rel)| (root, rel.join(rest))));
    }
    out
}

/// The mount that covers mount `i`'s destination when it is made: the last
/// earlier one whose destination strictly holds it.
fn cover(mounts: &[&Mount], i: usize) -> Option<usize> {
    let dest = mounts.get(i)?.dest();
    (0..i).rev().find(|j| dest.starts_with(mounts[*j].dest()) && mounts[*j].dest() != dest)
}

/// Whether mount `m` is bwrap's even when the executor makes the rest:
/// `/dev` and `/proc` are made fresh in the session's own namespaces, so
/// nothing in them can be mounted before (under a masked /proc, bwrap binds
/// the container's, and covers its kernel interfaces, the same way).
pub(super) fn bwrap_only(m: &Mount) -> bool {
    matches!(m, Mount::Dev { .. } | Mount::Proc { .. } | Mount::ContainerProc { .. } | Mount::DevBind { .. })
        || m.dest().starts_with("/dev")
        || m.dest().starts_with("/proc")
}

/// The mounts the executor makes with the whole mount API
/// (`MountApi::Full`): every one after the root but those `bwrap_only`
/// keeps, in plan order. The root itself (`mounts[0]`, the host's tree) is
/// made read-only in place (`mountfd::host_read_only`) unless a weakened
/// plan binds it writable.
pub(super) fn plan_all<M: Borrow<Mount>>(mounts: &[M], data: &[DataFile]) -> Vec<Premount> {
    let mounts: Vec<&Mount> = mounts.iter().map(Borrow::borrow).collect();
    let mounts = mounts.as_slice();
    let host = in_writable_places(mounts, data);
    let mut out = Vec::new();
    for (i, m) in mounts.iter().enumerate().skip(1) {
        if bwrap_only(m) || matches!(m, Mount::EarlyMask { .. }) {
            continue;
        }
        let dest = m.dest();
        let (root, rel, fresh) = match cover(mounts, i) {
            // Only the host's tree above it: a trusted, read-only place,
            // where the parent is opened by its path.
            Some(0) | None => match (dest.parent(), dest.file_name()) {
                (Some(parent), Some(name)) => (parent.to_path_buf(), PathBuf::from(name), false),
                _ => continue,
            },
            Some(j) => {
                let fresh = matches!(mounts[j], Mount::Tmpfs { .. } | Mount::TmpfsRo { .. });
                (mounts[j].dest().clone(), dest.strip_prefix(mounts[j].dest()).unwrap_or(Path::new("")).to_path_buf(), fresh)
            }
        };
        out.push(Premount { mount: i, root, rel, host: host[i].clone(), fresh });
    }
    out
}

/// Whether plan mount `i` is made before bwrap.
pub(super) fn is_premounted(premounts: &[Premount], i: usize) -> bool {
    premounts.iter().any(|p| p.mount == i)
}
