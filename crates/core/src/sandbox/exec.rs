//! The one seam where a plan becomes a running session: create the agent
//! state directories, put the data files on their descriptors, close every
//! other inherited descriptor on exec, and exec bwrap with the plan's
//! environment. Nothing else in `sandbox` touches the system.
//!
//! Order (numbered because it matters):
//!  0. the host view (`hostview`): a mount namespace of this process's own
//!     with the premounts, the early masks, a root launcher's idmapped
//!     places and the drop to its unprivileged uid (or the scan's masks),
//!     carried into the session by bwrap's binds;
//!  1. data files into sealed-size memfds, rewound; paths the plan binds
//!     by descriptor opened without following anything, and checked to
//!     still be what the plan saw (a directory or a regular file);
//!  2. each memfd first moved above the target range, then onto
//!     FIRST_DATA_FD + i (so no target overwrites a memfd not yet moved);
//!  3. every descriptor above the data files marked close-on-exec, so no
//!     outer socket or pipe (an IDE's, a terminal multiplexer's) leaks in
//!     (except the jail's gate, which the jail put on `plan.gate_fd`);
//!  4. a new, empty session keyring (keys the launcher's session keyring
//!     holds — Kerberos KEYRING: caches, `keyctl` secrets — stay outside;
//!     user and persistent keyrings are per user namespace already; the
//!     session's seccomp profile refuses the keyring calls altogether, since
//!     keys are found by id whichever keyring holds them);
//!  5. where the kernel has it, Landlock's abstract unix socket scoping
//!     (`landlock`): last, so only bwrap and the session are in the domain;
//!  6. execve bwrap with the plan's environment (not in argv: other users
//!     can read argv from /proc, not the environment).

use crate::sandbox::hostview::{self, ForBwrap, Prepared, Scanned, Stage};
use crate::sandbox::landlock::Scoping;
use crate::sandbox::plan::{Plan, FIRST_DATA_FD};
use nix::fcntl::{fcntl, FcntlArg};
use nix::sys::memfd::{memfd_create, MemFdCreateFlag};
use std::ffi::{CString, OsString};
use std::io::{Error, Write};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

/// Where moved descriptors wait before landing on their targets.
const STAGING_FD_MIN: i32 = 512;

/// Creates what the plan wants to exist before launch (the agent's state
/// directories, so logins persist; the private tool dirs). A failure is
/// logged for agent state (the session runs without it) and stops the
/// launch for a required directory.
pub fn prepare(plan: &Plan) -> Result<(), Error> {
    for d in &plan.ensure_dirs {
        let path = d.root.join(&d.rel);
        match crate::nofollow::ensure_dir(&d.root, &d.rel, 0o700) {
            Ok(()) => {}
            Err(e) if d.required => {
                return Err(Error::other(format!("cannot create {}: {e}; remove what is there and start the session again", path.display())))
            }
            Err(e) => tracing::warn!("cannot create {}: {e}; the agent's state will not persist", path.display()),
        }
    }
    Ok(())
}

/// Replaces this process with the session. Returns only on failure.
/// `stage`: whose rights this process has (`hostview::Stage`); `scanned`:
/// the root-only scan's findings, now or later.
pub fn exec(plan: &Plan, prepared: &Prepared, stage: Stage, scanned: Scanned<'_>) -> Error {
    match hostview::apply(plan, prepared, stage, scanned) {
        Ok(made) => exec_prepared(plan, made),
        Err(e) => e,
    }
}

/// Steps 1-6, the host view already made (a root launcher's jailed
/// session: the holder made it before its namespaces), with the data
/// descriptors it `made` for bwrap.
pub(crate) fn exec_prepared(plan: &Plan, made: ForBwrap) -> Error {
    let mut t = crate::launch::Phases::new();
    let prepared = place_data(plan, made)
        .and_then(|()| mark_rest_cloexec(FIRST_DATA_FD + plan.data.len() as i32, plan.gate_fd))
        .and_then(|()| new_session_keyring())
        .and_then(|()| {
            t.mark("data");
            scope_abstract_sockets(plan)
        });
    t.mark("landlock");
    t.log("bwrap's descriptors and domain");
    match prepared {
        Ok(()) => execve(plan),
        Err(e) => e,
    }
}

fn memfd_with(bytes: &[u8], name: &str) -> Result<OwnedFd, Error> {
    let cname = CString::new(name).unwrap_or_default();
    let fd = memfd_create(&cname, MemFdCreateFlag::MFD_CLOEXEC).map_err(Error::from)?;
    let mut file = std::fs::File::from(fd);
    file.write_all(bytes)?;
    nix::unistd::lseek(file.as_raw_fd(), 0, nix::unistd::Whence::SeekSet).map_err(Error::from)?;
    Ok(OwnedFd::from(file))
}

/// A path bound by descriptor: walked from its root without following
/// anything; it must still be what the plan saw.
pub(crate) fn open_beneath(o: &crate::sandbox::plan::OpenBeneath) -> Result<OwnedFd, Error> {
    use crate::nofollow::{self, Entry};
    let root = nofollow::open_root(&o.root)?;
    let want = if o.dir { Entry::Dir } else { Entry::File };
    match nofollow::walk(&root, &o.rel) {
        Ok((fd, kind)) if kind == want => Ok(fd),
        Ok((_, kind)) | Err(kind) => Err(Error::other(format!(
            "{} changed while the session was starting (it is now {}); look at it with `agent-sandbox review`, then start again",
            o.root.join(&o.rel).display(),
            kind.describe()
        ))),
    }
}

/// Steps 1-2. The data of a mount the executor made itself is bwrap's
/// no more: its descriptor number stays closed.
fn place_data(plan: &Plan, made: ForBwrap) -> Result<(), Error> {
    let used = plan.data_for_bwrap();
    let mut made = made.0;
    let mut staged = Vec::with_capacity(plan.data.len());
    for (i, (d, used)) in plan.data.iter().zip(&used).enumerate() {
        if !used {
            staged.push(None);
            continue;
        }
        let fd = match (made.iter().position(|(m, _)| *m == i), &d.open) {
            (Some(k), _) => made.swap_remove(k).1,
            (None, Some(o)) => open_beneath(o)?,
            (None, None) => memfd_with(&d.bytes, d.purpose.name())?,
        };
        let high = fcntl(fd.as_raw_fd(), FcntlArg::F_DUPFD_CLOEXEC(STAGING_FD_MIN)).map_err(Error::from)?;
        // SAFETY: `high` was just returned by F_DUPFD_CLOEXEC and is owned here only.
        staged.push(Some(unsafe { OwnedFd::from_raw_fd(high) }));
        drop(fd);
    }
    for (i, fd) in staged.into_iter().enumerate() {
        let target = FIRST_DATA_FD + i as i32;
        if Some(target) == plan.gate_fd {
            return Err(Error::other("too many data files: they would reach the jail's gate descriptor"));
        }
        match fd {
            // dup2 clears close-on-exec on the target, which bwrap must inherit.
            Some(fd) => {
                nix::unistd::dup2(fd.as_raw_fd(), target).map_err(Error::from)?;
                let _ = fd.into_raw_fd();
            }
            // Nothing inherited may sit at an unused number either.
            None => {
                let _ = nix::unistd::close(target);
            }
        }
    }
    Ok(())
}

/// Step 3: descriptors from `first` up, except `keep`.
fn mark_rest_cloexec(first: i32, keep: Option<i32>) -> Result<(), Error> {
    let ranges: Vec<(i32, i32)> = match keep {
        Some(k) if k >= first => vec![(first, k - 1), (k + 1, i32::MAX)],
        _ => vec![(first, i32::MAX)],
    };
    if ranges.iter().all(|&(lo, hi)| lo > hi || close_range_cloexec(lo, hi)) {
        return Ok(());
    }
    // Kernels before 5.11: walk the descriptor table instead.
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let Some(fd) = entry?.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        if ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&fd)) {
            let _ = fcntl(fd, FcntlArg::F_SETFD(nix::fcntl::FdFlag::FD_CLOEXEC));
        }
    }
    Ok(())
}

fn close_range_cloexec(lo: i32, hi: i32) -> bool {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range only changes descriptor flags; arguments are plain integers.
    unsafe { libc::syscall(libc::SYS_close_range, lo as libc::c_uint, hi as libc::c_uint, CLOSE_RANGE_CLOEXEC) == 0 }
}

/// Step 4. Where keyrings are unavailable (no kernel support, or a
/// container's seccomp policy refuses keyctl) the session cannot reach any
/// either; other failures stop the launch.
fn new_session_keyring() -> Result<(), Error> {
    // SAFETY: KEYCTL_JOIN_SESSION_KEYRING with a null name creates and joins
    // a new anonymous session keyring for this process only.
    let rc = unsafe { libc::syscall(libc::SYS_keyctl, libc::KEYCTL_JOIN_SESSION_KEYRING, std::ptr::null::<libc::c_char>()) };
    if rc >= 0 {
        return Ok(());
    }
    let e = Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ENOSYS | libc::EPERM | libc::EACCES) => Ok(()),
        _ => Err(Error::new(e.kind(), format!("cannot give the session its own session keyring: {e}"))),
    }
}

/// Step 5 (unless a test weakened the plan).
fn scope_abstract_sockets(plan: &Plan) -> Result<(), Error> {
    if !plan.scope_abstract_sockets {
        return Ok(());
    }
    match crate::sandbox::landlock::scope_abstract_sockets(&plan.bwrap)? {
        Scoping::Enforced { abi } => tracing::debug!("abstract unix sockets: fully enforced (Landlock ABI {abi})"),
        Scoping::NotEnforced(why) => tracing::debug!("abstract unix sockets: not enforced: {why}"),
    }
    Ok(())
}

fn cstring(s: &std::ffi::OsStr) -> Result<CString, Error> {
    CString::new(s.as_bytes()).map_err(|_| Error::new(std::io::ErrorKind::InvalidInput, format!("argument contains a NUL byte: {s:?}")))
}

/// Step 6.
fn execve(plan: &Plan) -> Error {
    let build = || -> Result<(CString, Vec<CString>, Vec<CString>), Error> {
        let path = cstring(plan.bwrap.as_os_str())?;
        let mut argv = vec![path.clone()];
        for a in &plan.args() {
            argv.push(cstring(a)?);
        }
        let mut envp = Vec::with_capacity(plan.env.len());
        for (k, v) in &plan.env {
            let mut kv = OsString::from(k);
            kv.push("=");
            kv.push(v);
            envp.push(cstring(&kv)?);
        }
        Ok((path, argv, envp))
    };
    match build() {
        Ok((path, argv, envp)) => match nix::unistd::execve(&path, &argv, &envp) {
            Err(e) => Error::from(e),
            Ok(never) => match never {},
        },
        Err(e) => e,
    }
}
