//! The listing of a tree: every entry with its type and a fingerprint of
//! its metadata (size, inode, mtime and ctime: a session can set mtime but
//! not ctime, so any write, chmod or replacement changes it). Walked
//! without following symlinks, descriptor by descriptor (`fsread`), within
//! limits: a hostile tree (too deep, too many entries, unreadable
//! directories) is cut short and says so.

use super::fsread;
use nix::dir::Dir;
use nix::sys::stat::{FileStat, SFlag};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
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

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub ty: Ty,
    /// Permission bits.
    pub mode: u32,
    pub size: u64,
    /// Of the metadata (and a symlink's target).
    pub fp: String,
    pub target: Option<String>,
    /// Why a directory could not be entered.
    pub unreadable: Option<String>,
}

impl Entry {
    pub fn executable(&self) -> bool {
        self.mode & 0o111 != 0
    }
}

/// Where a walk stops: deeper than any real project, bigger than any real
/// workspace; past them the listing is marked incomplete.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_entries: usize,
    pub max_depth: usize,
}

pub const LIMITS: Limits = Limits { max_entries: 1_000_000, max_depth: 128 };

#[derive(Debug, Default, Clone)]
pub struct Listing {
    /// Keyed by path: relative to the workspace, or absolute for the shared
    /// tool dirs (`key` escapes names that are not UTF-8).
    pub entries: BTreeMap<String, Entry>,
    /// What cut the walk short.
    pub problems: Vec<String>,
}

/// A file name as part of a key: UTF-8 kept, other bytes as `\xNN` and a
/// backslash doubled, so two names never share a key.
pub fn key_part(name: &[u8]) -> String {
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
pub fn key_bytes(key: &str) -> Vec<u8> {
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

pub fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

fn fingerprint(st: &FileStat, target: Option<&str>) -> String {
    let text = format!(
        "{:o} {} {} {}.{} {}.{} {}",
        st.st_mode, st.st_size, st.st_ino, st.st_mtime, st.st_mtime_nsec, st.st_ctime, st.st_ctime_nsec,
        target.unwrap_or("")
    );
    super::digest(text.as_bytes())
}

struct Walker<'a> {
    out: &'a mut Listing,
    limits: Limits,
    full: bool,
}

/// Adds the tree at `root` to `out`, its keys under `prefix` ("" for the
/// workspace). A missing root adds nothing.
pub fn walk_into(out: &mut Listing, root: &Path, prefix: &str, limits: Limits) {
    let fd = match fsread::open_root(root) {
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

/// Git's object store holds only content-addressed data, often a lot of
/// it: of `objects` only `info` (alternates) is read, `lfs` not at all.
#[derive(Clone, Copy)]
enum Prune {
    None,
    OnlyInfo,
}

fn names(fd: OwnedFd) -> nix::Result<(Vec<Vec<u8>>, RawFd, Dir)> {
    let raw = fd.as_raw_fd();
    let mut dir = Dir::from_fd(fd.into_raw_fd())?;
    let mut v: Vec<Vec<u8>> = dir
        .iter()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_bytes().to_vec())
        .filter(|n| n != b"." && n != b"..")
        .collect();
    v.sort();
    Ok((v, raw, dir))
}

impl Walker<'_> {
    fn dir(&mut self, fd: OwnedFd, prefix: &str, depth: usize, prune: Prune) {
        let (names, raw, _held) = match names(fd) {
            Ok(x) => x,
            Err(e) => return self.unreadable(prefix, &e.desc().to_lowercase()),
        };
        let gitlike = prefix == ".git"
            || prefix.ends_with("/.git")
            || [b"HEAD".as_slice(), b"objects", b"refs"].iter().all(|n| names.iter().any(|x| x == n));
        for name in names {
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
            let next = match (gitlike, name.as_slice()) {
                (true, b"objects") => Some(Prune::OnlyInfo),
                (true, b"lfs") => None,
                _ => Some(Prune::None),
            };
            self.entry(raw, &name, prefix, depth, next);
        }
    }

    fn entry(&mut self, dir: RawFd, name: &[u8], prefix: &str, depth: usize, prune: Option<Prune>) {
        let os = OsStr::from_bytes(name);
        let Ok(st) = fsread::stat_at(dir, os) else { return };
        let ty = Ty::of(st.st_mode);
        let target = (ty == Ty::Symlink)
            .then(|| nix::fcntl::readlinkat(Some(dir), os).ok().map(|t| key_part(t.as_bytes())))
            .flatten();
        let key = join(prefix, &key_part(name));
        let entry = Entry {
            ty,
            mode: st.st_mode & 0o7777,
            size: u64::try_from(st.st_size).unwrap_or(0),
            fp: fingerprint(&st, target.as_deref()),
            target,
            unreadable: None,
        };
        self.out.entries.insert(key.clone(), entry);
        let Some(prune) = prune.filter(|_| ty == Ty::Dir) else { return };
        if depth + 1 >= self.limits.max_depth {
            return self.unreadable(&key, &format!("deeper than {} levels", self.limits.max_depth));
        }
        match fsread::open_dir_at(dir, os) {
            Ok(fd) => self.dir(fd, &key, depth + 1, prune),
            Err(e) => self.unreadable(&key, &e.desc().to_lowercase()),
        }
    }

    fn unreadable(&mut self, key: &str, why: &str) {
        if let Some(e) = self.out.entries.get_mut(key) {
            e.unreadable = Some(why.to_string());
        } else {
            self.out.problems.push(format!("{key}: cannot be read ({why}); nothing in it was reviewed"));
        }
    }
}
