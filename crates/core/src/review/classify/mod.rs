//! From a listing to the kind of every path that runs code later. Pure but
//! for the `Reader` (tests answer from a table): place and name rules,
//! then git dirs found by content and pointers, then what the files of a
//! kind name (hooks' scripts, includes, compose files...), then the
//! override that makes any symlink or special file in such a place the
//! most dangerous kind.

mod agents;
mod git;
pub(super) mod places;
mod refs;

use super::kinds::Kind;
use super::walk::{self, Entry, Listing, Ty};
use crate::nofollow::{self, ReadError, READ_CAP};
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// Reads a file of the listing by key.
pub trait Reader {
    fn read(&self, key: &str) -> Result<Vec<u8>, ReadError>;

    /// With another cap than `READ_CAP` (agents' state files grow).
    fn read_capped(&self, key: &str, cap: u64) -> Result<Vec<u8>, ReadError> {
        let _ = cap;
        self.read(key)
    }
}

/// The real file system: each read descends from the walk's roots, one
/// no-follow `openat` per component (`crate::nofollow`); a root that is a
/// file is read where it leads.
pub(super) struct RealReader {
    roots: Vec<(String, OwnedFd)>,
    files: Vec<(String, PathBuf)>,
}

impl RealReader {
    pub(super) fn open(workspace: &Path, roots: &[PathBuf]) -> RealReader {
        let mut out = RealReader { roots: Vec::new(), files: Vec::new() };
        for (prefix, path) in std::iter::once((String::new(), workspace)).chain(roots.iter().map(|p| (shared_prefix(p), p.as_path()))) {
            if path.is_file() {
                if let Ok(real) = std::fs::canonicalize(path) {
                    out.files.push((prefix, real));
                }
            } else if let Ok(fd) = nofollow::open_dir(path) {
                out.roots.push((prefix, fd));
            }
        }
        out
    }
}

impl Reader for RealReader {
    fn read(&self, key: &str) -> Result<Vec<u8>, ReadError> {
        self.read_capped(key, READ_CAP)
    }

    fn read_capped(&self, key: &str, cap: u64) -> Result<Vec<u8>, ReadError> {
        if let Some((_, real)) = self.files.iter().find(|(k, _)| k == key) {
            return nofollow::read_regular(real, cap);
        }
        // The innermost root holding `key`.
        let found = self
            .roots
            .iter()
            .filter_map(|(prefix, fd)| {
                if prefix.is_empty() {
                    return (!key.starts_with('/')).then_some((0, key, fd));
                }
                key.strip_prefix(prefix.as_str())?.strip_prefix('/').map(|rest| (prefix.len(), rest, fd))
            })
            .max_by_key(|(len, _, _)| *len);
        let (_, rel, fd) = found.ok_or(ReadError::NotRegular("outside the reviewed trees"))?;
        nofollow::read_rel(fd.as_raw_fd(), &walk::key_bytes(rel), cap)
    }
}

/// A shared dir's keys start with its absolute path.
pub(super) fn shared_prefix(p: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    walk::key_part(p.as_os_str().as_bytes()).trim_end_matches('/').to_string()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Kind(Kind),
    /// Left out of snapshots: git's own data (objects, refs, logs, the
    /// index: what git itself shows) and a shared tool dir's non-code.
    Ignore,
}

/// The outcome: each entry's tag (by index in the listing), and what was
/// read on the way.
#[derive(Debug, Default)]
pub struct Classified {
    pub tags: Vec<Option<Tag>>,
    /// For special files: the kind their place expected.
    pub expected: BTreeMap<String, Kind>,
    pub contents: HashMap<String, Result<Rc<[u8]>, ReadError>>,
}

/// The workspace (absolute, for paths written out in full), the shared
/// tool dirs, and the agents' state roots in `home`.
pub struct Scope<'a> {
    pub workspace: &'a Path,
    pub shared: &'a [PathBuf],
    pub agents: &'a [PathBuf],
    pub home: Option<&'a Path>,
}

pub(super) fn classify(listing: &Listing, reader: &dyn Reader, scope: &Scope) -> Classified {
    use std::os::unix::ffi::OsStrExt;
    let mut cx = Ctx {
        listing,
        reader,
        ws: walk::key_part(scope.workspace.as_os_str().as_bytes()).trim_end_matches('/').to_string(),
        out: Classified { tags: vec![None; listing.entries.len()], ..Classified::default() },
        git_dirs: Vec::new(),
    };
    cx.places();
    cx.git();
    cx.references();
    cx.specials();
    cx.executables();
    cx.shared(scope.shared);
    if let Some(home) = scope.home {
        cx.agents(scope.agents, home);
    }
    cx.out
}

/// The kind `listing` and `c` give `key` (the tests' question).
#[cfg(test)]
pub(super) fn kind_of(listing: &Listing, c: &Classified, key: &str) -> Option<Kind> {
    match c.tags[listing.index(key)?] {
        Some(Tag::Kind(k)) => Some(k),
        _ => None,
    }
}

/// A git dir and the work tree its hooks run in (None for a bare one).
#[derive(Debug, Clone)]
pub(super) struct GitDir {
    key: String,
    worktree: Option<String>,
}

pub(super) struct Ctx<'a> {
    listing: &'a Listing,
    reader: &'a dyn Reader,
    ws: String,
    out: Classified,
    git_dirs: Vec<GitDir>,
}

/// `key`'s directory ("" for a top-level entry).
pub(super) fn parent(key: &str) -> &str {
    key.rsplit_once('/').map_or("", |(p, _)| p)
}

pub(crate) fn name(key: &str) -> &str {
    key.rsplit_once('/').map_or(key, |(_, n)| n)
}

/// `rel` joined to the directory `base`, `.` and `..` resolved without
/// touching the file system; None when it climbs out of the workspace.
pub(super) fn resolve(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') { Vec::new() } else { base.split('/').filter(|p| !p.is_empty()).collect() };
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

impl Ctx<'_> {
    fn entry(&self, key: &str) -> Option<&Entry> {
        self.listing.get(key)
    }

    fn is(&self, key: &str, ty: Ty) -> bool {
        self.entry(key).is_some_and(|e| e.ty == ty)
    }

    fn tag_at(&self, i: usize) -> Option<Tag> {
        self.out.tags[i]
    }

    /// Sets `key`'s kind unless it already has a more dangerous one (or is
    /// git's data); true when it changed.
    fn tag(&mut self, key: &str, kind: Kind) -> bool {
        let Some(i) = self.listing.index(key) else { return false };
        match self.out.tags[i] {
            Some(Tag::Ignore) => false,
            Some(Tag::Kind(k)) if k <= kind => false,
            _ => {
                self.out.tags[i] = Some(Tag::Kind(kind));
                true
            }
        }
    }

    fn read(&mut self, key: &str) -> Result<Rc<[u8]>, ReadError> {
        if let Some(r) = self.out.contents.get(key) {
            return r.clone();
        }
        let r = self.reader.read(key).map(Rc::from);
        self.out.contents.insert(key.to_string(), r.clone());
        r
    }

    /// A text file's contents (None for binaries and what cannot be read).
    fn text(&mut self, key: &str) -> Option<String> {
        if !self.is(key, Ty::File) {
            return None;
        }
        let bytes = self.read(key).ok()?;
        if bytes.iter().take(8000).any(|b| *b == 0) {
            return None;
        }
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A path as written in a file (absolute, or relative to `base`), as a
    /// key of the workspace.
    fn key_of(&self, base: &str, written: &str) -> Option<String> {
        if let Some(abs) = written.strip_prefix('/') {
            let inside = abs.strip_prefix(self.ws.trim_start_matches('/'))?;
            return if inside.is_empty() || inside.starts_with('/') { resolve("", inside) } else { None };
        }
        resolve(base, written)
    }

    fn places(&mut self) {
        let facts = places::facts(self.listing);
        for i in self.listing.under("") {
            let (key, e) = &self.listing.entries[i];
            if let Some(k) = places::place(key, e.ty, &facts) {
                self.out.tags[i] = Some(Tag::Kind(k));
            }
        }
    }

    /// A symlink or special file where code of a kind is expected is the
    /// worst finding (it redirects or stalls whatever opens it), except the
    /// symlinks those places are made of: a venv's interpreter link and
    /// `node_modules/.bin` links. A directory review could not enter is
    /// next: nothing in it was reviewed.
    fn specials(&mut self) {
        for i in self.listing.under("") {
            let (key, e) = &self.listing.entries[i];
            if e.unreadable.is_some() {
                self.out.tags[i] = Some(Tag::Kind(Kind::Unreadable));
                continue;
            }
            if !e.ty.special() {
                continue;
            }
            let expected = match self.tag_at(i) {
                Some(Tag::Kind(k)) => (!k.bulk() || places::DIR_PLACES.contains(&name(key))) && !normal_link(key, e, k),
                Some(Tag::Ignore) => false,
                None => places::DIR_PLACES.contains(&name(key)),
            };
            if expected {
                if let Some(Tag::Kind(k)) = self.out.tags[i].replace(Tag::Kind(Kind::SpecialFile)) {
                    self.out.expected.insert(key.clone(), k);
                }
            }
        }
    }

    /// Anything else in the workspace that runs by name: an executable file
    /// or a symlink (a `bin/git` ahead on PATH shadows git). Git's own data
    /// and what has a kind already are left as they are. A set-id file (or
    /// one with a file capability) is that, whatever kind it had: the most
    /// dangerous, run with other ids by whoever starts it.
    fn executables(&mut self) {
        for i in self.listing.under("") {
            let e = &self.listing.entries[i].1;
            if e.set_id() {
                self.out.tags[i] = Some(Tag::Kind(Kind::SetId));
            } else if self.out.tags[i].is_none() && (e.ty == Ty::Symlink || (e.ty == Ty::File && e.executable())) {
                self.out.tags[i] = Some(Tag::Kind(Kind::Executable));
            }
        }
    }

    /// Tool dirs shared with sessions: only executable content and direnv
    /// approvals count (the rest is cache churn).
    fn shared(&mut self, roots: &[PathBuf]) {
        for root in roots {
            let prefix = shared_prefix(root);
            let allow = format!("{prefix}/direnv/allow/");
            for i in self.listing.under(&prefix) {
                let (key, e) = &self.listing.entries[i];
                let tag = if key.starts_with(&allow) && e.ty != Ty::Dir {
                    Tag::Kind(Kind::DirenvApproval)
                } else if e.unreadable.is_some() {
                    Tag::Kind(Kind::Unreadable)
                } else if e.ty == Ty::Symlink || (e.ty == Ty::File && (e.executable() || script_like(name(key)))) {
                    Tag::Kind(Kind::SharedExecutable)
                } else {
                    Tag::Ignore
                };
                self.out.tags[i] = Some(tag);
            }
        }
    }
}

/// The symlinks venvs and `node_modules/.bin` are made of: a venv's
/// `bin/python -> /usr/bin/python3.12` (or to a sibling), a bin link to a
/// package in the same `node_modules`. A link anywhere else in such a
/// place, or one that climbs out, is special.
fn normal_link(key: &str, e: &Entry, kind: Kind) -> bool {
    let Some(t) = e.target.as_deref().filter(|_| e.ty == Ty::Symlink) else { return false };
    match kind {
        Kind::VenvBin => name(parent(key)) == "bin" && (t.starts_with('/') || !t.contains('/')),
        Kind::PackageManager => name(parent(key)) == ".bin" && t.starts_with("../") && !t[3..].contains("../"),
        _ => false,
    }
}

/// Extensions of files that are run, sourced or loaded as code.
const SCRIPT_EXTS: &[&str] =
    &["sh", "bash", "zsh", "fish", "ksh", "py", "pth", "js", "cjs", "mjs", "ts", "cts", "mts", "rb", "pl", "php", "ps1", "lua", "mk", "so", "node"];

pub(super) fn script_like(name: &str) -> bool {
    name.rsplit_once('.').is_some_and(|(_, ext)| SCRIPT_EXTS.contains(&ext))
}
