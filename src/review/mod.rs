//! What a session leaves behind. Review answers one question: what changed,
//! since the state the user last acknowledged, that will run code outside
//! the sandbox or that a diff will not show?
//!
//! - `walk` lists the workspace (and the tool dirs shared with sessions)
//!   without following symlinks or blocking (`fsread`);
//! - `classify` gives each path its kind (`kinds`: one table, most
//!   dangerous first) by place and content;
//! - a `Snapshot` keeps every path's fingerprint (of its contents for the
//!   places that run code, of its metadata for the rest);
//! - `report` compares two snapshots; `store` keeps them outside the
//!   workspace, out of sessions' reach; `session` is what the launcher
//!   does around a session.

pub mod classify;
mod describe;
pub mod fsread;
pub mod gitcfg;
pub mod kinds;
pub mod report;
pub mod session;
pub mod store;
pub mod walk;

use classify::{Classified, Reader, Tag};
use kinds::Kind;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use walk::{Listing, Ty};

pub use classify::Scope;
pub use report::{Change, Finding, Report};
pub use store::{ReviewError, Store};

/// 128 bits of SHA-256, in hex: fingerprints are compared, not trusted as
/// content addresses.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Nanoseconds since the epoch: sessions a moment apart must still order.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// One path's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rec {
    pub ty: Ty,
    pub fp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
}

/// The state of a workspace (and the shared tool dirs) at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub workspace: PathBuf,
    pub shared: Vec<PathBuf>,
    /// Nanoseconds since the epoch.
    pub taken_ns: u64,
    /// False when the walk was cut short (then review says so).
    pub complete: bool,
    pub entries: BTreeMap<String, Rec>,
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
    walk::walk_into(&mut listing, workspace, "", walk::LIMITS);
    for dir in shared {
        walk::walk_into(&mut listing, dir, &classify::shared_prefix(dir), walk::LIMITS);
    }
    let reader = classify::RealReader::open(workspace, shared);
    let scope = Scope { workspace, shared };
    let classified = classify::classify(&listing, &reader, &scope);
    build(&listing, classified, &reader, &scope)
}

/// The snapshot of a classified listing. Items are fingerprinted by
/// contents and mode (a rewrite with the same bytes is no change), the
/// rest by metadata; git's data and shared dirs' non-code are left out.
pub fn build(listing: &Listing, mut c: Classified, reader: &dyn Reader, scope: &Scope) -> Current {
    let mut entries = BTreeMap::new();
    let mut runs = BTreeMap::new();
    let mut warnings = listing.problems.clone();
    for (key, e) in &listing.entries {
        // A directory counts only when it could not be entered; its
        // contents are entries of their own.
        let kind = match c.tags.get(key) {
            Some(Tag::Ignore) => continue,
            Some(Tag::Kind(Kind::Unreadable)) => Some(Kind::Unreadable),
            _ if e.ty == Ty::Dir => continue,
            Some(Tag::Kind(k)) => Some(*k),
            None if key.starts_with('/') => continue,
            None => None,
        };
        let mut fp = e.fp.clone();
        if let Some(k) = kind {
            if e.ty == Ty::File && !k.bulk() {
                let content = c.contents.entry(key.clone()).or_insert_with(|| reader.read(key).map(std::rc::Rc::from));
                match content {
                    Ok(bytes) => fp = digest(&[format!("c {:o} ", e.mode).as_bytes(), bytes].concat()),
                    Err(err) => warnings.push(format!("{key}: {err}")),
                }
            }
            let line = match k {
                Kind::SpecialFile => describe::special(e, c.expected.get(key).copied()),
                k => describe::runs(key, e, k, c.contents.get(key)),
            };
            if k == Kind::SpecialFile || k == Kind::Unreadable {
                warnings.push(format!("{key}: {line}"));
            }
            runs.insert(key.clone(), line);
        }
        entries.insert(key.clone(), Rec { ty: e.ty, fp, kind });
    }
    let snapshot = Snapshot {
        workspace: scope.workspace.to_path_buf(),
        shared: scope.shared.to_vec(),
        taken_ns: now_ns(),
        complete: listing.problems.is_empty(),
        entries,
    };
    Current { snapshot, runs, warnings }
}

#[cfg(test)]
mod tests;
