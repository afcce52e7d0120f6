//! Masks over what only root may use (`rootscan`) and the plan's early
//! masks (`Mount::EarlyMask`: the workspace's hidden siblings), mounted by
//! the process that becomes bwrap, in a private mount namespace of its
//! own, just before it does. bwrap's recursive bind of `/` then carries them into the
//! session, locked there like every mount from a more privileged namespace.
//!
//! Why not as bwrap arguments: bwrap must create a missing mount point,
//! which fails on the read-only root, so an entry that vanished between
//! the scan and bwrap's setup (a temporary directory, a rotated log) made
//! the launch fail. Here a vanished entry is simply skipped: nothing is
//! left to hide.
//!
//! Order (the process must be single-threaded; it execs bwrap next):
//! 1. outside the jail, a user namespace of its own (the launcher's id as
//!    `nobody` inside, as the jail's holder does) for the right to mount;
//!    in the jail the holder already has one;
//! 2. a new mount namespace, made private;
//! 3. an empty file on a private tmpfs (bind sources must be mounts of
//!    this namespace);
//! 4. each entry, as it is now: a directory gets an empty read-only tmpfs,
//!    anything else the empty file bound read-only; missing ones skipped;
//! 5. the staging tmpfs detached.

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sched::{unshare, CloneFlags};
use std::io::Error;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// Where the empty file is staged (a private tmpfs over it, detached
/// again before bwrap starts; kept when masks follow later, see
/// `mask_later`).
const STAGING: &str = "/tmp";

/// Masks that come later: the findings of a scan still running while
/// bwrap already sets up; `done` is where the outcome is reported (`1`,
/// or `0` and why), which the gate waits for.
pub struct Later<'a> {
    pub scan: &'a crate::sandbox::rootscan::Pending,
    pub done: &'a OwnedFd,
}

/// Mounts the masks (steps 1-5). `in_userns`: this process already owns
/// a user namespace (the jail's holder). `uid`/`gid`: the launcher's.
///
/// With `later` (in the jail only: the gate holds the command back):
/// after step 4 the namespace is made a shared peer group, and a process
/// forked off here mounts the later masks (no step 5) and reports;
/// this one goes on to exec bwrap at once. bwrap makes its copy of the
/// namespace a slave of this one, so mounts made here afterwards reach
/// the session (locked there, as every mount from a more privileged
/// namespace); each mask is read-only by its own superblock (a mount's
/// read-only flag does not travel with propagation).
pub fn apply(masks: &[&Path], in_userns: bool, uid: u32, gid: u32, later: Option<Later<'_>>) -> Result<(), Error> {
    if masks.is_empty() && later.is_none() {
        return Ok(());
    }
    if in_userns {
        unshare(CloneFlags::CLONE_NEWNS)?;
    } else {
        unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).map_err(|e| no_userns(uid, e))?;
        let inner = crate::jail::inner_id(uid);
        std::fs::write("/proc/self/uid_map", format!("{inner} {uid} 1\n"))?;
        std::fs::write("/proc/self/setgroups", "deny\n")?;
        std::fs::write("/proc/self/gid_map", format!("{} {gid} 1\n", crate::jail::inner_id(gid)))?;
    }
    let none: Option<&str> = None;
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none)?;
    mount(Some("tmpfs"), STAGING, Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, Some("mode=0700,size=64k"))?;
    let empty = Path::new(STAGING).join("empty");
    // The empty file's superblock read-only: every bind of it is.
    let staged = std::fs::write(&empty, b"")
        .and_then(|()| mount(none, STAGING, none, MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV, none).map_err(Error::from))
        .and_then(|()| masks.iter().try_for_each(|p| mask(p, &empty)));
    let Some(later) = later.filter(|_| staged.is_ok()) else {
        let detached = umount2(STAGING, MntFlags::MNT_DETACH);
        staged?;
        return detached.map_err(Error::from);
    };
    mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_SHARED, none)?;
    follow_up(&later, &empty)
}

/// Forks the process that mounts the later masks (twice, so the launcher,
/// a subreaper, adopts and reaps it; the process that becomes bwrap waits
/// only for the first fork). It keeps no descriptor but the two it needs:
/// a copy of the holder's channel would hide the exec of bwrap from the
/// launcher until it ends.
fn follow_up(later: &Later<'_>, empty: &Path) -> Result<(), Error> {
    let step = "forking the process that hides what only root may read";
    let grandchild = || crate::jail::fork_child(step, || mask_later(later, empty)).map_or(1, |_| 0);
    let child = crate::jail::fork_child(step, grandchild).map_err(Error::other)?;
    nix::sys::wait::waitpid(child, None)?;
    Ok(())
}

/// The forked process's work: the scan's findings masked, the outcome
/// reported. The staging tmpfs stays (read-only, empty but for the empty
/// file; under the session's own /tmp): detaching it would propagate an
/// unmount into bwrap's copy while bwrap may be remounting that copy
/// read-only, which bwrap takes as fatal (a session ended with status 1
/// before its command ran, once in a loaded test run).
fn mask_later(later: &Later<'_>, empty: &Path) -> i32 {
    crate::jail::close_fds_except(&[later.scan.fd(), later.done.as_raw_fd()]);
    let outcome = later.scan.findings().and_then(|found| found.iter().try_for_each(|(p, _)| mask(p, empty)));
    let word = match outcome {
        Ok(()) => b"1".to_vec(),
        Err(e) => format!("0cannot hide what only root may read: {e}").into_bytes(),
    };
    i32::from(nix::unistd::write(later.done, &word).is_err())
}

/// The refusal when no user namespace can be made: its cause and fix as
/// the jail names them (a seccomp profile, a sysctl, an emulator).
fn no_userns(uid: u32, e: nix::errno::Errno) -> Error {
    let (cause, fix) = crate::jail::userns_diagnosis(&crate::jail::current_userns_facts(), uid, e as i32);
    Error::other(format!(
        "hiding what only root may read (and the workspace's siblings) needs a user namespace, and user namespaces are not available: {cause}. Fix: {fix}"
    ))
}

fn mask(p: &Path, empty: &Path) -> Result<(), Error> {
    let none: Option<&str> = None;
    // As it is now: it may have gone, or changed kind, since the scan.
    let Ok(meta) = std::fs::symlink_metadata(p) else { return Ok(()) };
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    let r = if meta.is_dir() {
        mount(Some("tmpfs"), p, Some("tmpfs"), flags | MsFlags::MS_RDONLY, Some("mode=0555,size=4k"))
    } else {
        mount(Some(empty), p, none, MsFlags::MS_BIND, none)
            .and_then(|()| mount(none, p, none, flags | MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY, none))
    };
    match r {
        Ok(()) | Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR) => Ok(()),
        Err(e) => Err(Error::other(format!("cannot hide {} from the session: {e}", p.display()))),
    }
}
