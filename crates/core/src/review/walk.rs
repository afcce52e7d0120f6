//! The listing of a tree: every entry with its type and a fingerprint of
//! its metadata (size, inode, mtime and ctime: a session can set mtime but
//! not ctime, so any write, chmod or replacement changes it). Walked
//! without following symlinks, descriptor by descriptor (`crate::nofollow`), within
//! limits: a hostile tree (too deep, too many entries, unreadable
//! directories) is cut short and says so.

use crate::nofollow;
use nix::dir::Dir;
use nix::sys::stat::{FileStat, SFlag};
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ty {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    CharDev,
    BlockDev,
}

impl Ty {
    fn of(mode: u32) -> Ty {
        match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
            SFlag::S_IFDIR => Ty::Dir,
            SFlag::S_IFLNK => Ty::Symlink,
            SFlag::S_IFIFO => Ty::Fifo,
            SFlag::S_IFSOCK => Ty::Socket,
            SFlag::S_IFCHR => Ty::CharDev,
            SFlag::S_IFBLK => Ty::BlockDev,
            _ => Ty::File,
        }
    }

    pub const ALL: [Ty; 7] = [Ty::File, Ty::Dir, Ty::Symlink, Ty::Fifo, Ty::Socket, Ty::CharDev, Ty::BlockDev];

    /// Neither a regular file nor a directory: never read, never entered.
    pub fn special(self) -> bool {
        !matches!(self, Ty::File | Ty::Dir)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Ty::File => "a regular file",
            Ty::Dir => "a directory",
            Ty::Symlink => "a symbolic link",
            Ty::Fifo => "a FIFO",
            Ty::Socket => "a socket",
            Ty::CharDev => "a character device",
            Ty::BlockDev => "a block device",
        }
    }
}

/// The metadata a fingerprint is made of: any write, chmod, rename over or
/// replacement changes the change time (ctime), which no session can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meta {
    /// `st_mode`, type bits included.
    pub mode: u32,
    pub ino: u64,
    pub size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub ty: Ty,
    pub meta: Meta,
    pub target: Option<String>,
    /// Why a directory could not be entered.
    pub unreadable: Option<String>,
    /// A file capability (`security.capability`), looked for on files that
    /// could run: executable or set-id ones.
    pub(crate) file_caps: bool,
}

impl Entry {
    /// Permission bits.
    pub fn mode(&self) -> u32 {
        self.meta.mode & 0o7777
    }

    pub fn executable(&self) -> bool {
        self.mode() & 0o111 != 0
    }

    /// A file that runs with ids or capabilities other than its caller's.
    pub(crate) fn set_id(&self) -> bool {
        self.ty != Ty::Dir && (self.mode() & 0o6000 != 0 || self.file_caps)
    }
}

/// Whether `name` in `dir` carries a file capability (not following it).
fn has_file_caps(dir: RawFd, name: &[u8]) -> bool {
    let mut path = format!("/proc/self/fd/{dir}/").into_bytes();
    path.extend_from_slice(name);
    let Ok(c) = std::ffi::CString::new(path) else { return false };
    // SAFETY: with a null buffer and size 0, lgetxattr only reports the
    // value's size; it reads the two NUL-terminated strings.
    unsafe { libc::lgetxattr(c.as_ptr(), c"security.capability".as_ptr(), std::ptr::null_mut(), 0) > 0 }
}

/// Where a walk stops: deeper than any real project, bigger than any real
/// workspace; past them the listing is marked incomplete.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(crate) max_entries: usize,
    pub(crate) max_depth: usize,
}

pub(super) const LIMITS: Limits = Limits { max_entries: 1_000_000, max_depth: 128 };

/// Keys in tree order: a directory, then everything under it (`/` sorts
/// before any other byte), so a subtree is one contiguous run.
pub(super) fn key_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let m = |c: u8| if c == b'/' { 0 } else { c };
    a.bytes().map(m).cmp(b.bytes().map(m))
}

#[derive(Debug, Default, Clone)]
pub struct Listing {
    /// In tree order (`key_cmp`), keyed by path: relative to the workspace,
    /// or absolute for the shared tool dirs (`key_part` escapes names that
    /// are not UTF-8).
    pub entries: Vec<(String, Entry)>,
    /// What cut the walk short.
    pub problems: Vec<String>,
}

impl Listing {
    #[cfg(test)]
    /// From entries in any order (tests).
    pub(crate) fn from_unsorted(mut entries: Vec<(String, Entry)>) -> Listing {
        entries.sort_by(|a, b| key_cmp(&a.0, &b.0));
        Listing { entries, problems: Vec::new() }
    }

    pub fn index(&self, key: &str) -> Option<usize> {
        self.entries.binary_search_by(|(k, _)| key_cmp(k, key)).ok()
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.index(key).map(|i| &self.entries[i].1)
    }

    /// The indices of everything under the directory `dir` ("" for the
    /// workspace root).
    pub fn under(&self, dir: &str) -> std::ops::Range<usize> {
        if dir.is_empty() {
            // Absolute keys (shared dirs) sort first; the workspace follows.
            let start = self.entries.partition_point(|(k, _)| k.starts_with('/'));
            return start..self.entries.len();
        }
        let prefix = format!("{dir}/");
        let start = self.entries.partition_point(|(k, _)| key_cmp(k, &prefix).is_lt());
        let len = self.entries[start..].iter().take_while(|(k, _)| k.starts_with(&prefix)).count();
        start..start + len
    }

    /// Puts entries from several walks in tree order (a no-op when the
    /// walks came in order).
    pub fn finish(&mut self) {
        if !self.entries.windows(2).all(|w| key_cmp(&w[0].0, &w[1].0).is_lt()) {
            self.entries.sort_by(|a, b| key_cmp(&a.0, &b.0));
            self.entries.dedup_by(|a, b| a.0 == b.0);
        }
    }
}

/// A file name as part of a key: UTF-8 kept, other bytes as `\xNN` and a
/// backslash doubled, so two names never share a key.
pub(super) fn key_part(name: &[u8]) -> String {
    let mut s = String::with_capacity(name.len());
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                s.push('\\');
            }
            s.push(c);
        }
        for b in chunk.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// The bytes of a key again (inverse of `key_part`).
pub(super) fn key_bytes(key: &str) -> Vec<u8> {
    let b = key.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') && i + 4 <= b.len() {
            out.push(u8::from_str_radix(&key[i + 2..i + 4], 16).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

pub(super) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

fn meta(st: &FileStat) -> Meta {
    Meta {
        mode: st.st_mode,
        ino: st.st_ino,
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime_ns: st.st_mtime.saturating_mul(1_000_000_000).saturating_add(st.st_mtime_nsec),
        ctime_ns: st.st_ctime.saturating_mul(1_000_000_000).saturating_add(st.st_ctime_nsec),
    }
}

struct Walker<'a> {
    out: &'a mut Listing,
    limits: Limits,
    full: bool,
}

/// Adds the tree at `root` to `out`, its keys under `prefix` ("" for the
/// workspace). A missing root adds nothing.
pub(super) fn walk_into(out: &mut Listing, root: &Path, prefix: &str, limits: Limits) {
    let fd = match nofollow::open_dir(root) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::ENOENT) => return,
        Err(e) => {
            out.problems.push(format!("{}: cannot be read ({e}); nothing in it was reviewed", root.display()));
            return;
        }
    };
    let mut w = Walker { out, limits, full: false };
    w.dir(fd, prefix, 0, Prune::None);
}

/// Adds the single file at `root` to `out` under `key`: a symlink there
/// is followed (the root is chosen by the user, as for a directory's);
/// a missing one adds nothing.
pub(super) fn file_into(out: &mut Listing, root: &Path, key: &str) {
    let Ok(real) = std::fs::canonicalize(root) else { return };
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else { return };
    let Ok(dir) = nofollow::open_dir(parent) else { return };
    if let Ok(st) = nofollow::stat_at(dir.as_raw_fd(), name) {
        let ty = Ty::of(st.st_mode);
        let file_caps = ty == Ty::File && st.st_mode & 0o6111 != 0 && has_file_caps(dir.as_raw_fd(), name.as_bytes());
        out.entries.push((key.to_string(), Entry { ty, meta: meta(&st), target: None, unreadable: None, file_caps }));
    }
}

/// Git's object store holds only content-addressed data, often a lot of
/// it: of `objects` only `info` (alternates) is read, `lfs` not at all.
#[derive(Clone, Copy)]
enum Prune {
    None,
    OnlyInfo,
}

/// A name as a key part, with its raw bytes where they differ (names that
/// are not UTF-8 or hold a backslash).
type Name = (Option<Vec<u8>>, String);

/// A directory's names in tree order (the open `Dir` keeps `RawFd` valid).
fn names(fd: OwnedFd) -> nix::Result<(Vec<Name>, RawFd, Dir)> {
    let raw = fd.as_raw_fd();
    let mut dir = Dir::from_fd(fd.into_raw_fd())?;
    let mut v: Vec<Name> = dir
        .iter()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().to_bytes();
            if n == b"." || n == b".." {
                return None;
            }
            let k = key_part(n);
            Some(((k.as_bytes() != n).then(|| n.to_vec()), k))
        })
        .collect();
    v.sort_by(|a, b| a.1.cmp(&b.1));
    Ok((v, raw, dir))
}

impl Walker<'_> {
    fn dir(&mut self, fd: OwnedFd, prefix: &str, depth: usize, prune: Prune) {
        let (names, raw, _held) = match names(fd) {
            Ok(x) => x,
            Err(e) => return self.unreadable(prefix, &e.desc().to_lowercase()),
        };
        let gitlike = prefix == ".git" || prefix.ends_with("/.git") || ["HEAD", "objects", "refs"].iter().all(|n| names.iter().any(|x| x.1 == *n));
        for (raw_name, part) in names {
            let name = raw_name.as_deref().unwrap_or(part.as_bytes());
            if matches!(prune, Prune::OnlyInfo) && name != b"info" {
                continue;
            }
            if self.out.entries.len() >= self.limits.max_entries {
                if !self.full {
                    self.full = true;
                    self.out.problems.push(format!("more than {} entries: the walk stopped there; what lies beyond was not reviewed", self.limits.max_entries));
                }
                return;
            }
            let next = match (gitlike, name) {
                (true, b"objects") => Some(Prune::OnlyInfo),
                (true, b"lfs") => None,
                _ => Some(Prune::None),
            };
            let key = join(prefix, &part);
            self.entry(raw, name, key, depth, next);
        }
    }

    fn entry(&mut self, dir: RawFd, name: &[u8], key: String, depth: usize, prune: Option<Prune>) {
        let os = OsStr::from_bytes(name);
        let Ok(st) = nofollow::stat_at(dir, os) else { return };
        let ty = Ty::of(st.st_mode);
        let target = (ty == Ty::Symlink).then(|| nix::fcntl::readlinkat(Some(dir), os).ok().map(|t| key_part(t.as_bytes()))).flatten();
        let file_caps = ty == Ty::File && st.st_mode & 0o6111 != 0 && has_file_caps(dir, name);
        let entry = Entry { ty, meta: meta(&st), target, unreadable: None, file_caps };
        self.out.entries.push((key, entry));
        let Some(prune) = prune.filter(|_| ty == Ty::Dir) else { return };
        let at = self.out.entries.len() - 1;
        if depth + 1 >= self.limits.max_depth {
            self.out.entries[at].1.unreadable = Some(format!("deeper than {} levels", self.limits.max_depth));
            return;
        }
        let key = self.out.entries[at].0.clone();
        match nofollow::open_dir_at(dir, os) {
            Ok(fd) => self.dir(fd, &key, depth + 1, prune),
            Err(e) => self.out.entries[at].1.unreadable = Some(e.desc().to_lowercase()),
        }
    }

    /// A directory that could not be listed after it was opened.
    fn unreadable(&mut self, key: &str, why: &str) {
        match self.out.entries.iter_mut().rev().find(|(k, _)| k == key) {
            Some((_, e)) => e.unreadable = Some(why.to_string()),
            None => self.out.problems.push(format!("{key}: cannot be read ({why}); nothing in it was reviewed")),
        }
    }
}
