//! The fallback of a root launcher's host view (`HostView::Scan`, where
//! idmapped mounts cannot be made: a container without CAP_SYS_ADMIN, an
//! old kernel, a file system without support). The session keeps root's
//! uid, and uid 0 inside bwrap's user namespace is real root on the host's
//! files: with every capability dropped, file modes and ACLs still let
//! root read root's 0600 files and connect to root's 0660 sockets. A
//! non-root user could not. This finds those entries (the executor masks
//! each); the criterion is a pure function of mode, owner and access ACL.
//!
//! Scanned: every top-level directory of `/` and the files directly in
//! it, but the kernel's and the runtime's file systems (/proc, /sys,
//! /dev: handled by `kernel_root_only` and the plan; /run, /tmp: replaced
//! in sessions) and the package-managed trees (/usr, /bin, /sbin, /lib*:
//! world-readable by convention; /usr/local is scanned, and Nix's store),
//! the home (an empty tmpfs in sessions) and the workspace. A directory
//! that root alone may enter is masked whole, without looking inside.
//! What is made after the scan (within the launch's milliseconds, or
//! while the session runs) is not hidden: the kernel-enforced mechanism
//! has no such window, this one does (docs/defences.md).

use crate::nofollow;
use crate::sandbox::fsview::Kind;
use nix::sys::stat::{FileStat, SFlag};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Top-level directories never walked: kernel and runtime file systems,
/// private temporary directories, the package-managed trees.
const NOT_WALKED: &[&str] = &["proc", "sys", "dev", "run", "tmp", "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"];
/// Walked besides the top-level directories (inside a package tree).
const ALSO_WALKED: &[&str] = &["/usr/local"];
/// Never scanned: replaced inside sessions, or not secrets' places — the
/// package databases' file lists, which the package managers write
/// world-readable (dpkg's is about half of a Debian system's scan), and
/// Nix's store (read-only and world-readable by design).
const SKIPPED: &[&str] = &["/var/tmp", "/var/run", "/var/lib/dpkg/info", "/nix/store", CANARIES];

/// Where `verify` plants the canaries of one run each: not walked (a
/// parallel run's canaries would vanish under a session's masks); each run
/// names its own (`Scan::extra`).
pub const CANARIES: &str = "/var/lib/agent-sandbox/verify";

/// The trees the scan walks here: every top-level directory but
/// `NOT_WALKED` (a link at the top, such as a merged /lib, is not a tree of
/// its own), then `ALSO_WALKED`.
pub fn trees() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| !NOT_WALKED.contains(&n)))
        .collect();
    v.sort();
    v.extend(ALSO_WALKED.iter().map(PathBuf::from));
    v
}

/// The right an entry of `kind` is used with: connect (write) for a
/// socket, list and enter for a directory, read for anything else.
fn needs(kind: Kind) -> u32 {
    match kind {
        Kind::Socket => 0o2,
        Kind::Dir => 0o5,
        _ => 0o4,
    }
}

/// Whether uid 0 / gid 0 without capabilities may use an entry that a user
/// who is neither may not (read a file, list or enter a directory,
/// connect to a socket), by its mode alone.
fn root_only(kind: Kind, mode: u32, uid: u32, gid: u32) -> bool {
    root_only_with(kind, mode, uid, gid, None)
}

/// The same with the entry's access ACL (`system.posix_acl_access`): a
/// named entry for uid 0 or a group entry for gid 0 can grant root what
/// the mode alone does not.
fn root_only_with(kind: Kind, mode: u32, uid: u32, gid: u32, acl: Option<&Acl>) -> bool {
    let bits = |shift: u32| (mode >> shift) & 0o7;
    let root = match acl {
        Some(a) => a.access_of_root(uid, gid).unwrap_or(0),
        None if uid == 0 => bits(6),
        None if gid == 0 => bits(3),
        None => bits(0),
    };
    let other = bits(0);
    let n = needs(kind);
    // Any right root has here (of those that matter) that others lack.
    (root & n) & !(other & n) != 0
}

/// A POSIX access ACL as the kernel stores it (xattr version 2).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Acl {
    /// (tag, permission bits, id) per entry.
    entries: Vec<(u16, u32, u32)>,
}

const ACL_USER_OBJ: u16 = 0x01;
const ACL_USER: u16 = 0x02;
const ACL_GROUP_OBJ: u16 = 0x04;
const ACL_GROUP: u16 = 0x08;
const ACL_MASK: u16 = 0x10;

impl Acl {
    /// Parses the xattr's bytes; None for anything malformed.
    pub(crate) fn parse(b: &[u8]) -> Option<Acl> {
        let (head, rest) = b.split_at_checked(4)?;
        if u32::from_le_bytes(head.try_into().ok()?) != 2 || rest.len() % 8 != 0 {
            return None;
        }
        let entries = rest
            .chunks(8)
            .map(|c| (u16::from_le_bytes([c[0], c[1]]), u32::from(u16::from_le_bytes([c[2], c[3]])), u32::from_le_bytes([c[4], c[5], c[6], c[7]])))
            .collect();
        Some(Acl { entries })
    }

    /// What uid 0 in gid 0 (and no other group) may do with a file owned
    /// by `uid`:`gid`, as the kernel's ACL check decides it; None if the
    /// ACL lacks its required entries.
    fn access_of_root(&self, uid: u32, gid: u32) -> Option<u32> {
        let get = |tag: u16, id: Option<u32>| self.entries.iter().find(|(t, _, i)| *t == tag && id.is_none_or(|x| x == *i)).map(|(_, p, _)| *p);
        if uid == 0 {
            return get(ACL_USER_OBJ, None);
        }
        let mask = get(ACL_MASK, None).unwrap_or(0o7);
        if let Some(p) = get(ACL_USER, Some(0)) {
            return Some(p & mask);
        }
        // Root's groups: gid 0 only. The owning group, or a named gid-0 entry.
        let mut groups = Vec::new();
        if gid == 0 {
            groups.extend(get(ACL_GROUP_OBJ, None));
        }
        groups.extend(get(ACL_GROUP, Some(0)));
        if let Some(p) = groups.into_iter().reduce(|a, b| a | b) {
            return Some(p & mask);
        }
        get(0x20, None)
    }
}

/// The access ACL of `name` in `dir` (not following a link), if it has one.
fn acl_at(dir: std::os::fd::RawFd, name: &std::ffi::OsStr) -> Option<Acl> {
    let path = format!("/proc/self/fd/{dir}/{}", name.to_string_lossy());
    let c = std::ffi::CString::new(path).ok()?;
    let mut buf = [0u8; 512];
    // SAFETY: lgetxattr writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::lgetxattr(c.as_ptr(), c"system.posix_acl_access".as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(n).ok().and_then(|n| Acl::parse(buf.get(..n)?))
}

/// The kernel's interfaces only root may read in a session's fresh /proc
/// (`/proc/slabinfo`, `/proc/kpageflags`, `/proc/timer_list`... and root's
/// sysctls under /proc/sys) and in the parts of /sys a scanned session
/// sees (`sys_trees`): for the plan to mask. Process directories are the
/// session's own; so are the network sysctls (/proc/sys/net) of a session
/// in its own network namespace (`own_netns`: the jail's), which show its
/// namespace's values, not the host's, and whose per-interface entries do
/// not exist there.
pub(crate) fn kernel_root_only(sys_trees: &[PathBuf], own_netns: bool) -> Vec<(PathBuf, Kind)> {
    let keep: [PathBuf; 0] = [];
    let mut walk = Walk { keep: &keep, home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new(), acls: false };
    if let Ok(proc_) = nofollow::open_dir(Path::new("/proc")) {
        let _ = walk.each(&proc_, |w, name, st, _| {
            let n = name.to_bytes();
            let own = n.iter().all(u8::is_ascii_digit) || n == b"self" || n == b"thread-self";
            match st {
                Ok(st) if !own && kind_of(st.st_mode) != Kind::Dir => w.judge_at(Path::new("/proc").join(std::ffi::OsStr::from_bytes(n)), &st, None),
                _ => {}
            }
        });
    }
    for tree in std::iter::once(Path::new("/proc/sys")).chain(sys_trees.iter().map(PathBuf::as_path)) {
        if let Ok(dir) = open_dir(None, tree) {
            walk.read(dir, tree, 0);
        }
    }
    walk.found.retain(|(p, _)| !(own_netns && p.starts_with("/proc/sys/net")));
    walk.found.sort_by(|a, b| a.0.cmp(&b.0));
    walk.found
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
    let mut walk = Walk { keep, home, found: Vec::new(), seen: 0, buf: Vec::new(), acls: true };
    for p in extra {
        if let Ok(st) = nofollow::stat_at(libc::AT_FDCWD, p.as_os_str()) {
            let acl = p.parent().and_then(|d| nofollow::open_dir(d).ok()).and_then(|d| acl_at(d.as_raw_fd(), p.file_name().unwrap_or_default()));
            walk.judge_at(p.clone(), &st, acl.as_ref());
        }
    }
    // Files directly in `/` (not its directories: those are trees above
    // or system trees).
    if let Ok(root) = nofollow::open_dir(Path::new("/")) {
        walk.files_of_root(&root);
    }
    for tree in trees() {
        let Ok(st) = nofollow::stat_at(libc::AT_FDCWD, tree.as_os_str()) else { continue };
        let acl = nofollow::open_dir(Path::new("/")).ok().and_then(|r| acl_at(r.as_raw_fd(), tree.strip_prefix("/").unwrap_or(&tree).as_os_str()));
        if kind_of(st.st_mode) == Kind::Dir && walk.enter(&tree, &st, acl.as_ref()) {
            if let Ok(dir) = open_dir(None, &tree) {
                walk.read(dir, &tree, 0);
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
        (Some(p), Some(name)) => nofollow::open_dir_at(p.as_raw_fd(), name),
        // Relative to nothing: an absolute path ignores the directory.
        _ => nofollow::open_dir_at(libc::AT_FDCWD, path.as_os_str()),
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
    /// Whether access ACLs are read (kernel file systems have none).
    acls: bool,
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
    fn judge_at(&mut self, p: PathBuf, st: &FileStat, acl: Option<&Acl>) {
        let k = kind_of(st.st_mode);
        if !is_link(st) && root_only_with(k, st.st_mode, st.st_uid, st.st_gid, acl) && !self.keep.contains(&p) {
            self.found.push((p, k));
        }
    }

    /// The ACL of `name` in `dir`, where it could decide: the mode alone
    /// does not make the entry root's, and others lack a right it needs.
    fn acl_if_deciding(&self, dir: std::os::fd::RawFd, name: &std::ffi::CStr, st: &FileStat) -> Option<Acl> {
        let k = kind_of(st.st_mode);
        let open_to_all = st.st_mode & needs(k) == needs(k);
        if !self.acls || is_link(st) || open_to_all || root_only(k, st.st_mode, st.st_uid, st.st_gid) {
            return None;
        }
        acl_at(dir, std::ffi::OsStr::from_bytes(name.to_bytes()))
    }

    /// Whether a directory is read: not when skipped, and not when root
    /// alone may use it (then it is masked whole, unless it holds a kept
    /// path, which must stay reachable).
    fn enter(&mut self, dir: &Path, st: &FileStat, acl: Option<&Acl>) -> bool {
        if self.skipped(dir) {
            return false;
        }
        if root_only_with(Kind::Dir, st.st_mode, st.st_uid, st.st_gid, acl) && !self.holds_kept(dir) {
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
    fn each(&mut self, dir: &OwnedFd, mut f: impl FnMut(&mut Self, &std::ffi::CStr, nix::Result<FileStat>, Option<Acl>)) -> nix::Result<()> {
        let raw = dir.as_raw_fd();
        let mut buf = std::mem::take(&mut self.buf);
        let mut listed = Vec::new();
        let done = nofollow::each_entry(raw, &mut buf, |name, ty| {
            if ty != libc::DT_LNK {
                listed.push((name.to_owned(), nofollow::stat_at(raw, std::ffi::OsStr::from_bytes(name.to_bytes()))));
            }
            self.seen += 1;
        });
        self.buf = buf;
        for (name, st) in listed {
            let acl = st.as_ref().ok().and_then(|st| self.acl_if_deciding(raw, &name, st));
            f(self, &name, st, acl);
        }
        done
    }

    /// The files (not directories) directly in `/`.
    fn files_of_root(&mut self, root: &OwnedFd) {
        let _ = self.each(root, |w, name, st, acl| match st {
            Ok(st) if kind_of(st.st_mode) != Kind::Dir => w.judge_at(Path::new("/").join(std::ffi::OsStr::from_bytes(name.to_bytes())), &st, acl.as_ref()),
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
        let listed = self.each(&dir, |w, name, st, acl| {
            let p = path.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
            match st {
                Ok(st) if kind_of(st.st_mode) == Kind::Dir => {
                    if w.enter(&p, &st, acl.as_ref()) {
                        subdirs.push(p);
                    }
                }
                Ok(st) => w.judge_at(p, &st, acl.as_ref()),
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
    let r_fd = r.as_raw_fd();
    // SAFETY: the launcher is single-threaded when it starts the scan; the
    // child scans and writes its findings.
    let child = unsafe {
        crate::child::run(move || {
            // The read end is the parent's.
            let _ = nix::unistd::close(r_fd);
            let bytes = encode(&scan(keep, home, extra));
            i32::from(std::fs::File::from(w).write_all(&bytes).is_err())
        })
    }?;
    // The write end went with the closure (dropped here, the parent's
    // copy): the scan's end is the pipe's.
    Ok(Pending { pid: child, findings: r })
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
        let mut walk = Walk { keep: &[], home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new(), acls: true };
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
        let mut walk = Walk { keep: &[], home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new(), acls: true };
        walk.read(fd(), &odd, 0);
        assert_eq!(walk.found, vec![(odd.clone(), Kind::Other)]);
        let keep = [odd.join("workspace")];
        let mut walk = Walk { keep: &keep, home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new(), acls: true };
        walk.read(fd(), &odd, 0);
        assert_eq!(walk.found, vec![]);
    }

    /// An ACL that grants root alone what the mode does not: a named user
    /// entry for uid 0 (under the mask), a named group entry for gid 0, the
    /// owning group 0; one that grants others as much is not root's.
    #[test]
    fn acls_are_judged() {
        let acl = |entries: &[(u16, u16, u32)]| {
            let mut b = 2u32.to_le_bytes().to_vec();
            for (tag, perm, id) in entries {
                b.extend(tag.to_le_bytes());
                b.extend(perm.to_le_bytes());
                b.extend(id.to_le_bytes());
            }
            Acl::parse(&b).unwrap()
        };
        let (uo, u, go, g, m, o) = (ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, 0x20);
        const ANY: u32 = u32::MAX;
        // 0000 owned by 1000, `user:root:r--`: root only.
        let named_root = acl(&[(uo, 0, ANY), (u, 4, 0), (go, 0, ANY), (m, 4, ANY), (o, 0, ANY)]);
        assert!(root_only_with(Kind::File, 0o000, 1000, 1000, Some(&named_root)));
        // The mask takes it away.
        let masked = acl(&[(uo, 0, ANY), (u, 4, 0), (go, 0, ANY), (m, 0, ANY), (o, 0, ANY)]);
        assert!(!root_only_with(Kind::File, 0o000, 1000, 1000, Some(&masked)));
        // `group:root:r-x` on a directory of another user's.
        let named_group = acl(&[(uo, 7, ANY), (go, 0, ANY), (g, 5, 0), (m, 5, ANY), (o, 0, ANY)]);
        assert!(root_only_with(Kind::Dir, 0o750, 1000, 1000, Some(&named_group)));
        // Others may read too: not root's alone.
        let open = acl(&[(uo, 6, ANY), (u, 4, 0), (go, 4, ANY), (m, 4, ANY), (o, 4, ANY)]);
        assert!(!root_only_with(Kind::File, 0o644, 1000, 1000, Some(&open)));
        // Owned by root: the owner entry decides.
        assert!(root_only_with(Kind::File, 0o600, 0, 0, Some(&acl(&[(uo, 6, ANY), (go, 0, ANY), (o, 0, ANY)]))));
        assert_eq!(Acl::parse(&[1, 0, 0, 0]), None);
        assert_eq!(Acl::parse(&[2, 0, 0, 0, 1]), None);
    }

    /// The real thing: a file whose only grant to root is an ACL entry,
    /// and a root-only file in a top-level directory of its own, are found.
    #[test]
    fn a_file_granted_to_root_by_acl_is_found() {
        let t = tempfile::Builder::new().prefix("acl").tempdir_in("/var/tmp").unwrap();
        let f = t.path().join("acl-only");
        std::fs::write(&f, b"x").unwrap();
        std::fs::set_permissions(&f, std::os::unix::fs::PermissionsExt::from_mode(0o000)).unwrap();
        nix::unistd::chown(&f, Some(nix::unistd::Uid::from_raw(1000)), Some(nix::unistd::Gid::from_raw(1000))).unwrap();
        let mut b = 2u32.to_le_bytes().to_vec();
        for (tag, perm, id) in [(ACL_USER_OBJ, 0u16, u32::MAX), (ACL_USER, 4, 0), (ACL_GROUP_OBJ, 0, u32::MAX), (ACL_MASK, 4, u32::MAX), (0x20, 0, u32::MAX)] {
            b.extend(tag.to_le_bytes());
            b.extend(perm.to_le_bytes());
            b.extend(id.to_le_bytes());
        }
        let c = std::ffi::CString::new(f.as_os_str().as_bytes()).unwrap();
        // SAFETY: setxattr reads `b` (live for the call) and the path.
        let rc = unsafe { libc::setxattr(c.as_ptr(), c"system.posix_acl_access".as_ptr(), b.as_ptr().cast(), b.len(), 0) };
        assert_eq!(rc, 0, "setting the ACL: {}", std::io::Error::last_os_error());
        let mut walk = Walk { keep: &[], home: Path::new("/nonexistent"), found: Vec::new(), seen: 0, buf: Vec::new(), acls: true };
        walk.read(open_dir(None, t.path()).unwrap(), t.path(), 0);
        assert_eq!(walk.found, vec![(f, Kind::File)]);
    }

    #[test]
    fn every_top_level_tree_but_the_kernels_and_the_packages_is_walked() {
        let t = trees();
        for kept in ["/etc", "/var", "/root", "/usr/local"] {
            assert!(t.contains(&PathBuf::from(kept)), "{kept}: {t:?}");
        }
        for not in ["/proc", "/sys", "/dev", "/usr", "/tmp", "/run"] {
            assert!(!t.contains(&PathBuf::from(not)), "{not}: {t:?}");
        }
        // The kernel's root-only files in /proc are found (this kernel has
        // /proc/slabinfo 0400, as every kernel with SLUB does).
        let k = kernel_root_only(&[], true);
        assert!(!k.iter().any(|(p, _)| p.starts_with("/proc/sys/net")), "{k:?}");
        assert!(k.contains(&(PathBuf::from("/proc/slabinfo"), Kind::File)), "{k:?}");
        assert!(!k.iter().any(|(p, _)| p.starts_with("/proc/self") || p.starts_with("/proc/1/")), "{k:?}");
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
