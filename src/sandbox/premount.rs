//! Which of a plan's mounts the launcher makes itself, before bwrap starts,
//! by descriptor: those whose destination lies inside a place sessions
//! write (the workspace, `allowWrite` paths, the bound-back agent state,
//! the private tool dirs, a pinned directory). bwrap resolves a
//! destination by its path, following links, at the moment it mounts; a
//! session running meanwhile in the same workspace could swap a name on
//! that path for a link (a protected `.git/hooks` for a link to the home)
//! and have the protection land elsewhere. The launcher instead walks to
//! the destination without following anything and mounts onto the very
//! object it opened; bwrap's recursive bind of the enclosing place then
//! carries the mount into the session.
//!
//! Pure: the answer depends on the mount list alone.

use crate::sandbox::mounts::Mount;
use crate::sandbox::plan::{DataFile, OpenBeneath};
use std::path::{Path, PathBuf};

/// A mount made before bwrap: `Plan::mounts[mount]`, at `rel` under the
/// trusted directory `root` on the host (where the place that holds it
/// really is), walked without following anything.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Premount {
    pub mount: usize,
    pub root: PathBuf,
    pub rel: PathBuf,
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
pub fn plan(mounts: &[Mount], data: &[DataFile]) -> Vec<Premount> {
    let mut out: Vec<Premount> = Vec::new();
    for (i, m) in mounts.iter().enumerate() {
        if !matches!(m, Mount::Bind { .. } | Mount::RoBind { .. } | Mount::BindFd { .. } | Mount::Mask { .. } | Mount::TmpfsRo { .. }) {
            continue;
        }
        let dest = m.dest();
        let Some(j) = (0..i).rev().find(|j| dest.starts_with(mounts[*j].dest()) && mounts[*j].dest() != dest) else { continue };
        let cover = &mounts[j];
        let base = match out.iter().find(|p| p.mount == j) {
            Some(p) => Some((p.root.clone(), p.rel.clone())),
            None if matches!(cover, Mount::Bind { .. } | Mount::BindFd { writable: true, .. }) => on_disk(cover, data),
            None => None,
        };
        let Some((root, rel)) = base else { continue };
        let rest = dest.strip_prefix(cover.dest()).unwrap_or(Path::new(""));
        out.push(Premount { mount: i, root, rel: rel.join(rest) });
    }
    out
}

/// Whether plan mount `i` is made before bwrap.
pub fn is_premounted(premounts: &[Premount], i: usize) -> bool {
    premounts.iter().any(|p| p.mount == i)
}
