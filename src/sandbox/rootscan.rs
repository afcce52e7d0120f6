//! What a session started by root could reach only because it is root.
//! A session keeps its launcher's uid, and uid 0 inside bwrap's user
//! namespace is real root on the host's files: with every capability
//! dropped, file modes still let the owner read root's 0600 files and
//! connect to root's 0660 sockets. A non-root user could not. This finds
//! those entries (the plan masks each) in the trees where system secrets
//! live; the criterion is a pure function of mode and owner.
//!
//! Scanned: /etc, /var (but /var/tmp and /var/run), /srv, /opt, /boot,
//! /mnt, /media, /home, /root, /usr/local/etc and the files directly in
//! `/`. Not scanned: the package-managed system trees (/usr, /bin, /lib,
//! /sbin: world-readable by convention), kernel and runtime file systems
//! (/proc, /sys, /dev, /run: replaced in sessions), private tmpfs
//! directories, and the workspace. A directory that root alone may enter
//! is masked whole, without looking inside.

use crate::fsread;
use crate::sandbox::fsview::Kind;
use nix::sys::stat::{FileStat, SFlag};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Trees scanned in full.
pub const TREES: &[&str] = &["/etc", "/var", "/srv", "/opt", "/boot", "/mnt", "/media", "/home", "/root", "/usr/local/etc"];
/// Never scanned: replaced inside sessions, or not secrets' places — the
/// package databases' file lists, which the package managers write
/// world-readable (dpkg's is about half of a Debian system's scan).
const SKIPPED: &[&str] = &["/var/tmp", "/var/run", "/var/lib/dpkg/info", CANARIES];

/// Where `verify` plants the canaries of one run each: not walked (a
/// parallel run's canaries would vanish under a session's masks); each run
/// names its own (`Scan::extra`).
pub const CANARIES: &str = "/var/lib/agent-sandbox/verify";

/// Whether uid 0 / gid 0 without capabilities may use an entry that a user
/// who is neither may not (read a file, list or enter a directory,
/// connect to a socket).
pub fn root_only(kind: Kind, mode: u32, uid: u32, gid: u32) -> bool {
    let bits = |shift: u32| (mode >> shift) & 0o7;
    let root = if uid == 0 {
        bits(6)
    } else if gid == 0 {
        bits(3)
    } else {
        bits(0)
    };
    let other = bits(0);
    let needs = match kind {
        Kind::Socket => 0o2,
        Kind::Dir => 0o5,
        _ => 0o4,
    };
    // Any right root has here (of those that matter) that others lack.
    (root & needs) & !(other & needs) != 0
}

/// Entries of the scanned trees only root may use, sorted; a root-only
/// directory is listed, not entered — unless it holds (or is) one of
/// `keep`, the paths the session is given (the workspace, allowWrite paths,
/// PATH directories, the command): those are never masked, and a directory
/// above one is entered instead. `home` (an empty tmpfs in sessions) is
/// not scanned.
///
/// One thread, descriptor by descriptor: each entry is judged with a
/// `fstatat` relative to its directory (no path walked again from `/`), a
/// link not at all. On a 2-vCPU VM this is about 3x faster than threads
/// sharing a queue of paths: the walk is syscall-bound, and the launch
/// runs beside it on the other CPU.
pub fn scan(keep: &[PathBuf], home: &Path, extra: &[PathBuf]) -> Vec<(PathBuf, Kind)> {
    let start = std::time::Instant::now();
    let mut walk = Walk { keep, home, found: Vec::new(), seen: 0, buf: Vec::new() };
    for p in extra {
        if let Ok(st) = fsread::stat_at(libc::AT_FDCWD, p.as_os_str()) {
            walk.judge(p.clone(), &st);
        }
    }
    // Files directly in `/` (not its directories: those are trees above
    // or system trees).
    if let Ok(root) = fsread::open_root(Path::new("/")) {
        walk.files_of_root(&root);
    }
    for tree in TREES.iter().map(Path::new) {
        let Ok(st) = fsread::stat_at(libc::AT_FDCWD, tree.as_os_str()) else { continue };
        if kind_of(st.st_mode) == Kind::Dir && walk.enter(tree, &st) {
            if let Ok(dir) = open_dir(None, tree) {
                walk.read(dir, tree, 0);
            }
        }
    }
    let Walk { mut found, seen, .. } = walk;
    found.sort_by(|a, b| a.0.cmp(&b.0));
    tracing::debug!("root-only scan: {} of {seen} entries in {:?}", found.len(), start.elapsed());
    found
}

/// How deep the walk keeps each directory's descriptor open while it
/// reads those below (opening each relative to its parent); deeper, a
/// directory is opened by its path, so a deep tree cannot exhaust the
/// descriptors.
const HELD_DEPTH: usize = 48;

fn kind_of(mode: u32) -> Kind {
    match SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits()) {
        SFlag::S_IFDIR => Kind::Dir,
        SFlag::S_IFREG => Kind::File,
        SFlag::S_IFSOCK => Kind::Socket,
        SFlag::S_IFCHR => Kind::CharDevice,
        SFlag::S_IFBLK => Kind::BlockDevice,
        _ => Kind::Other,
    }
}

/// A link the directory entry did not say was one (a file system without
/// entry types).
fn is_link(st: &FileStat) -> bool {
    st.st_mode & SFlag::S_IFMT.bits() == SFlag::S_IFLNK.bits()
}

/// A directory, refusing a link at its last component: relative to
/// `parent` when it is held, else by its whole path.
fn open_dir(parent: Option<&OwnedFd>, path: &Path) -> nix::Result<OwnedFd> {
    match (parent, path.file_name()) {
        (Some(p), Some(name)) => fsread::open_dir_at(p.as_raw_fd(), name),
        // Relative to nothing: an absolute path ignores the directory.
        _ => fsread::open_dir_at(libc::AT_FDCWD, path.as_os_str()),
    }
}

/// The walk's findings so far, how many entries it has looked at, and the
/// buffer every directory is listed into.
struct Walk<'a> {
    keep: &'a [PathBuf],
    home: &'a Path,
    found: Vec<(PathBuf, Kind)>,
    seen: usize,
    buf: Vec<u8>,
}

impl Walk<'_> {
    /// The home is an empty tmpfs in sessions; the kept paths are the
    /// session's own.
    fn skipped(&self, p: &Path) -> bool {
        SKIPPED.iter().any(|s| p == Path::new(s)) || p == self.home || self.keep.iter().any(|k| p == k)
    }

    fn holds_kept(&self, p: &Path) -> bool {
        self.keep.iter().any(|k| k.starts_with(p))
    }

    /// Records `p` when only root may use it (and it is not kept); a link
    /// never (its own mode says nothing).
    fn judge(&mut self, p: PathBuf, st: &FileStat) {
        let k = kind_of(st.st_mode);
        if !is_link(st) && root_only(k, st.st_mode, st.st_uid, st.st_gid) && !self.keep.contains(&p) {
            self.found.push((p, k));
        }
    }

    /// Whether a directory is read: not when skipped, and not when root
    /// alone may use it (then it is masked whole, unless it holds a kept
    /// path, which must stay reachable).
    fn enter(&mut self, dir: &Path, st: &FileStat) -> bool {
        if self.skipped(dir) {
            return false;
        }
        if root_only(Kind::Dir, st.st_mode, st.st_uid, st.st_gid) && !self.holds_kept(dir) {
            self.found.push((dir.to_path_buf(), Kind::Dir));
            return false;
        }
        true
    }

    /// Hides what could not be judged, unless the session is given a path
    /// in it (the workspace must stay reachable).
    fn hide_unjudged(&mut self, p: &Path) {
        if !self.holds_kept(p) {
            self.found.push((p.to_path_buf(), Kind::Other));
        }
    }

    /// Each entry of `dir` but links, with its `lstat` (relative to `dir`)
    /// or why there is none; an error if `dir` could not be listed to its
    /// end. A link is known by its directory entry, without a stat: its
    /// target is scanned where it lies (or is a system tree).
    fn each(&mut self, dir: &OwnedFd, mut f: impl FnMut(&mut Self, &std::ffi::CStr, nix::Result<FileStat>)) -> nix::Result<()> {
        let raw = dir.as_raw_fd();
        let mut buf = std::mem::take(&mut self.buf);
        let mut listed = Vec::new();
        let done = fsread::each_entry(raw, &mut buf, |name, ty| {
            if ty != libc::DT_LNK {
                listed.push((name.to_owned(), fsread::stat_at(raw, std::ffi::OsStr::from_bytes(name.to_bytes()))));
            }
            self.seen += 1;
        });
        self.buf = buf;
        for (name, st) in listed {
            f(self, &name, st);
        }
        done
    }

    /// The files (not directories) directly in `/`.
    fn files_of_root(&mut self, root: &OwnedFd) {
        let _ = self.each(root, |w, name, st| match st {
            Ok(st) if kind_of(st.st_mode) != Kind::Dir => w.judge(Path::new("/").join(std::ffi::OsStr::from_bytes(name.to_bytes())), &st),
            _ => {}
        });
    }

    /// Judges `dir`'s entries (each looked at once: a directory is judged
    /// here, as an entry), then reads the directories to enter. What cannot
    /// be judged is hidden (fails closed): an entry that cannot be stat'ed
    /// (but is gone) is masked as it is when the masks go on, a directory
    /// that cannot be listed to its end or opened (but is gone) whole.
    fn read(&mut self, dir: OwnedFd, path: &Path, depth: usize) {
        let mut subdirs = Vec::new();
        let listed = self.each(&dir, |w, name, st| {
            let p = path.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
            match st {
                Ok(st) if kind_of(st.st_mode) == Kind::Dir => {
                    if w.enter(&p, &st) {
                        subdirs.push(p);
                    }
                }
                Ok(st) => w.judge(p, &st),
                Err(nix::errno::Errno::ENOENT) => {}
                Err(_) => w.hide_unjudged(&p),
            }
        });
        if listed.is_err() {
            self.hide_unjudged(path);
        }
        let parent = (depth < HELD_DEPTH).then_some(dir);
        for sub in subdirs {
            match open_dir(parent.as_ref(), &sub) {
                Ok(d) => self.read(d, &sub, depth + 1),
                // Gone since it was listed: nothing to hide.
                Err(nix::errno::Errno::ENOENT) => {}
                // Too long a path to open (or to mask) below: hide the
                // directory that holds it whole.
                Err(nix::errno::Errno::ENAMETOOLONG) => self.hide_unjudged(path),
                // Replaced since it was listed, or unreadable: hidden as
                // it is when the masks go on (a link is left alone then).
                Err(_) => self.hide_unjudged(&sub),
            }
        }
    }
}

/// A scan running in a child process of the launcher (forked while it is
/// single-threaded, in the launcher's own namespaces, so owners read as
/// they are), overlapping the rest of the launch; whichever process starts
/// bwrap collects its findings just before it does.
pub struct Pending {
    pid: nix::unistd::Pid,
    findings: OwnedFd,
}

/// One finding on the wire: kind, path, NUL; the end is marked, so a scan
/// that died is told from one that found little.
fn encode(found: &[(PathBuf, Kind)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (p, k) in found {
        out.push(match k {
            Kind::Dir => b'd',
            Kind::File => b'f',
            Kind::Socket => b's',
            _ => b'o',
        });
        out.extend_from_slice(p.as_os_str().as_bytes());
        out.push(0);
    }
    out.extend_from_slice(b"E\0");
    out
}

fn decode(bytes: &[u8]) -> Option<Vec<(PathBuf, Kind)>> {
    let mut out = Vec::new();
    let mut ended = false;
    for rec in bytes.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let (tag, path) = rec.split_first()?;
        let kind = match tag {
            b'E' => {
                ended = true;
                continue;
            }
            b'd' => Kind::Dir,
            b'f' => Kind::File,
            b's' => Kind::Socket,
            _ => Kind::Other,
        };
        out.push((PathBuf::from(std::ffi::OsStr::from_bytes(path)), kind));
    }
    ended.then_some(out)
}

/// Starts `scan(keep, home, extra)` in a child process.
pub fn start(keep: &[PathBuf], home: &Path, extra: &[PathBuf]) -> std::io::Result<Pending> {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    // SAFETY: the launcher is single-threaded when it starts the scan; the
    // child scans, writes its findings and leaves with _exit.
    match unsafe { nix::unistd::fork() }? {
        nix::unistd::ForkResult::Child => {
            drop(r);
            let bytes = encode(&scan(keep, home, extra));
            let ok = std::fs::File::from(w).write_all(&bytes).is_ok();
            // SAFETY: ends the child without running the parent's destructors.
            unsafe { libc::_exit(i32::from(!ok)) }
        }
        nix::unistd::ForkResult::Parent { child } => {
            drop(w);
            Ok(Pending { pid: child, findings: r })
        }
    }
}

impl Pending {
    /// The findings (waits for the scan to end). In a forked process the
    /// descriptor is its own copy; the scan's end is the pipe's.
    pub fn findings(&self) -> std::io::Result<Vec<(PathBuf, Kind)>> {
        let mut bytes = Vec::new();
        std::fs::File::from(self.findings.try_clone()?).read_to_end(&mut bytes)?;
        decode(&bytes).ok_or_else(|| std::io::Error::other("the scan for files only root may read ended early; start the session again"))
    }

    /// The descriptor the findings arrive on.
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.findings.as_raw_fd()
    }

    /// Reaps the scan's process (the launcher, after the session).
    pub fn reap(&self) {
        let _ = nix::sys::wait::waitpid(self.pid, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_only_root_may_use() {
        // Root-owned secrets.
        assert!(root_only(Kind::File, 0o600, 0, 0));
        assert!(root_only(Kind::File, 0o640, 0, 42));
        assert!(root_only(Kind::Dir, 0o700, 0, 0));
        assert!(root_only(Kind::Dir, 0o710, 0, 0));
        assert!(root_only(Kind::Socket, 0o660, 0, 0));
        assert!(root_only(Kind::Socket, 0o755, 0, 0), "connecting needs write");
        // Group root: the session's gid.
        assert!(root_only(Kind::File, 0o640, 1000, 0));
        // World-usable: a user could too.
        assert!(!root_only(Kind::File, 0o644, 0, 0));
        assert!(!root_only(Kind::Dir, 0o755, 0, 0));
        assert!(!root_only(Kind::Socket, 0o666, 0, 0));
        // Another user's private file: root without capabilities cannot either.
        assert!(!root_only(Kind::File, 0o600, 1000, 1000));
        // Listable only by root but searchable by all: root sees more.
        assert!(root_only(Kind::Dir, 0o711, 0, 0));
        // Readable by root alone (others may only execute it).
        assert!(root_only(Kind::File, 0o711, 0, 0));
        assert!(!root_only(Kind::File, 0o755, 0, 0));
    }

    /// A tree deeper than the walk keeps descriptors for: every level is
    /// read (by descriptor above HELD_DEPTH, by path below), and a root-only
    /// file at the bottom is found.
    #[test]
    fn a_deep_tree_is_walked_to_the_bottom() {
        let t = tempfile::tempdir().unwrap();
        let mut deep = t.path().to_path_buf();
        for _ in 0..HELD_DEPTH + 12 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let secret = deep.join("secret");
        std::fs::write(&secret, b"x").unwrap();
        std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink("/etc/shadow", deep.join("link")).unwrap();
        let mut walk = Walk { keep: &[], home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new() };
        walk.read(open_dir(None, t.path()).unwrap(), t.path(), 0);
        assert_eq!(walk.seen, HELD_DEPTH + 12 + 2, "every level, the file and the link");
        // Only root's own files are root-only (the suite runs as root in CI).
        let want = if nix::unistd::geteuid().is_root() { vec![(secret, Kind::File)] } else { vec![] };
        assert_eq!(walk.found, want);
    }

    /// A directory that cannot be listed to its end is hidden whole (here
    /// a descriptor `getdents64` refuses), unless it holds a kept path.
    #[test]
    fn what_cannot_be_listed_is_hidden_unless_it_holds_a_kept_path() {
        let t = tempfile::tempdir().unwrap();
        let odd = t.path().join("odd");
        std::fs::write(&odd, b"").unwrap();
        let fd = || OwnedFd::from(std::fs::File::open(&odd).unwrap());
        let mut walk = Walk { keep: &[], home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new() };
        walk.read(fd(), &odd, 0);
        assert_eq!(walk.found, vec![(odd.clone(), Kind::Other)]);
        let keep = [odd.join("workspace")];
        let mut walk = Walk { keep: &keep, home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new() };
        walk.read(fd(), &odd, 0);
        assert_eq!(walk.found, vec![]);
    }

    #[test]
    fn findings_round_trip_and_a_cut_scan_is_an_error() {
        let found =
            vec![(PathBuf::from("/etc/ssl/private"), Kind::Dir), (PathBuf::from("/var/lib/x.sock"), Kind::Socket), (PathBuf::from("/etc/a b"), Kind::File)];
        let bytes = encode(&found);
        assert_eq!(decode(&bytes), Some(found));
        assert_eq!(decode(&bytes[..bytes.len() - 2]), None);
        assert_eq!(decode(b""), None);
        assert_eq!(decode(&encode(&[])), Some(vec![]));
    }
}
