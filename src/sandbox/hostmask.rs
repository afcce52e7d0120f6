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
use std::path::Path;

/// Where the empty file is staged (a private tmpfs over it, detached
/// again before bwrap starts).
const STAGING: &str = "/tmp";

/// Mounts the masks (steps 1-5). `in_userns`: this process already owns
/// a user namespace (the jail's holder). `uid`/`gid`: the launcher's.
pub fn apply(masks: &[&Path], in_userns: bool, uid: u32, gid: u32) -> Result<(), Error> {
    if masks.is_empty() {
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
    let staged = std::fs::write(&empty, b"").and_then(|()| masks.iter().try_for_each(|p| mask(p, &empty)));
    let detached = umount2(STAGING, MntFlags::MNT_DETACH);
    staged?;
    detached.map_err(Error::from)
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
