//! Reading a tree a session may have written (the workspace, a tool dir)
//! without trusting it. Every path is walked one component at a time from
//! an already open directory with `O_NOFOLLOW`, so a symbolic link
//! anywhere on the way is seen as what it is and never followed
//! (`package.json -> /dev/zero`, a linked `.git`); relative paths only,
//! `..` refused. Files are opened non-blocking (a FIFO opens at once and is
//! then refused) and read only when `fstat` on the opened descriptor says
//! they are regular, up to a cap. A hostile entry costs an error value,
//! never a hang.
//!
//! Review walks and reads the workspace with it, the sandbox's file view
//! and executor look at and make paths beneath a root with it, and the
//! root scan lists with it; so it sits below all of them.

use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Files review reads (configs, scripts, hooks) are small; a bigger one
/// is reported by its size and fingerprint instead of its contents.
pub const READ_CAP: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    #[error("not read: {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("not read: {size} bytes, over the {cap}-byte cap")]
    TooBig { size: u64, cap: u64 },
    #[error("not read: {0}")]
    Io(Errno),
}

impl From<Errno> for ReadError {
    fn from(e: Errno) -> Self {
        match e {
            // O_NOFOLLOW on a symlink.
            Errno::ELOOP => ReadError::NotRegular("a symbolic link"),
            // O_DIRECTORY|O_NOFOLLOW on a symlink or a file.
            Errno::ENOTDIR => ReadError::NotRegular("a symbolic link or a file where a directory belongs"),
            e => ReadError::Io(e),
        }
    }
}

const DIR_FLAGS: OFlag = OFlag::O_RDONLY.union(OFlag::O_DIRECTORY).union(OFlag::O_NOFOLLOW).union(OFlag::O_CLOEXEC).union(OFlag::O_NONBLOCK);
const PLACE_FLAGS: OFlag = OFlag::O_PATH.union(OFlag::O_DIRECTORY).union(OFlag::O_NOFOLLOW).union(OFlag::O_CLOEXEC);
const FILE_FLAGS: OFlag = OFlag::O_RDONLY.union(OFlag::O_NOFOLLOW).union(OFlag::O_CLOEXEC).union(OFlag::O_NONBLOCK).union(OFlag::O_NOCTTY);

fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful open and is owned by
    // nothing else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// A directory to list or walk with readable descriptors (`getdents64`
/// needs one; `open_root` gives only a place). Symlinks in `path` itself
/// are followed: it is chosen by the user (the workspace, a tool dir), not
/// by a session.
pub fn open_dir(path: &Path) -> nix::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    nix::fcntl::open(path, flags, Mode::empty()).map(owned)
}

/// The directory `name` inside `dir`, refusing a symlink.
pub fn open_dir_at(dir: RawFd, name: &OsStr) -> nix::Result<OwnedFd> {
    openat(Some(dir), name, DIR_FLAGS, Mode::empty()).map(owned)
}

/// `lstat` of `name` inside `dir`.
pub fn stat_at(dir: RawFd, name: &OsStr) -> nix::Result<FileStat> {
    fstatat(Some(dir), name, AtFlags::AT_SYMLINK_NOFOLLOW)
}

fn type_of(mode: u32) -> &'static str {
    kind_of_mode(mode).and_then(|e| e.kind_name()).unwrap_or(UNKNOWN_TYPE)
}

const UNKNOWN_TYPE: &str = "a file of an unknown type";

/// Reads the regular file `name` inside `dir`, at most `cap` bytes.
fn read_at(dir: RawFd, name: &OsStr, cap: u64) -> Result<Vec<u8>, ReadError> {
    // lstat first, so a device node is never even opened.
    let pre = stat_at(dir, name)?;
    if pre.st_mode & SFlag::S_IFMT.bits() != SFlag::S_IFREG.bits() {
        return Err(ReadError::NotRegular(type_of(pre.st_mode)));
    }
    let fd = owned(openat(Some(dir), name, FILE_FLAGS, Mode::empty())?);
    // What was opened is what is read: check the descriptor itself.
    let st = fstat(fd.as_raw_fd())?;
    if st.st_mode & SFlag::S_IFMT.bits() != SFlag::S_IFREG.bits() {
        return Err(ReadError::NotRegular(type_of(st.st_mode)));
    }
    let size = u64::try_from(st.st_size).unwrap_or(0);
    if size > cap {
        return Err(ReadError::TooBig { size, cap });
    }
    let mut out = Vec::with_capacity(size as usize);
    std::fs::File::from(fd).take(cap).read_to_end(&mut out).map_err(|e| ReadError::Io(Errno::from_raw(e.raw_os_error().unwrap_or(0))))?;
    Ok(out)
}

/// Reads `rel` (components separated by `/`, no `.` or `..`) under the
/// open directory `root`, every component opened without following
/// symlinks.
pub fn read_rel(root: RawFd, rel: &[u8], cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut parts: Vec<&[u8]> = rel.split(|b| *b == b'/').filter(|p| !p.is_empty()).collect();
    if parts.iter().any(|p| matches!(*p, b"." | b"..")) {
        return Err(ReadError::NotRegular("a path that does not stay beneath its root"));
    }
    let Some(last) = parts.pop() else { return Err(ReadError::NotRegular("a directory")) };
    let mut held: Option<OwnedFd> = None;
    for part in parts {
        let at = held.as_ref().map_or(root, AsRawFd::as_raw_fd);
        // A place, not a listing: search permission is enough, as for
        // any other reader of the file (git through a 0311 directory).
        held = Some(openat(Some(at), OsStr::from_bytes(part), PLACE_FLAGS, Mode::empty()).map(owned)?);
    }
    read_at(held.as_ref().map_or(root, AsRawFd::as_raw_fd), OsStr::from_bytes(last), cap)
}

/// A directory entry's type as `getdents64` gives it (`DT_LNK` and so on;
/// `DT_UNKNOWN` where the file system keeps none).
pub type EntryType = u8;

/// Each entry of the open directory `dir` but `.` and `..`, its name (NUL
/// ended) and type, read with `getdents64` into `buf` (reused across
/// calls: one allocation for a whole walk, and two system calls for most
/// directories, where `readdir` takes more and `fdopendir` adds its own).
pub fn each_entry(dir: RawFd, buf: &mut Vec<u8>, mut each: impl FnMut(&std::ffi::CStr, EntryType)) -> nix::Result<()> {
    // Room for many entries; a name is at most 255 bytes.
    if buf.len() < 32 * 1024 {
        buf.resize(32 * 1024, 0);
    }
    loop {
        // SAFETY: the kernel writes at most `buf.len()` bytes into `buf`,
        // which stays borrowed mutably for the call.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        let n = usize::try_from(Errno::result(n)?).unwrap_or(0);
        if n == 0 {
            return Ok(());
        }
        // linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1),
        // then the name and its NUL, the record padded to d_reclen.
        let mut rest = buf.get(..n).unwrap_or_default();
        while let (Some(reclen), Some(&ty)) = (rest.get(16..18), rest.get(18)) {
            let reclen = usize::from(u16::from_ne_bytes([reclen[0], reclen[1]]));
            let Some(record) = rest.get(..reclen).filter(|_| reclen > 19) else { return Err(Errno::EIO) };
            let name = std::ffi::CStr::from_bytes_until_nul(&record[19..]).map_err(|_| Errno::EIO)?;
            if !matches!(name.to_bytes(), b"." | b"..") {
                each(name, ty);
            }
            rest = &rest[reclen..];
        }
    }
}

/// Reads the regular file at `path` without following a symlink at its
/// last component and without blocking; its directory is opened as given.
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ReadError::NotRegular("a directory"));
    };
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    let dir = open_dir(parent)?;
    read_at(dir.as_raw_fd(), name, cap)
}

/// What is at a name, not following it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    Missing,
    Dir,
    File,
    /// A symbolic link, with its target as written.
    Symlink(PathBuf),
    /// A FIFO, socket or device node, in words ("a FIFO").
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
            Entry::Symlink(t) => format!("a symbolic link to {}", t.display()),
            Entry::BadParent(p, e) => format!("under {}, which is {}", p.display(), e.describe()),
            Entry::Unreadable(errno) => format!("unreadable ({})", std::io::Error::from_raw_os_error(*errno)),
            Entry::Dir | Entry::File | Entry::Special(_) => self.kind_name().unwrap_or(UNKNOWN_TYPE).into(),
        }
    }

    /// The kind a file-type mode names, in words ("a directory"): for
    /// `describe` and for a read refused on the type (`ReadError`).
    fn kind_name(&self) -> Option<&'static str> {
        Some(match self {
            Entry::Dir => "a directory",
            Entry::File => "a regular file",
            Entry::Symlink(_) => "a symbolic link",
            Entry::Special(what) => what,
            Entry::Missing | Entry::BadParent(..) | Entry::Unreadable(_) => return None,
        })
    }
}

/// Opens `dir` (a trusted path: the workspace itself) as the root of walks
/// (`O_PATH`: search permission is enough).
pub fn open_root(dir: &Path) -> std::io::Result<OwnedFd> {
    let fd = nix::fcntl::open(dir, OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())?;
    // SAFETY: a new descriptor owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// What the file-type bits of `mode` say (a symlink without its target),
/// or `None` where they name no type. A `getdents64` entry's type is the
/// same bits shifted down (`DT_x == S_IFx >> 12`; `DT_UNKNOWN` is 0).
fn kind_of_mode(mode: u32) -> Option<Entry> {
    Some(match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => Entry::Dir,
        SFlag::S_IFREG => Entry::File,
        SFlag::S_IFLNK => Entry::Symlink(PathBuf::new()),
        SFlag::S_IFIFO => Entry::Special("a FIFO"),
        SFlag::S_IFSOCK => Entry::Special("a socket"),
        SFlag::S_IFCHR => Entry::Special("a character device"),
        SFlag::S_IFBLK => Entry::Special("a block device"),
        _ => return None,
    })
}

/// What an opened descriptor is (a symlink is only seen through
/// `O_PATH|O_NOFOLLOW`, which `step` reports with its target first).
fn kind_of(st: &FileStat) -> Entry {
    kind_of_mode(st.st_mode).unwrap_or(Entry::Special(UNKNOWN_TYPE))
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
/// bytes (more is an error); anything else (a symlink on the way, a FIFO,
/// a device) is an error without a blocking open or an endless read.
pub fn read_beneath(root: &Path, rel: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let dir = open_root(root).map_err(|e| ReadError::Io(Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO))))?;
    read_rel(dir.as_raw_fd(), rel.as_os_str().as_bytes(), cap)
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
    let Ok(dir) = reopen_dir(&fd) else { return Vec::new() };
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let listed = each_entry(dir.as_raw_fd(), &mut buf, |name, ty| {
        let name = OsString::from(OsStr::from_bytes(name.to_bytes()));
        // File systems that do not report types: look.
        let kind = kind_of_mode(u32::from(ty) << 12).unwrap_or_else(|| entry(root, &rel.join(&name)));
        out.push((name, kind));
    });
    if listed.is_err() {
        return Vec::new();
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// More entries than one `getdents64` call returns: all of them, each
    /// once, with its type, and neither `.` nor `..`.
    #[test]
    fn every_entry_is_listed_once_with_its_type() {
        let d = tempfile::tempdir().unwrap();
        let long = "n".repeat(200);
        for i in 0..400 {
            std::fs::write(d.path().join(format!("{long}{i}")), b"").unwrap();
        }
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("/nowhere", d.path().join("link")).unwrap();
        let dir = open_dir(d.path()).unwrap();
        let mut buf = Vec::new();
        let mut got = Vec::new();
        each_entry(dir.as_raw_fd(), &mut buf, |name, ty| got.push((name.to_str().unwrap().to_string(), ty))).unwrap();
        got.sort();
        let mut want: Vec<(String, u8)> = (0..400).map(|i| (format!("{long}{i}"), libc::DT_REG)).collect();
        want.push(("sub".into(), libc::DT_DIR));
        want.push(("link".into(), libc::DT_LNK));
        want.sort();
        assert_eq!(got, want);
        assert!(400 * 200 > buf.len(), "the listing took more than one call");
    }

    #[test]
    fn hostile_entries_are_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::write(p.join("ok"), "hello").unwrap();
        nix::unistd::mkfifo(&p.join("fifo"), Mode::from_bits_truncate(0o644)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", p.join("zero")).unwrap();
        std::os::unix::fs::symlink("loop", p.join("loop")).unwrap();
        std::fs::File::create(p.join("huge")).unwrap().set_len(5 << 30).unwrap();
        assert_eq!(read_regular(&p.join("ok"), READ_CAP).unwrap(), b"hello");
        assert_eq!(read_regular(&p.join("fifo"), READ_CAP), Err(ReadError::NotRegular("a FIFO")));
        assert_eq!(read_regular(&p.join("zero"), READ_CAP), Err(ReadError::NotRegular("a symbolic link")));
        assert_eq!(read_regular(&p.join("loop"), READ_CAP), Err(ReadError::NotRegular("a symbolic link")));
        assert_eq!(read_regular(&p.join("huge"), READ_CAP), Err(ReadError::TooBig { size: 5 << 30, cap: READ_CAP }));
    }

    #[test]
    fn relative_reads_refuse_symlinked_directories() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        std::fs::create_dir_all(p.join("real/.git")).unwrap();
        std::fs::write(p.join("real/.git/config"), "[core]\n").unwrap();
        std::os::unix::fs::symlink("real", p.join("link")).unwrap();
        let root = open_root(p).unwrap();
        assert_eq!(read_rel(root.as_raw_fd(), b"real/.git/config", READ_CAP).unwrap(), b"[core]\n");
        assert_eq!(
            read_rel(root.as_raw_fd(), b"link/.git/config", READ_CAP),
            Err(ReadError::NotRegular("a symbolic link or a file where a directory belongs"))
        );
    }

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
        assert_eq!(entry(r, Path::new("fifo")), Entry::Special("a FIFO"));
        // Through a symlinked directory: refused at the link.
        assert_eq!(entry(r, Path::new("a/sl/f")), Entry::BadParent("a/sl".into(), Box::new(Entry::Symlink("b".into()))));
        assert_eq!(entry(r, Path::new("a/b/f/x")), Entry::BadParent("a/b/f".into(), Box::new(Entry::File)));
        assert_eq!(entry(r, Path::new("../x")), Entry::Unreadable(libc::EINVAL));
    }

    #[test]
    fn reads_only_regular_files_within_the_cap() {
        let t = tree();
        let r = t.path();
        assert_eq!(read_beneath(r, Path::new("a/b/f"), 10).unwrap(), b"hello");
        assert!(matches!(read_beneath(r, Path::new("big"), 10), Err(ReadError::TooBig { .. })));
        // A FIFO with no writer would block a plain open: refused at once.
        let start = std::time::Instant::now();
        assert!(matches!(read_beneath(r, Path::new("fifo"), 10), Err(ReadError::NotRegular(..))));
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert!(matches!(read_beneath(r, Path::new("a/abs"), 10_000), Err(ReadError::NotRegular(..))));
        assert!(matches!(read_beneath(r, Path::new("a/sl/f"), 10), Err(ReadError::NotRegular(..))));
        assert!(matches!(read_beneath(r, Path::new("a/../big"), 1000), Err(ReadError::NotRegular(..))));
        assert!(matches!(read_beneath(r, Path::new("a/missing"), 10), Err(ReadError::Io(..))));
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
        // A FIFO by its listed type, not opened.
        assert!(list(t.path(), Path::new("")).contains(&("fifo".into(), Entry::Special("a FIFO"))));
    }
}
