//! The questions the plan asks of the file system, behind a trait so the
//! plan stays a pure function: tests answer them from a table.

use crate::nofollow::{self, Entry};
#[cfg(test)]
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// The most of a workspace file the plan reads (git config files).
pub const READ_CAP: u64 = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
}

impl Kind {
    /// The kind of a file type (a symlink's is `Other`: callers that follow
    /// links pass the target's).
    pub fn of(t: std::fs::FileType) -> Kind {
        if t.is_dir() {
            Kind::Dir
        } else if t.is_file() {
            Kind::File
        } else if t.is_socket() {
            Kind::Socket
        } else if t.is_char_device() {
            Kind::CharDevice
        } else if t.is_block_device() {
            Kind::BlockDevice
        } else {
            Kind::Other
        }
    }
}

pub trait FsView {
    /// What is at `path` (symlinks followed), or None.
    fn kind(&self, path: &Path) -> Option<Kind>;
    /// The entries of a directory, sorted; empty when unreadable.
    fn children(&self, dir: &Path) -> Vec<PathBuf>;
    /// A small text file's contents, if readable.
    fn read_text(&self, path: &Path) -> Option<String>;
    /// `path` with symlinks in its directories resolved (the last component
    /// kept): bwrap creates mount points inside the new root, where an
    /// absolute symlink such as /var/run -> /run cannot be followed.
    fn resolve_parent(&self, path: &Path) -> PathBuf;
    /// Whether `path` itself is a symbolic link.
    fn is_symlink(&self, path: &Path) -> bool;
    /// `path` with every symlink resolved; None when it does not exist.
    fn resolve(&self, path: &Path) -> Option<PathBuf>;
    /// What is at `rel` under `root`, nothing on the way followed (for
    /// trees a session could have written: the workspace).
    fn entry_beneath(&self, root: &Path, rel: &Path) -> Entry;
    /// The regular file `rel` under `root` as text, reached the same way,
    /// at most `READ_CAP` bytes; None for anything else.
    fn read_beneath(&self, root: &Path, rel: &Path) -> Option<String>;
    /// The entries of the directory `rel` under `root` (reached the same
    /// way), sorted by name, each as what it is.
    fn list_beneath(&self, root: &Path, rel: &Path) -> Vec<(OsString, Entry)>;
}

/// The real file system.
pub struct RealFs;

/// `path` with every symbolic link resolved, as `canonicalize` gives it,
/// in two calls: the object opened (`O_PATH`, following links), then the
/// kernel's name for it read back. A C library's `realpath` reads every
/// component as a possible link instead, which a launch asks for dozens
/// of times. Without /proc (or for a name the kernel marks as gone), the
/// slow way.
pub fn real_path(path: &Path) -> std::io::Result<PathBuf> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let flags = nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_CLOEXEC;
    let fd = nix::fcntl::open(path, flags, nix::sys::stat::Mode::empty())?;
    // SAFETY: a new descriptor owned only here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    match std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
        Ok(p) if p.is_absolute() && !p.as_os_str().as_encoded_bytes().ends_with(b" (deleted)") => Ok(p),
        _ => std::fs::canonicalize(path),
    }
}

impl FsView for RealFs {
    fn kind(&self, path: &Path) -> Option<Kind> {
        Some(Kind::of(std::fs::metadata(path).ok()?.file_type()))
    }

    fn children(&self, dir: &Path) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        v.sort();
        v
    }

    /// Workspace files may be hostile: a FIFO or a link to /dev/zero is not
    /// read (no blocking, no endless read), nor anything over the cap.
    fn read_text(&self, path: &Path) -> Option<String> {
        let bytes = nofollow::read_regular(path, nofollow::READ_CAP).ok()?;
        String::from_utf8(bytes).ok()
    }

    fn is_symlink(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    }

    fn resolve(&self, path: &Path) -> Option<PathBuf> {
        real_path(path).ok()
    }

    fn resolve_parent(&self, path: &Path) -> PathBuf {
        match (path.parent().and_then(|p| real_path(p).ok()), path.file_name()) {
            (Some(parent), Some(name)) => parent.join(name),
            _ => path.to_path_buf(),
        }
    }

    fn entry_beneath(&self, root: &Path, rel: &Path) -> Entry {
        nofollow::entry(root, rel)
    }

    fn read_beneath(&self, root: &Path, rel: &Path) -> Option<String> {
        match nofollow::read_beneath(root, rel, READ_CAP) {
            Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
            Err(nofollow::ReadError::Io(_)) => None,
            Err(e) => {
                tracing::warn!("not reading {}: {e}", root.join(rel).display());
                None
            }
        }
    }

    fn list_beneath(&self, root: &Path, rel: &Path) -> Vec<(OsString, Entry)> {
        nofollow::list(root, rel)
    }
}

#[cfg(test)]
/// A file system given as a table, for tests.
#[derive(Debug, Default, Clone)]
pub(crate) struct TableFs {
    pub entries: BTreeMap<PathBuf, Kind>,
    pub texts: BTreeMap<PathBuf, String>,
    /// Directory symlinks: link -> target.
    pub links: BTreeMap<PathBuf, PathBuf>,
}

#[cfg(test)]
impl TableFs {
    pub(crate) fn with(mut self, path: &str, kind: Kind) -> Self {
        // Parents exist as directories.
        let mut p = Path::new(path);
        while let Some(parent) = p.parent() {
            self.entries.entry(parent.to_path_buf()).or_insert(Kind::Dir);
            p = parent;
        }
        self.entries.insert(PathBuf::from(path), kind);
        self
    }

    /// A directory symlink (`kind` answers through it, as the real file
    /// system follows links).
    pub(crate) fn with_link(mut self, link: &str, target: &str) -> Self {
        let under: Vec<(PathBuf, Kind)> = self.entries.iter().filter_map(|(p, k)| p.strip_prefix(target).ok().map(|r| (Path::new(link).join(r), *k))).collect();
        self.entries.extend(under);
        self.links.insert(link.into(), target.into());
        self
    }

    /// A symbolic link of any kind, seen (not followed) by the `_beneath`
    /// questions.
    pub(crate) fn with_symlink(mut self, link: &str, target: &str) -> Self {
        if let Some(parent) = Path::new(link).parent() {
            self = self.with(&parent.display().to_string(), Kind::Dir);
        }
        self.links.insert(link.into(), target.into());
        self
    }

    pub(crate) fn with_text(mut self, path: &str, text: &str) -> Self {
        self = self.with(path, Kind::File);
        self.texts.insert(PathBuf::from(path), text.to_string());
        self
    }
}

#[cfg(test)]
impl FsView for TableFs {
    fn kind(&self, path: &Path) -> Option<Kind> {
        self.entries.get(path).copied()
    }

    fn children(&self, dir: &Path) -> Vec<PathBuf> {
        self.entries.keys().filter(|p| p.parent() == Some(dir) && p.as_path() != dir).cloned().collect()
    }

    fn read_text(&self, path: &Path) -> Option<String> {
        self.texts.get(path).cloned()
    }

    fn is_symlink(&self, path: &Path) -> bool {
        self.links.contains_key(path)
    }

    fn resolve(&self, path: &Path) -> Option<PathBuf> {
        let mut p = path.to_path_buf();
        for _ in 0..8 {
            match self.links.iter().find(|(l, _)| p.starts_with(l)) {
                Some((l, t)) => {
                    let rest = p.strip_prefix(l).unwrap_or(Path::new("")).to_path_buf();
                    p = if rest.as_os_str().is_empty() { t.clone() } else { t.join(rest) };
                }
                None => break,
            }
        }
        self.entries.contains_key(&p).then_some(p)
    }

    fn resolve_parent(&self, path: &Path) -> PathBuf {
        for (link, target) in &self.links {
            if let Ok(rest) = path.strip_prefix(link) {
                return target.join(rest);
            }
        }
        path.to_path_buf()
    }

    fn entry_beneath(&self, root: &Path, rel: &Path) -> Entry {
        let mut cur = root.to_path_buf();
        let mut done = PathBuf::new();
        let parts: Vec<_> = rel.components().collect();
        for (i, c) in parts.iter().enumerate() {
            cur.push(c);
            done.push(c);
            let here = match (self.links.get(&cur), self.entries.get(&cur)) {
                (Some(t), _) => Entry::Symlink(t.clone()),
                (None, Some(k)) => table_entry(*k),
                (None, None) => return Entry::Missing,
            };
            if i + 1 == parts.len() {
                return here;
            }
            if here != Entry::Dir {
                return Entry::BadParent(done, Box::new(here));
            }
        }
        Entry::Dir
    }

    fn read_beneath(&self, root: &Path, rel: &Path) -> Option<String> {
        (self.entry_beneath(root, rel) == Entry::File).then(|| self.texts.get(&root.join(rel)).cloned()).flatten()
    }

    fn list_beneath(&self, root: &Path, rel: &Path) -> Vec<(OsString, Entry)> {
        if self.entry_beneath(root, rel) != Entry::Dir {
            return Vec::new();
        }
        let dir = root.join(rel);
        let mut out: Vec<(OsString, Entry)> = self
            .entries
            .iter()
            .filter(|(p, _)| p.parent() == Some(&dir) && !self.links.keys().any(|l| p.starts_with(l)))
            .map(|(p, k)| (p.file_name().unwrap_or_default().to_os_string(), table_entry(*k)))
            .chain(
                self.links
                    .iter()
                    .filter(|(l, _)| l.parent() == Some(&dir))
                    .map(|(l, t)| (l.file_name().unwrap_or_default().to_os_string(), Entry::Symlink(t.clone()))),
            )
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

#[cfg(test)]
fn table_entry(k: Kind) -> Entry {
    match k {
        Kind::Dir => Entry::Dir,
        Kind::File => Entry::File,
        Kind::Socket => Entry::Special("a socket"),
        Kind::CharDevice => Entry::Special("a character device"),
        Kind::BlockDevice => Entry::Special("a block device"),
        Kind::Other => Entry::Special("a FIFO"),
    }
}
