//! The questions the plan asks of the file system, behind a trait so the
//! plan stays a pure function: tests answer them from a table.

use std::collections::BTreeMap;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Socket,
    CharDevice,
    BlockDevice,
    Other,
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
}

/// The real file system.
pub struct RealFs;

impl FsView for RealFs {
    fn kind(&self, path: &Path) -> Option<Kind> {
        let t = std::fs::metadata(path).ok()?.file_type();
        Some(if t.is_dir() {
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
        })
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
        let bytes = crate::review::fsread::read_regular(path, crate::review::fsread::READ_CAP).ok()?;
        String::from_utf8(bytes).ok()
    }

    fn is_symlink(&self, path: &Path) -> bool {
        std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    }

    fn resolve_parent(&self, path: &Path) -> PathBuf {
        match (path.parent().and_then(|p| std::fs::canonicalize(p).ok()), path.file_name()) {
            (Some(parent), Some(name)) => parent.join(name),
            _ => path.to_path_buf(),
        }
    }
}

/// A file system given as a table, for tests.
#[derive(Debug, Default, Clone)]
pub struct TableFs {
    pub entries: BTreeMap<PathBuf, Kind>,
    pub texts: BTreeMap<PathBuf, String>,
    /// Directory symlinks: link -> target.
    pub links: BTreeMap<PathBuf, PathBuf>,
}

impl TableFs {
    pub fn with(mut self, path: &str, kind: Kind) -> Self {
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
    pub fn with_link(mut self, link: &str, target: &str) -> Self {
        let under: Vec<(PathBuf, Kind)> = self
            .entries
            .iter()
            .filter_map(|(p, k)| p.strip_prefix(target).ok().map(|r| (Path::new(link).join(r), *k)))
            .collect();
        self.entries.extend(under);
        self.links.insert(link.into(), target.into());
        self
    }

    pub fn with_text(mut self, path: &str, text: &str) -> Self {
        self = self.with(path, Kind::File);
        self.texts.insert(PathBuf::from(path), text.to_string());
        self
    }
}

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

    fn resolve_parent(&self, path: &Path) -> PathBuf {
        for (link, target) in &self.links {
            if let Ok(rest) = path.strip_prefix(link) {
                return target.join(rest);
            }
        }
        path.to_path_buf()
    }
}
