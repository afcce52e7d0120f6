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
    let dir = open_root(parent)?;
    read_at(dir.as_raw_fd(), name, cap)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let dir = open_root(d.path()).unwrap();
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
}
