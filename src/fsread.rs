//! Reading a tree a session may have made hostile. Every open is relative
//! to an already open directory and refuses symlinks (O_NOFOLLOW), so a
//! link never takes a read elsewhere (`package.json -> /dev/zero`); never
//! blocks (O_NONBLOCK: a FIFO opens at once and is then refused); and only
//! regular files are read, checked with fstat on the opened descriptor,
//! at most a cap of bytes. A hostile entry costs an error value, never a
//! hang.
//!
//! Review walks and reads the workspace with it; the sandbox's file view
//! reads hostile workspace files with it too, so it sits below both.
//! (`nofollow` is the sandbox's path-by-path walk beneath a root.)

use nix::errno::Errno;
use nix::fcntl::{openat, AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode, SFlag};
use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

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
const FILE_FLAGS: OFlag = OFlag::O_RDONLY.union(OFlag::O_NOFOLLOW).union(OFlag::O_CLOEXEC).union(OFlag::O_NONBLOCK).union(OFlag::O_NOCTTY);

fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful open and is owned by
    // nothing else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// The root of a walk. Symlinks in `path` itself are followed: the root is
/// chosen by the user (the workspace, a tool dir), not by a session.
pub fn open_root(path: &Path) -> nix::Result<OwnedFd> {
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

pub fn type_of(mode: u32) -> &'static str {
    match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFREG => "a regular file",
        SFlag::S_IFDIR => "a directory",
        SFlag::S_IFLNK => "a symbolic link",
        SFlag::S_IFIFO => "a FIFO",
        SFlag::S_IFSOCK => "a socket",
        SFlag::S_IFCHR => "a character device",
        SFlag::S_IFBLK => "a block device",
        _ => "an unknown file type",
    }
}

/// Reads the regular file `name` inside `dir`, at most `cap` bytes.
pub fn read_at(dir: RawFd, name: &OsStr, cap: u64) -> Result<Vec<u8>, ReadError> {
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

/// Reads `rel` (components separated by `/`) under the open directory
/// `root`, every component opened without following symlinks.
pub fn read_rel(root: RawFd, rel: &[u8], cap: u64) -> Result<Vec<u8>, ReadError> {
    let mut parts: Vec<&[u8]> = rel.split(|b| *b == b'/').filter(|p| !p.is_empty()).collect();
    let Some(last) = parts.pop() else { return Err(ReadError::NotRegular("a directory")) };
    let mut held: Option<OwnedFd> = None;
    for part in parts {
        let at = held.as_ref().map_or(root, AsRawFd::as_raw_fd);
        held = Some(open_dir_at(at, OsStr::from_bytes(part))?);
    }
    read_at(held.as_ref().map_or(root, AsRawFd::as_raw_fd), OsStr::from_bytes(last), cap)
}

/// Reads the regular file at `path` without following a symlink at its
/// last component and without blocking; its directory is opened as given.
pub fn read_regular(path: &Path, cap: u64) -> Result<Vec<u8>, ReadError> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ReadError::NotRegular("a directory"));
    };
    let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
    let dir = open_root(parent)?;
    read_at(dir.as_raw_fd(), name, cap)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
