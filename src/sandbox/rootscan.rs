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

use crate::sandbox::fsview::Kind;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
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
pub fn scan(keep: &[PathBuf], home: &Path, extra: &[PathBuf]) -> Vec<(PathBuf, Kind)> {
    let start = std::time::Instant::now();
    let mut found = Vec::new();
    let mut seen = 0usize;
    let judge = |m: &std::fs::Metadata| {
        let k = Kind::of(m.file_type());
        root_only(k, m.mode(), m.uid(), m.gid()).then_some(k)
    };
    for p in extra {
        if let Some(k) = std::fs::symlink_metadata(p).ok().and_then(|m| judge(&m)) {
            found.push((p.clone(), k));
        }
    }
    // Files directly in `/` (not its directories: those are trees above
    // or system trees).
    for e in std::fs::read_dir("/").into_iter().flatten().flatten() {
        if let Ok(m) = e.metadata() {
            seen += 1;
            if let Some(k) = judge(&m).filter(|k| *k != Kind::Dir) {
                found.push((e.path(), k));
            }
        }
    }
    let mut walk = Walk { keep, home, queue: std::sync::Mutex::new((Vec::new(), 0)), more: std::sync::Condvar::new() };
    let trees: Vec<PathBuf> =
        TREES.iter().map(PathBuf::from).filter(|t| std::fs::symlink_metadata(t).is_ok_and(|m| m.is_dir() && walk.enter(t, &m, &mut found))).collect();
    walk.queue.get_mut().unwrap_or_else(|e| e.into_inner()).0 = trees;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4);
    let results: Vec<(Vec<(PathBuf, Kind)>, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers).map(|_| s.spawn(|| walk.work())).collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    for (f, n) in results {
        found.extend(f);
        seen += n;
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    tracing::debug!("root-only scan: {} of {seen} entries in {:?} ({workers} threads)", found.len(), start.elapsed());
    found
}

/// The trees' directories still to read, shared by the scan's threads
/// (with how many are reading one now: the walk ends when none is and
/// none is left).
struct Walk<'a> {
    keep: &'a [PathBuf],
    home: &'a Path,
    queue: std::sync::Mutex<(Vec<PathBuf>, usize)>,
    more: std::sync::Condvar,
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

    /// One thread: directories from the queue until the walk is done.
    fn work(&self) -> (Vec<(PathBuf, Kind)>, usize) {
        let (mut found, mut seen) = (Vec::new(), 0);
        while let Some(dir) = self.next() {
            let subdirs = self.read(&dir, &mut found, &mut seen);
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.0.extend(subdirs);
            q.1 -= 1;
            // Wake the idle only for work, or to end the walk.
            if !q.0.is_empty() || q.1 == 0 {
                self.more.notify_all();
            }
        }
        (found, seen)
    }

    fn next(&self) -> Option<PathBuf> {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(d) = q.0.pop() {
                q.1 += 1;
                return Some(d);
            }
            if q.1 == 0 {
                return None;
            }
            q = self.more.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether a directory is read: not when skipped, and not when root
    /// alone may use it (then it is masked whole, unless it holds a kept
    /// path, which must stay reachable).
    fn enter(&self, dir: &Path, m: &std::fs::Metadata, found: &mut Vec<(PathBuf, Kind)>) -> bool {
        if self.skipped(dir) {
            return false;
        }
        if root_only(Kind::Dir, m.mode(), m.uid(), m.gid()) && !self.holds_kept(dir) {
            found.push((dir.to_path_buf(), Kind::Dir));
            return false;
        }
        true
    }

    /// Judges `dir`'s entries; returns the subdirectories to read. Each
    /// entry is looked at once (a directory is judged here, as an entry),
    /// and a link not at all: its own mode says nothing, and its target is
    /// scanned where it lies (or is a system tree).
    fn read(&self, dir: &Path, found: &mut Vec<(PathBuf, Kind)>, seen: &mut usize) -> Vec<PathBuf> {
        let mut subdirs = Vec::new();
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            *seen += 1;
            // The directory entry's type, without a stat.
            if e.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            let Ok(m) = e.metadata() else { continue };
            let k = Kind::of(m.file_type());
            let p = e.path();
            if k == Kind::Dir {
                if self.enter(&p, &m, found) {
                    subdirs.push(p);
                }
            } else if !m.file_type().is_symlink() && root_only(k, m.mode(), m.uid(), m.gid()) && !self.keep.contains(&p) {
                found.push((p, k));
            }
        }
        subdirs
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
