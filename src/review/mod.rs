//! What a session leaves behind. Review answers one question: what changed,
//! since the state the user last acknowledged, that will run code outside
//! the sandbox or that a diff will not show?
//!
//! - `walk` lists the workspace (and the tool dirs shared with sessions)
//!   without following symlinks or blocking (`crate::fsread`);
//! - `classify` gives each path its kind (`kinds`: one table, most
//!   dangerous first) by place and content;
//! - a `Snapshot` keeps every path's fingerprint (of its contents for the
//!   places that run code, of its metadata for the rest);
//! - `report` compares two snapshots; `store` keeps them (in `codec`'s
//!   compact form) outside the workspace, out of sessions' reach;
//!   `session` is what the launcher does around a session.

pub mod classify;
mod codec;
mod describe;
pub mod gitcfg;
pub mod kinds;
pub mod report;
pub mod session;
pub mod store;
pub mod walk;

use classify::{Classified, Reader, Tag};
use kinds::Kind;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use walk::{Listing, Meta, Ty};

pub use classify::Scope;
pub use report::{Change, Finding, Report};
pub use store::{ReviewError, Store};

/// 128 bits of SHA-256, in hex.
pub fn digest(bytes: &[u8]) -> String {
    digest16(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// 128 bits of SHA-256: fingerprints are compared, not trusted as content
/// addresses.
pub fn digest16(bytes: &[u8]) -> [u8; 16] {
    let mut out = [0; 16];
    out.copy_from_slice(&Sha256::digest(bytes)[..16]);
    out
}

/// Nanoseconds since the epoch: sessions a moment apart must still order.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// What a path's state is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fp {
    /// Its metadata (the bulk of the tree: never read).
    Meta(Meta),
    /// Its contents and mode (the places that run code: the same bytes
    /// written again are no change).
    Content([u8; 16]),
}

/// One path's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rec {
    pub ty: Ty,
    pub fp: Fp,
    pub kind: Option<Kind>,
}

/// The state of a workspace (and the shared tool dirs) at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub workspace: PathBuf,
    pub shared: Vec<PathBuf>,
    /// Nanoseconds since the epoch.
    pub taken_ns: u64,
    /// False when the walk was cut short (then review says so).
    pub complete: bool,
    /// In tree order (`walk::key_cmp`).
    pub entries: Vec<(String, Rec)>,
}

impl Snapshot {
    pub fn get(&self, key: &str) -> Option<&Rec> {
        let i = self.entries.binary_search_by(|(k, _)| walk::key_cmp(k, key)).ok()?;
        Some(&self.entries[i].1)
    }
}

/// A snapshot with what the report needs about the present.
#[derive(Debug, Clone)]
pub struct Current {
    pub snapshot: Snapshot,
    /// What each item would run.
    pub runs: BTreeMap<String, String>,
    pub warnings: Vec<String>,
}

/// Walks, classifies and fingerprints the workspace and `shared` dirs.
pub fn take(workspace: &Path, shared: &[PathBuf]) -> Current {
    let mut listing = Listing::default();
    let mut roots: Vec<(String, &PathBuf)> = shared.iter().map(|d| (classify::shared_prefix(d), d)).collect();
    roots.sort_by(|a, b| walk::key_cmp(&a.0, &b.0));
    for (prefix, dir) in &roots {
        walk::walk_into(&mut listing, dir, prefix, walk::LIMITS);
    }
    walk::walk_into(&mut listing, workspace, "", walk::LIMITS);
    listing.finish();
    let reader = classify::RealReader::open(workspace, shared);
    let scope = Scope { workspace, shared };
    let classified = classify::classify(&listing, &reader, &scope);
    build(listing, classified, &reader, &scope)
}

/// The snapshot of a classified listing. Git's data and shared dirs'
/// non-code are left out; a directory counts only when it could not be
/// entered (its contents are entries of their own).
pub fn build(listing: Listing, mut c: Classified, reader: &dyn Reader, scope: &Scope) -> Current {
    let mut entries = Vec::with_capacity(listing.entries.len());
    let mut runs = BTreeMap::new();
    let mut warnings: Vec<String> = listing.problems.iter().map(|p| describe::shown(p)).collect();
    let complete = listing.problems.is_empty();
    for (i, (key, e)) in listing.entries.into_iter().enumerate() {
        let kind = match c.tags[i] {
            Some(Tag::Ignore) => continue,
            Some(Tag::Kind(Kind::Unreadable)) => Some(Kind::Unreadable),
            _ if e.ty == Ty::Dir => continue,
            Some(Tag::Kind(k)) => Some(k),
            None if key.starts_with('/') => continue,
            None => None,
        };
        let mut fp = Fp::Meta(e.meta);
        if let Some(k) = kind {
            if e.ty == Ty::File && !k.bulk() {
                let content = c.contents.entry(key.clone()).or_insert_with(|| reader.read(&key).map(std::rc::Rc::from));
                match content {
                    Ok(bytes) => fp = Fp::Content(digest16(&[format!("{:o} ", e.mode()).as_bytes(), bytes].concat())),
                    Err(err) => warnings.push(format!("{}: {err}", describe::shown(&key))),
                }
            }
            let line = match k {
                k if k.bulk() && e.ty == Ty::File => String::new(),
                Kind::SpecialFile => describe::special(&e, c.expected.get(&key).copied()),
                k => describe::runs(&key, &e, k, c.contents.get(&key)),
            };
            if k == Kind::SpecialFile || k == Kind::Unreadable {
                warnings.push(format!("{}: {line}", describe::shown(&key)));
            }
            if !line.is_empty() {
                runs.insert(key.clone(), line);
            }
        }
        entries.push((key, Rec { ty: e.ty, fp, kind }));
    }
    let snapshot = Snapshot { workspace: scope.workspace.to_path_buf(), shared: scope.shared.to_vec(), taken_ns: now_ns(), complete, entries };
    Current { snapshot, runs, warnings }
}

#[cfg(test)]
mod tests;
