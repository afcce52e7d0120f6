//! Mounting by descriptor: every mount the launcher makes lands on the very
//! object it opened (walked without following anything, `nofollow`), and
//! takes its source from a descriptor too, so no name a running session
//! controls is resolved between the check and the mount. Also the user
//! namespaces that idmapped mounts take their mapping from.
//!
//! Two generations of the kernel's interface: `mount(2)` on `/proc/self/fd`
//! links (every kernel: new tmpfs mounts and binds whose read-only-ness
//! comes from their source's superblock), and the mount API (`open_tree`,
//! `move_mount`: Linux 5.2; `mount_setattr`, idmapped mounts: 5.12) for
//! read-only binds of writable sources and idmapped ones.
//!
//! Only the syscalls here; what to mount where is `hostview`'s.

use nix::mount::{mount, MsFlags};
use std::io::Error;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const OPEN_TREE_CLONE: libc::c_uint = 1;
const OPEN_TREE_CLOEXEC: libc::c_uint = libc::O_CLOEXEC as libc::c_uint;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_IDMAP: u64 = 0x0010_0000;

/// `struct mount_attr` (linux/mount.h), the first version (32 bytes).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `/proc/self/fd/N`: the object behind a descriptor, reached without a
/// path walk (a "magic link").
fn fd_path(fd: RawFd) -> String {
    format!("/proc/self/fd/{fd}")
}

fn check(rc: libc::c_long) -> Result<libc::c_long, Error> {
    if rc < 0 {
        Err(Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A detached copy of the mount tree at `fd` (with its submounts when
/// `recursive`), not yet visible anywhere.
pub(crate) fn clone_tree(fd: RawFd, recursive: bool) -> Result<OwnedFd, Error> {
    let flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | libc::AT_EMPTY_PATH as libc::c_uint | if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: open_tree reads the empty path string and returns a new
    // descriptor (checked), which is owned here only.
    let rc = check(unsafe { libc::syscall(libc::SYS_open_tree, fd, c"".as_ptr(), flags) })?;
    // SAFETY: a new descriptor owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) })
}

fn set_attr(mnt: RawFd, attr: &MountAttr, recursive: bool) -> Result<(), Error> {
    let flags = libc::AT_EMPTY_PATH as libc::c_uint | if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr reads `attr` (a live, correctly sized value)
    // and the empty path; it changes only the detached mount `mnt`.
    check(unsafe { libc::syscall(libc::SYS_mount_setattr, mnt, c"".as_ptr(), flags, attr as *const MountAttr, std::mem::size_of::<MountAttr>()) }).map(|_| ())
}

/// Makes the detached tree `mnt` show file owners through the id mapping
/// of the user namespace `userns` (Linux 5.12+, where the file system
/// supports it), nosuid and nodev, its submounts too.
pub fn idmap(mnt: RawFd, userns: RawFd) -> Result<(), Error> {
    set_attr(mnt, &MountAttr { attr_set: MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, attr_clr: 0, propagation: 0, userns_fd: userns as u64 }, true)
}

/// Sets `set` and clears `clr` (`MOUNT_ATTR_*`) on the mount `mnt` (and
/// its submounts when `recursive`); detached or attached.
fn set_flags(mnt: RawFd, set: u64, clr: u64, recursive: bool) -> Result<(), Error> {
    set_attr(mnt, &MountAttr { attr_set: set, attr_clr: clr, propagation: 0, userns_fd: 0 }, recursive)
}

/// The host's tree as sessions get it underneath everything mounted for
/// them (Linux 5.12+): `root` (this namespace's `/`, opened) and every
/// mount below it read-only, nosuid and nodev in one call; then `/dev`
/// itself writable and with devices again (bwrap binds its device nodes
/// from there; its own `/dev` covers it) and `/proc` itself writable (bwrap
/// writes the session's id maps through it; its fresh `/proc` covers it,
/// or, under a masked `/proc`, the session writes its nested namespaces'
/// maps there). Not what is mounted in them: in a user namespace a
/// container's `/dev/shm` and `/dev/mqueue` are locked nodev, a runtime's
/// read-only paths in `/proc` locked read-only (and to stay so), and one
/// locked flag refuses the whole call; bwrap needs none of them. Locked
/// flags are only ever set here, never cleared.
pub fn host_read_only(root: RawFd, dev: Option<RawFd>, proc_: Option<RawFd>) -> Result<(), Error> {
    set_flags(root, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0, true)?;
    if let Some(d) = dev {
        set_flags(d, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV, false)?;
        dev_nodes_as_they_were(d);
    }
    if let Some(p) = proc_ {
        set_flags(p, 0, MOUNT_ATTR_RDONLY, false)?;
    }
    Ok(())
}

/// Where one of the host's device nodes bwrap binds into the session's
/// fresh `/dev` (`mounts::DEV_HOST_NODES`) is a mount of its own (a container in a user
/// namespace gets the host's nodes bound in, as it may not make device
/// nodes), the flags `host_read_only` just set on it are cleared again:
/// bwrap binds it with the flags it has, and a read-only, nodev
/// `/dev/null` would reach the session. A node that is no mount root
/// (EINVAL) has `/dev`'s flags; one whose flags are locked (EPERM) was
/// read-only or nodev before, and stays so.
fn dev_nodes_as_they_were(dev: RawFd) {
    for name in crate::sandbox::mounts::DEV_HOST_NODES {
        let flags = nix::fcntl::OFlag::O_PATH | nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_CLOEXEC;
        let Ok(node) = nix::fcntl::openat(Some(dev), name, flags, nix::sys::stat::Mode::empty()) else { continue };
        // SAFETY: a new descriptor owned only here.
        let node = unsafe { OwnedFd::from_raw_fd(node) };
        let _ = set_flags(node.as_raw_fd(), 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV, false);
    }
}

/// Makes the detached tree `mnt` (submounts too) nosuid and nodev, and
/// read-only when `read_only`: what bwrap's `--bind`/`--ro-bind` give.
pub(crate) fn bind_flags(mnt: RawFd, read_only: bool) -> Result<(), Error> {
    set_flags(mnt, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | if read_only { MOUNT_ATTR_RDONLY } else { 0 }, 0, true)
}

/// A new writable tmpfs (nosuid, nodev) on the directory `target` is open
/// on; `options` as mount(8) takes them (mode, uid, gid).
pub(crate) fn tmpfs_onto(target: RawFd, options: &str) -> Result<(), Error> {
    let flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    mount(Some("tmpfs"), fd_path(target).as_str(), Some("tmpfs"), flags, Some(options)).map_err(Error::from)
}

/// Makes the (detached or attached) mount `mnt` read-only, nosuid, nodev,
/// its submounts too: `mount_setattr` (5.12), else a remount through the
/// descriptor (which names the mount itself once it is attached).
pub fn read_only(mnt: RawFd) -> Result<(), Error> {
    match set_attr(mnt, &MountAttr { attr_set: MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, attr_clr: 0, propagation: 0, userns_fd: 0 }, true) {
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            let flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
            mount(None::<&str>, fd_path(mnt).as_str(), None::<&str>, flags, None::<&str>).map_err(Error::from)
        }
        other => other,
    }
}

/// Attaches the detached tree `mnt` on the object `target` is open on.
pub fn attach(mnt: RawFd, target: RawFd) -> Result<(), Error> {
    let flags = MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH;
    // SAFETY: move_mount reads two empty path strings; both descriptors are
    // the caller's, borrowed for the call.
    check(unsafe { libc::syscall(libc::SYS_move_mount, mnt, c"".as_ptr(), target, c"".as_ptr(), flags) }).map(|_| ())
}

/// Binds the object `src` is open on (with its submounts) onto the one
/// `target` is open on, both reached through their descriptors.
pub fn bind(src: RawFd, target: RawFd) -> Result<(), Error> {
    let flags = MsFlags::MS_BIND | MsFlags::MS_REC;
    mount(Some(fd_path(src).as_str()), fd_path(target).as_str(), None::<&str>, flags, None::<&str>).map_err(Error::from)
}

/// A new, empty, read-only tmpfs on the directory `target` is open on.
pub(crate) fn empty_dir_onto(target: RawFd) -> Result<(), Error> {
    let flags = MsFlags::MS_RDONLY | MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    mount(Some("tmpfs"), fd_path(target).as_str(), Some("tmpfs"), flags, Some("mode=0555,size=4k")).map_err(Error::from)
}

/// How much of the mount API this kernel (and the container's seccomp
/// profile) offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MountApi {
    /// Neither: every mount is bwrap's, by path.
    None,
    /// `open_tree` and `move_mount` (Linux 5.2+): mounts inside the places
    /// sessions write are made by descriptor (`premount`).
    Tree,
    /// Also `mount_setattr` (Linux 5.12+): the executor makes the whole
    /// view; bwrap adds the namespaces, `/dev` and `/proc`.
    Full,
}

/// Asks the kernel which calls exist (an invalid descriptor or flags: each
/// only returns an error, ENOSYS where the call is missing, EPERM where a
/// seccomp profile refuses it). Whether this process may use them does not
/// count: the executor uses them in the session's own mount namespace, in
/// a user namespace of its own where the launcher is not root. So
/// `mount_setattr` is asked with flags it rejects (EINVAL) before it looks
/// at the caller's rights (EPERM for a non-root launcher here, which would
/// leave bwrap remounting every host mount by path, racing the host's
/// mounts as they come and go).
pub(crate) fn mount_api() -> MountApi {
    let missing = |rc: libc::c_long| rc < 0 && matches!(Error::last_os_error().raw_os_error(), Some(libc::ENOSYS | libc::EPERM));
    // SAFETY: open_tree on an invalid descriptor only returns an error.
    if missing(unsafe { libc::syscall(libc::SYS_open_tree, -1, c"".as_ptr(), libc::AT_EMPTY_PATH as libc::c_uint) }) {
        return MountApi::None;
    }
    let attr = MountAttr { attr_set: 0, attr_clr: 0, propagation: 0, userns_fd: 0 };
    // Not one of the flags mount_setattr takes.
    const UNKNOWN_FLAG: libc::c_uint = 1;
    // SAFETY: mount_setattr with unknown flags reads nothing and returns
    // an error.
    let rc = unsafe { libc::syscall(libc::SYS_mount_setattr, -1, c"".as_ptr(), UNKNOWN_FLAG, &attr as *const MountAttr, std::mem::size_of::<MountAttr>()) };
    if missing(rc) {
        MountApi::Tree
    } else {
        MountApi::Full
    }
}

/// A user namespace whose id maps are `uid_map` and `gid_map` (lines as
/// written to `/proc/PID/uid_map`), as a descriptor: the mapping of
/// idmapped mounts. Needs the right to write such maps (root).
///
/// A child is born in the new namespace (`CLONE_NEWUSER`) sharing this
/// process's memory (`CLONE_VM`: no copy of the page tables, which a fork
/// of the launcher costs), on a small stack of its own, where it only
/// waits; its maps are written and the namespace opened from here, then
/// it is killed and reaped. The child touches nothing but its stack and
/// raw system calls (no allocator, no locks, no thread-local state).
pub(crate) fn userns_with_maps(uid_map: &str, gid_map: &str) -> Result<OwnedFd, Error> {
    extern "C" fn wait_forever(_: *mut libc::c_void) -> libc::c_int {
        loop {
            // SAFETY: pause takes no arguments and only waits for a signal
            // (musl's pause is ppoll with no descriptors where the
            // architecture has no pause call, as on aarch64).
            unsafe { libc::pause() };
        }
    }
    const STACK: usize = 16 * 1024;
    let mut stack = vec![0u8; STACK];
    // The stack grows down on every architecture this ships for; 16-byte
    // aligned top.
    let top = (stack.as_mut_ptr() as usize + STACK) & !15;
    let flags = libc::CLONE_NEWUSER | libc::CLONE_VM | libc::SIGCHLD;
    // SAFETY: `wait_forever` runs on `stack`, which outlives the child (it
    // is killed and reaped below before `stack` is dropped), and makes
    // only raw system calls, so sharing this process's memory is sound.
    let pid = unsafe { libc::clone(wait_forever, top as *mut libc::c_void, flags, std::ptr::null_mut()) };
    if pid < 0 {
        return Err(Error::other(format!("the id-mapping child could not make a user namespace: {}", Error::last_os_error())));
    }
    let result = write_maps(pid, uid_map, gid_map);
    let child = nix::unistd::Pid::from_raw(pid);
    let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
    let _ = nix::sys::wait::waitpid(child, None);
    drop(stack);
    result
}

fn write_maps(pid: i32, uid_map: &str, gid_map: &str) -> Result<OwnedFd, Error> {
    // Root writes them: groups map without denying setgroups.
    crate::idmap::write(crate::idmap::Whose::Pid(pid), uid_map, gid_map, crate::idmap::Setgroups::Keep)?;
    let f = std::fs::File::open(format!("/proc/{pid}/ns/user"))?;
    Ok(OwnedFd::from(f))
}

/// The id map lines that exchange `owner` and `outer` and keep every other
/// id as it is (inside = outside): a file `owner` owns shows as `outer`'s
/// through the mount, and what `outer` creates there is `owner`'s on disk.
pub(crate) fn swap_map(owner: u32, outer: u32) -> String {
    // The last id (u32::MAX) is "no id" and cannot be mapped.
    const END: u64 = u32::MAX as u64;
    if owner == outer {
        return format!("0 0 {END}\n");
    }
    let (lo, hi) = (u64::from(owner.min(outer)), u64::from(owner.max(outer)));
    // Inside ids in order: [0, lo) as themselves, lo as hi, (lo, hi) as
    // themselves, hi as lo, (hi, END) as themselves.
    let segments = [(0, 0, lo), (lo, hi, 1), (lo + 1, lo + 1, hi - lo - 1), (hi, lo, 1), (hi + 1, hi + 1, END - hi - 1)];
    segments.iter().filter(|(_, _, n)| *n > 0).map(|(i, o, n)| format!("{i} {o} {n}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Each line "inside outside count"; the whole map as pairs to check.
    fn lookup(map: &str, inside: u32) -> Option<u32> {
        map.lines().find_map(|l| {
            let f: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
            (f[0]..f[0] + f[2]).contains(&u64::from(inside)).then(|| (f[1] + u64::from(inside) - f[0]) as u32)
        })
    }

    #[test]
    fn the_swap_map_exchanges_two_ids_and_keeps_the_rest() {
        for (owner, outer) in [(0, 65533), (1000, 65533), (65533, 0), (70000, 65533), (5, 5)] {
            let m = swap_map(owner, outer);
            assert!(m.lines().count() <= 5, "{m}");
            assert_eq!(lookup(&m, owner), Some(outer), "{owner}->{outer}\n{m}");
            assert_eq!(lookup(&m, outer), Some(owner), "{m}");
            for other in [1, 2, 999, 1001, 65532, 65534, 100_000, u32::MAX - 1] {
                if other != owner && other != outer {
                    assert_eq!(lookup(&m, other), Some(other), "{other}\n{m}");
                }
            }
            assert_eq!(lookup(&m, u32::MAX), None, "{m}");
            // Ranges do not overlap, inside or outside.
            let mut inside: Vec<(u64, u64)> = Vec::new();
            for l in m.lines() {
                let f: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
                assert!(inside.iter().all(|(a, n)| f[0] + f[2] <= *a || a + n <= f[0]), "{m}");
                inside.push((f[0], f[2]));
            }
        }
    }

    /// The real thing, as root: a file root owns reads as `outer`'s through
    /// an idmapped clone, and what `outer` creates lands as root's.
    #[test]
    fn an_idmapped_clone_shows_and_writes_the_swapped_owner() {
        use std::os::unix::fs::MetadataExt;
        if !nix::unistd::geteuid().is_root() {
            panic!("this test makes idmapped mounts: run it as root");
        }
        let dir = tempfile::Builder::new().prefix("idmap").tempdir_in("/var/tmp").unwrap();
        std::fs::write(dir.path().join("f"), b"x").unwrap();
        let outer = 65533;
        // In a child with a mount namespace of its own.
        let child = crate::jail::fork_child("test", || {
            let run = || -> Result<(u32, u32), Error> {
                nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)?;
                mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)?;
                let userns = userns_with_maps(&swap_map(0, outer), &swap_map(0, outer))?;
                let src = crate::nofollow::open_root(dir.path())?;
                let mnt = clone_tree(src.as_raw_fd(), true)?;
                idmap(mnt.as_raw_fd(), userns.as_raw_fd())?;
                attach(mnt.as_raw_fd(), src.as_raw_fd())?;
                let shown = std::fs::metadata(dir.path().join("f"))?.uid();
                nix::unistd::setresgid(outer.into(), outer.into(), outer.into())?;
                nix::unistd::setresuid(outer.into(), outer.into(), outer.into())?;
                std::fs::write(dir.path().join("new"), b"y")?;
                Ok((shown, std::fs::metadata(dir.path().join("new"))?.uid()))
            };
            match run() {
                Ok((65533, 65533)) => 0,
                Ok(_) => 2,
                Err(_) => 3,
            }
        })
        .unwrap();
        let st = nix::sys::wait::waitpid(child, None).unwrap();
        assert_eq!(st, nix::sys::wait::WaitStatus::Exited(child, 0));
        // Outside the mapping: root's file stays root's, the new one is root's.
        assert_eq!(std::fs::metadata(dir.path().join("f")).unwrap().uid(), 0);
        assert_eq!(std::fs::metadata(dir.path().join("new")).unwrap().uid(), 0);
    }
}
