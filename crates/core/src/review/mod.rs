//! What a session leaves behind. Review answers one question: what changed,
//! since the state the user last acknowledged, that will run code outside
//! the sandbox or that a diff will not show?
//!
//! - `walk` lists the workspace, the tool dirs shared with sessions and
//!   the agents' state in the home (`~/.claude`, `~/.claude.json`,
//!   `~/.codex`, `~/.pi`, `~/.agents/skills`: bound into sessions, read
//!   by the vendor binaries wherever they start next) without following
//!   symlinks or blocking (`crate::nofollow`);
//! - `classify` gives each path its kind (`kinds`: one table, most
//!   dangerous first) by place and content;
//! - a `Snapshot` keeps every path's fingerprint (of its contents for the
//!   places that run code, of its metadata for the rest; agent settings by
//!   what in them runs commands, `settings`);
//! - `report` compares two snapshots; `store` keeps them (in `codec`'s
//!   compact form) outside the workspace, out of sessions' reach;
//!   `session` is what the launcher does around a session.

mod classify;
mod codec;
mod describe;
mod gitcfg;
pub mod kinds;
pub mod report;
pub mod session;
mod settings;
pub mod store;
mod walk;

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
fn digest16(bytes: &[u8]) -> [u8; 16] {
    let mut out = [0; 16];
    out.copy_from_slice(&Sha256::digest(bytes)[..16]);
    out
}

/// Nanoseconds since the epoch: sessions a moment apart must still order.
pub(crate) fn now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}

/// What a path's state is judged by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fp {
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
    pub(crate) fp: Fp,
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
    /// What each agent-settings file runs or allows, by path (`settings`).
    pub commands: BTreeMap<String, Vec<settings::Item>>,
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

/// The trees review walks besides the workspace.
#[derive(Debug, Clone, Copy, Default)]
pub struct Roots<'a> {
    /// The user's tool dirs sessions may write.
    pub shared: &'a [PathBuf],
    /// The home whose agents' state is reviewed (`session::agent_roots`).
    pub home: Option<&'a Path>,
}

/// Walks, classifies and fingerprints the workspace, the `shared` dirs and
/// the agents' state in `home`.
pub fn take(workspace: &Path, roots: Roots) -> Current {
    let shared = roots.shared;
    let agents = roots.home.map(session::agent_roots).unwrap_or_default();
    let mut listing = Listing::default();
    let mut dirs: Vec<(String, &PathBuf)> = shared.iter().chain(&agents).map(|d| (classify::shared_prefix(d), d)).collect();
    dirs.sort_by(|a, b| walk::key_cmp(&a.0, &b.0));
    for (prefix, dir) in &dirs {
        if dir.is_file() {
            walk::file_into(&mut listing, dir, prefix);
        } else {
            walk::walk_into(&mut listing, dir, prefix, walk::LIMITS);
        }
    }
    walk::walk_into(&mut listing, workspace, "", walk::LIMITS);
    listing.finish();
    let reader = classify::RealReader::open(workspace, &[shared, &agents].concat());
    let scope = Scope { workspace, shared, agents: &agents, home: roots.home };
    let classified = classify::classify(&listing, &reader, &scope);
    build(listing, classified, &reader, &scope)
}

/// The snapshot of a classified listing. Git's data and shared dirs'
/// non-code are left out; a directory counts only when it could not be
/// entered (its contents are entries of their own).
pub fn build(listing: Listing, mut c: Classified, reader: &dyn Reader, scope: &Scope) -> Current {
    let mut entries = Vec::with_capacity(listing.entries.len());
    let mut runs = BTreeMap::new();
    let mut commands = BTreeMap::new();
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
            if e.ty == Ty::File && k == Kind::AgentSettings {
                // Agent settings: what runs commands in them (agents rewrite
                // their state files at every start), from a bigger cap.
                match c.contents.get(&key).cloned().unwrap_or_else(|| reader.read_capped(&key, settings::CAP).map(std::rc::Rc::from)) {
                    Ok(bytes) => {
                        let items = settings::extract(classify::name(&key), &bytes);
                        let whole = if key.starts_with('/') { serde_json::to_vec(&items).unwrap_or_default() } else { bytes.to_vec() };
                        fp = Fp::Content(digest16(&[format!("{:o} ", e.mode()).as_bytes(), &whole].concat()));
                        commands.insert(key.clone(), items);
                    }
                    Err(err) => warnings.push(format!("{}: {err}", describe::shown(&key))),
                }
            } else if e.ty == Ty::File && !k.by_metadata() {
                let content = c.contents.entry(key.clone()).or_insert_with(|| reader.read(&key).map(std::rc::Rc::from));
                match content {
                    Ok(bytes) => fp = Fp::Content(digest16(&[format!("{:o} ", e.mode()).as_bytes(), bytes].concat())),
                    Err(err) => warnings.push(format!("{}: {err}", describe::shown(&key))),
                }
            } else if e.ty == Ty::File && k == Kind::Executable && e.meta.size <= describe::SHOWN_SCRIPT {
                // Only to show a script's first line; judged by metadata.
                c.contents.entry(key.clone()).or_insert_with(|| reader.read(&key).map(std::rc::Rc::from));
            }
            let line = match k {
                k if k.bulk() && e.ty == Ty::File => String::new(),
                Kind::SpecialFile => describe::special(&e, c.expected.get(&key).copied()),
                Kind::AgentSettings if commands.contains_key(&key) => describe::items(&commands[&key]),
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
    let snapshot = Snapshot { workspace: scope.workspace.to_path_buf(), shared: scope.shared.to_vec(), taken_ns: now_ns(), complete, entries, commands };
    Current { snapshot, runs, warnings }
}

#[cfg(test)]
mod tests;
