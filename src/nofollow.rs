//! Reading a tree a session could have written (the workspace), without
//! trusting it: every path is walked one component at a time from a
//! directory descriptor with `O_NOFOLLOW`, so a symbolic link anywhere on
//! the way is seen as what it is and never followed; files are opened
//! non-blocking and read only when `fstat` says they are regular, up to a
//! cap, so a FIFO, a device or `/dev/zero` behind a name costs an error,
//! not a hang. Relative paths only; `..` is refused.

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::{fstat, FileStat, Mode, SFlag};
use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// What is at a name, not following it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Missing,
    Dir,
    File,
    /// A symbolic link, with its target as written.
    Symlink(PathBuf),
    /// A FIFO, socket or device node.
    Special(&'static str),
    /// A component before the last is a symbolic link or not a directory
    /// (the relative path to it, and what it is).
    BadParent(PathBuf, Box<Entry>),
    /// It could not be looked at (an errno).
    Unreadable(i32),
}

impl Entry {
    /// In words, for messages.
    pub fn describe(&self) -> String {
        match self {
            Entry::Missing => "missing".into(),
            Entry::Dir => "a directory".into(),
            Entry::File => "a regular file".into(),
            Entry::Symlink(t) => format!("a symbolic link to {}", t.display()),
            Entry::Special(what) => format!("a {what}"),
            Entry::BadParent(p, e) => format!("under {}, which is {}", p.display(), e.describe()),
            Entry::Unreadable(errno) => format!("unreadable ({})", std::io::Error::from_raw_os_error(*errno)),
        }
    }
}

/// Why a read failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    #[error("{0} is not a regular file but {1}")]
    NotRegular(PathBuf, String),
    #[error("{0} is larger than {1} bytes")]
    TooLarge(PathBuf, u64),
    #[error("{0}: {1}")]
    Io(PathBuf, String),
}

/// Opens `dir` (a trusted path: the workspace itself) as the root of walks.
pub fn open_root(dir: &Path) -> std::io::Result<OwnedFd> {
    let fd = nix::fcntl::open(dir, OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())?;
    // SAFETY: a new descriptor owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn kind_of(st: &FileStat) -> Entry {
    match SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => Entry::Dir,
        SFlag::S_IFREG => Entry::File,
        SFlag::S_IFIFO => Entry::Special("FIFO"),
        SFlag::S_IFSOCK => Entry::Special("socket"),
        SFlag::S_IFCHR => Entry::Special("character device"),
        SFlag::S_IFBLK => Entry::Special("block device"),
        // A symlink is only seen through O_PATH|O_NOFOLLOW, handled there.
        _ => Entry::Special("file of an unknown type"),
    }
}

fn normal_components(rel: &Path) -> Option<Vec<&std::ffi::OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(n) => Some(n),
            Component::CurDir => Some(std::ffi::OsStr::new(".")),
            _ => None,
        })
        .filter(|c| c != &Some(std::ffi::OsStr::new(".")))
        .collect()
}

fn readlinkat(dir: &OwnedFd, name: &std::ffi::OsStr) -> PathBuf {
    nix::fcntl::readlinkat(Some(dir.as_raw_fd()), name).map(PathBuf::from).unwrap_or_default()
}

/// One step: `name` in `dir` as an `O_PATH` descriptor, not followed.
fn step(dir: &OwnedFd, name: &std::ffi::OsStr) -> Result<(OwnedFd, Entry), Entry> {
    let flags = OFlag::O_PATH | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match openat(Some(dir.as_raw_fd()), name, flags, Mode::empty()) {
        Ok(fd) => {
            // SAFETY: a new descriptor owned only here.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            match fstat(fd.as_raw_fd()) {
                Ok(st) if SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits()) == SFlag::S_IFLNK => Err(Entry::Symlink(readlinkat(dir, name))),
                Ok(st) => {
                    let kind = kind_of(&st);
                    Ok((fd, kind))
                }
                Err(e) => Err(Entry::Unreadable(e as i32)),
            }
        }
        Err(nix::errno::Errno::ENOENT) => Err(Entry::Missing),
        Err(e) => Err(Entry::Unreadable(e as i32)),
    }
}

/// Walks `rel` from `root` without following anything. Returns the final
/// component's descriptor (`O_PATH`) and what it is, or what stopped the
/// walk (`BadParent` for a component before the last).
pub fn walk(root: &OwnedFd, rel: &Path) -> Result<(OwnedFd, Entry), Entry> {
    let parts = normal_components(rel).ok_or(Entry::Unreadable(libc::EINVAL))?;
    let mut dir = root.as_fd().try_clone_to_owned().map_err(|e| Entry::Unreadable(e.raw_os_error().unwrap_or(libc::EBADF)))?;
    let mut done = PathBuf::new();
    for (i, part) in parts.iter().enumerate() {
        done.push(part);
        let (fd, kind) = match step(&dir, part) {
            Ok(x) => x,
            Err(e) if i + 1 == parts.len() => return Err(e),
            Err(Entry::Missing) => return Err(Entry::Missing),
            Err(e) => return Err(Entry::BadParent(done, Box::new(e))),
        };
        if i + 1 == parts.len() {
            return Ok((fd, kind));
        }
        if kind != Entry::Dir {
            return Err(Entry::BadParent(done, Box::new(kind)));
        }
        dir = fd;
    }
    // An empty path names the root itself.
    let st = fstat(dir.as_raw_fd()).map_err(|e| Entry::Unreadable(e as i32))?;
    let kind = kind_of(&st);
    Ok((dir, kind))
}

/// What is at `rel` under `root` (symlinks reported, never followed).
pub fn entry(root: &Path, rel: &Path) -> Entry {
    let Ok(r) = open_root(root) else { return Entry::Missing };
    match walk(&r, rel) {
        Ok((_, kind)) => kind,
        Err(e) => e,
    }
}

/// The contents of the regular file `rel` under `root`, at most `cap`
/// bytes (more is an error); anything else — a symlink on the way, a FIFO,
/// a device — is an error without a blocking open or an endless read.
pub fn read_regular(root: &Path, rel: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let full = root.join(rel);
    let io = |e: String| ReadError::Io(full.clone(), e);
    let r = open_root(root).map_err(|e| io(e.to_string()))?;
    let (parent_rel, name) = match (rel.parent(), rel.file_name()) {
        (Some(p), Some(n)) => (p, n),
        _ => return Err(io("not a file name".into())),
    };
    let parent = match walk(&r, parent_rel) {
        Ok((fd, Entry::Dir)) => fd,
        Ok((_, kind)) | Err(kind) => return Err(ReadError::NotRegular(full, Entry::BadParent(parent_rel.into(), Box::new(kind)).describe())),
    };
    // The O_PATH parent cannot be read through; reopen it as a directory.
    let parent = reopen_dir(&parent).map_err(|e| io(e.to_string()))?;
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let fd = match openat(Some(parent.as_raw_fd()), name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::ELOOP) => return Err(ReadError::NotRegular(full, Entry::Symlink(readlinkat(&parent, name)).describe())),
        Err(e) => return Err(io(e.desc().into())),
    };
    // SAFETY: a new descriptor owned only here.
    let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let st = fstat(file.as_raw_fd()).map_err(|e| io(e.desc().into()))?;
    let kind = kind_of(&st);
    if kind != Entry::File {
        return Err(ReadError::NotRegular(full, kind.describe()));
    }
    if st.st_size as u64 > cap {
        return Err(ReadError::TooLarge(full, cap));
    }
    let mut buf = Vec::new();
    file.take(cap + 1).read_to_end(&mut buf).map_err(|e| io(e.to_string()))?;
    if buf.len() as u64 > cap {
        return Err(ReadError::TooLarge(full, cap));
    }
    Ok(buf)
}

/// Makes the directory `rel` under `root` (and its missing parents, mode
/// `mode`) without following anything: an existing symlink or non-directory
/// on the way is an error, not a place to create in.
pub fn ensure_dir(root: &Path, rel: &Path, mode: u32) -> std::io::Result<()> {
    let parts = normal_components(rel).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut dir = open_root(root)?;
    let mut done = PathBuf::new();
    for part in parts {
        done.push(part);
        match nix::sys::stat::mkdirat(Some(dir.as_raw_fd()), part, Mode::from_bits_truncate(mode)) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        dir = match step(&dir, part) {
            Ok((fd, Entry::Dir)) => fd,
            Ok((_, kind)) | Err(kind) => return Err(std::io::Error::other(format!("{} is {}, not a directory", root.join(&done).display(), kind.describe()))),
        };
    }
    Ok(())
}

/// An `O_PATH` directory descriptor reopened for reading.
fn reopen_dir(fd: &OwnedFd) -> nix::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let raw = openat(Some(fd.as_raw_fd()), ".", flags, Mode::empty())?;
    // SAFETY: a new descriptor owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// The entries of the directory `rel` under `root`, with what each is
/// (from the directory listing: no `stat` of each, nothing followed),
/// sorted by name. Empty when `rel` is not a directory reached without a
/// symlink.
pub fn list(root: &Path, rel: &Path) -> Vec<(OsString, Entry)> {
    let Ok(r) = open_root(root) else { return Vec::new() };
    let Ok((fd, Entry::Dir)) = walk(&r, rel) else { return Vec::new() };
    let Ok(dirfd) = reopen_dir(&fd) else { return Vec::new() };
    let Ok(mut dir) = nix::dir::Dir::from_fd(dirfd.as_raw_fd()) else { return Vec::new() };
    // The Dir now owns the descriptor.
    std::mem::forget(dirfd);
    let mut out: Vec<(OsString, Entry)> = dir
        .iter()
        .filter_map(Result::ok)
        .filter(|e| !matches!(e.file_name().to_bytes(), b"." | b".."))
        .map(|e| {
            let name = OsString::from(std::ffi::OsStr::from_bytes(e.file_name().to_bytes()));
            let kind = match e.file_type() {
                Some(nix::dir::Type::Directory) => Entry::Dir,
                Some(nix::dir::Type::File) => Entry::File,
                Some(nix::dir::Type::Symlink) => Entry::Symlink(PathBuf::new()),
                Some(nix::dir::Type::Fifo) => Entry::Special("FIFO"),
                Some(nix::dir::Type::Socket) => Entry::Special("socket"),
                Some(nix::dir::Type::CharacterDevice) => Entry::Special("character device"),
                Some(nix::dir::Type::BlockDevice) => Entry::Special("block device"),
                // File systems that do not report types: look.
                None => entry(root, &rel.join(&name)),
            };
            (name, kind)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let p = t.path();
        std::fs::create_dir_all(p.join("a/b")).unwrap();
        std::fs::write(p.join("a/b/f"), "hello").unwrap();
        symlink("../..", p.join("a/up")).unwrap();
        symlink("b", p.join("a/sl")).unwrap();
        symlink("/etc/passwd", p.join("a/abs")).unwrap();
        std::fs::write(p.join("big"), vec![b'x'; 100]).unwrap();
        nix::unistd::mkfifo(&p.join("fifo"), Mode::from_bits_truncate(0o600)).unwrap();
        t
    }

    #[test]
    fn entries_are_seen_not_followed() {
        let t = tree();
        let r = t.path();
        assert_eq!(entry(r, Path::new("a/b")), Entry::Dir);
        assert_eq!(entry(r, Path::new("a/b/f")), Entry::File);
        assert_eq!(entry(r, Path::new("a/up")), Entry::Symlink("../..".into()));
        assert_eq!(entry(r, Path::new("a/nope")), Entry::Missing);
        assert_eq!(entry(r, Path::new("fifo")), Entry::Special("FIFO"));
        // Through a symlinked directory: refused at the link.
        assert_eq!(entry(r, Path::new("a/sl/f")), Entry::BadParent("a/sl".into(), Box::new(Entry::Symlink("b".into()))));
        assert_eq!(entry(r, Path::new("a/b/f/x")), Entry::BadParent("a/b/f".into(), Box::new(Entry::File)));
        assert_eq!(entry(r, Path::new("../x")), Entry::Unreadable(libc::EINVAL));
    }

    #[test]
    fn reads_only_regular_files_within_the_cap() {
        let t = tree();
        let r = t.path();
        assert_eq!(read_regular(r, Path::new("a/b/f"), 10).unwrap(), b"hello");
        assert!(matches!(read_regular(r, Path::new("big"), 10), Err(ReadError::TooLarge(..))));
        // A FIFO with no writer would block a plain open: refused at once.
        let start = std::time::Instant::now();
        assert!(matches!(read_regular(r, Path::new("fifo"), 10), Err(ReadError::NotRegular(..))));
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert!(matches!(read_regular(r, Path::new("a/abs"), 10_000), Err(ReadError::NotRegular(..))));
        assert!(matches!(read_regular(r, Path::new("a/sl/f"), 10), Err(ReadError::NotRegular(..))));
        assert!(matches!(read_regular(r, Path::new("a/missing"), 10), Err(ReadError::Io(..))));
    }

    #[test]
    fn makes_directories_without_following() {
        let t = tree();
        let r = t.path();
        ensure_dir(r, Path::new("new/deep/er"), 0o700).unwrap();
        assert_eq!(entry(r, Path::new("new/deep/er")), Entry::Dir);
        ensure_dir(r, Path::new("new/deep/er"), 0o700).unwrap();
        // Through a planted link: refused, nothing made at its target.
        let name = format!("nofollow-escape-{}", std::process::id());
        assert!(ensure_dir(r, &Path::new("a/up").join(&name), 0o700).is_err());
        assert!(!r.parent().unwrap().join(&name).exists());
        assert!(ensure_dir(r, Path::new("a/b/f/x"), 0o700).is_err());
    }

    #[test]
    fn lists_without_following() {
        let t = tree();
        let names: Vec<(String, Entry)> = list(t.path(), Path::new("a")).into_iter().map(|(n, e)| (n.to_string_lossy().into_owned(), e)).collect();
        assert_eq!(
            names,
            vec![
                ("abs".into(), Entry::Symlink(PathBuf::new())),
                ("b".into(), Entry::Dir),
                ("sl".into(), Entry::Symlink(PathBuf::new())),
                ("up".into(), Entry::Symlink(PathBuf::new())),
            ]
        );
        assert!(list(t.path(), Path::new("a/sl")).is_empty());
    }
}
