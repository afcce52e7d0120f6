//! What the installer observes before it plans: the state of every path it
//! may touch (and their parents), the manifest of an earlier run, the
//! binaries to copy, the remote user, the package state and PATH. Gathering
//! is the only impure step before the plan; `Facts` is plain data that
//! tests build by hand.

use super::content;
use super::manifest::Manifest;
use super::packages::PackageFacts;
use super::users::User;
use crate::layout::{self, Layout};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files larger than this are hashed but their text is not kept.
const TEXT_LIMIT: u64 = 1 << 20;

/// One path's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Observed {
    Absent,
    Dir {
        mode: u32,
        uid: u32,
        gid: u32,
    },
    File {
        mode: u32,
        uid: u32,
        gid: u32,
        hash: String,
        text: Option<String>,
    },
    Link {
        target: PathBuf,
    },
    /// A socket, device or fifo: never touched.
    Other,
}

impl Observed {
    /// What it is, in words ("a {} is in the way").
    pub fn kind_name(&self) -> &'static str {
        match self {
            Observed::Absent => "nothing",
            Observed::Dir { .. } => "directory",
            Observed::File { .. } => "file",
            Observed::Link { .. } => "symbolic link",
            Observed::Other => "special file",
        }
    }
}

/// A binary to install: where it is and what it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    pub path: PathBuf,
    pub len: u64,
    pub hash: String,
}

/// The earlier run's manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestState {
    Absent,
    Valid(Manifest),
    Invalid(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts {
    /// Whether ownership can be set (the installer runs as root).
    pub(crate) can_chown: bool,
    /// Logical path → state; every path the planner asks about is here.
    pub paths: BTreeMap<PathBuf, Observed>,
    pub manifest: ManifestState,
    /// The agent-sandbox binary to install (None: not found).
    pub binary: Option<Source>,
    /// This installer's own executable.
    pub installer: Option<Source>,
    /// The remote user (None: root or not given).
    pub user: Option<User>,
    pub packages: PackageFacts,
}

impl Facts {
    /// The state of `path`; a path that was not gathered reads as absent
    /// (`plan::paths_of_interest` lists every path the planner asks about).
    pub fn get(&self, path: &Path) -> &Observed {
        self.paths.get(path).unwrap_or(&Observed::Absent)
    }

    pub fn exists(&self, path: &Path) -> bool {
        !matches!(self.get(path), Observed::Absent)
    }
}

/// Reads one path without following a symbolic link at its last
/// component. Its kind, owner, mode and contents all come from one
/// descriptor (`O_NOFOLLOW`, non-blocking): the owner of the directory (a
/// user's home) cannot swap the name for a link to a file only root may
/// read between a look and a read, and a FIFO costs no hang. The parent is
/// taken as it is: the installer's paths sit in root-owned directories or
/// directly in a home, whose own name only root can change. A device node
/// is never opened (only looked at through an `O_PATH` handle).
pub fn observe(real: &Path) -> Observed {
    use nix::fcntl::{open, openat, readlinkat, OFlag};
    use nix::sys::stat::{fstat, Mode, SFlag};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let (Some(parent), Some(name)) = (real.parent(), real.file_name()) else { return Observed::Other };
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    let dir = match open(parent, OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty()) {
        // SAFETY: a new descriptor owned only here.
        Ok(fd) => unsafe { OwnedFd::from_raw_fd(fd) },
        Err(_) => return Observed::Absent,
    };
    let at = |flags: OFlag| {
        // SAFETY: a new descriptor owned only here.
        openat(Some(dir.as_raw_fd()), name, flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC, Mode::empty()).map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
    };
    // First only a handle on the name itself: a device node is never opened.
    let looked = match at(OFlag::O_PATH) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR) => return Observed::Absent,
        Err(_) => return Observed::Other,
    };
    let Ok(st) = fstat(looked.as_raw_fd()) else { return Observed::Other };
    let (mode, uid, gid) = (st.st_mode & 0o7777, st.st_uid, st.st_gid);
    match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFLNK => match readlinkat(Some(dir.as_raw_fd()), name) {
            Ok(target) => Observed::Link { target: target.into() },
            Err(_) => Observed::Other,
        },
        SFlag::S_IFDIR => Observed::Dir { mode, uid, gid },
        SFlag::S_IFREG => {
            // Opened again to read; still the same file, or left alone.
            let Ok(fd) = at(OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_NOCTTY) else { return Observed::Other };
            match fstat(fd.as_raw_fd()) {
                Ok(again) if (again.st_dev, again.st_ino) == (st.st_dev, st.st_ino) => {}
                _ => return Observed::Other,
            }
            let mut bytes = Vec::new();
            if std::fs::File::from(fd).read_to_end(&mut bytes).is_err() {
                return Observed::Other;
            }
            let text = if bytes.len() as u64 <= TEXT_LIMIT { String::from_utf8(bytes.clone()).ok() } else { None };
            Observed::File { mode, uid, gid, hash: content::hash(&bytes), text }
        }
        _ => Observed::Other,
    }
}

/// Hashes a binary to copy.
pub fn source(path: &Path) -> std::io::Result<Source> {
    let mut f = std::fs::File::open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    Ok(Source { path: path.to_path_buf(), len: bytes.len() as u64, hash: content::hash(&bytes) })
}

/// Observes `paths` and all their ancestors under `layout`.
pub(crate) fn observe_all(layout: &Layout, paths: &[PathBuf]) -> BTreeMap<PathBuf, Observed> {
    let mut out = BTreeMap::new();
    for p in paths {
        for a in p.ancestors() {
            if a == Path::new("/") || a.as_os_str().is_empty() || out.contains_key(a) {
                continue;
            }
            out.insert(a.to_path_buf(), observe(&layout.real(a)));
        }
    }
    out
}

/// Reads the manifest of an earlier run.
pub(crate) fn read_manifest(layout: &Layout) -> ManifestState {
    match std::fs::read_to_string(layout.real(Path::new(layout::MANIFEST))) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ManifestState::Absent,
        Err(e) => ManifestState::Invalid(e.to_string()),
        Ok(text) => match Manifest::from_json(&text) {
            Ok(m) => ManifestState::Valid(m),
            Err(e) => ManifestState::Invalid(e),
        },
    }
}

#[cfg(test)]
mod tests;
