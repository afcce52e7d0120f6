//! The holder: the child that owns the jail's user and network namespaces
//! and then becomes the sandbox (exec of bwrap), so the session's own
//! namespaces descend from the holder's and cannot change its routes.
//!
//! Order in the holder (security-relevant):
//! 0. die with the launcher (PDEATHSIG); what the launcher's rights are
//!    needed for (`before_ns`: a root launcher's host view and the drop to
//!    the session's uid);
//! 1. unshare user + net;
//! 2. write its own id maps (`plan::id_map`: no uid 0 inside); switch
//!    IPv6 off, then make the interface pasta attaches to (`tap.rs`) and
//!    the dead end blocked destinations are routed to;
//! 3. report Ready, with its namespaces' descriptors (the launcher must
//!    not look them up in /proc afterwards: a sandbox that fails in its
//!    own setup exits at once, and a dead process's /proc/PID/ns links are
//!    gone), put the gate on its descriptor, restore the signal mask and
//!    exec the sandbox. bwrap sets itself up while pasta starts;
//!    its command waits at the gate (`gate.rs`), which the launcher opens
//!    only after the routes are locked (`join.rs`).

use super::lockdown::Failure;
use super::sys::{die_with_parent, fork_child, wait_fd, Event, Signals};
use super::{lockdown, tap};
use crate::jail::error::{errno, JailError};
use crate::jail::plan::launch::JAIL_IFNAME;
use nix::sched::CloneFlags;
use nix::sys::socket::{socketpair, AddressFamily, MsgFlags, SockFlag, SockType};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Instant;

/// Launcher → helper: proceed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Step {
    /// pasta is attached: lock the routes.
    Lock = b'L',
    /// The holder's id maps are written (`JailPlan::becomes`).
    Maps = b'M',
    /// The session ended: the locker (and the DNS forwarder) report what
    /// the jail refused.
    Report = b'R',
}

/// Helper → launcher (the holder and the locker report this way).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Report {
    /// Holder (`JailPlan::becomes`): its namespaces made; the launcher
    /// writes the id maps.
    Unshared,
    /// Holder: namespaces made, id maps written, IPv6 off, the interface
    /// made. Locker: inside the namespaces. pasta may attach.
    Ready,
    /// Locker: routes (main-table count) and packet filter (rule count)
    /// installed and read back.
    Locked {
        routes: usize,
        filter_rules: usize,
    },
    /// Locker, after the session: what the filter refused (`full`: the
    /// set was full, more was refused than it lists).
    Refused {
        refused: Vec<crate::jail::plan::report::Refused>,
        full: bool,
    },
    /// The DNS forwarder, after the session: the names it refused.
    Names(crate::jail::plan::report::NameTally),
    Failed(Failure),
}

/// The launcher's handle on a forked helper that reports over a
/// seqpacket channel.
pub(crate) struct Helper {
    pub pid: Pid,
    chan: OwnedFd,
    /// Descriptors that came with reports (the holder's namespaces, with
    /// `Ready`), until taken.
    passed: std::cell::RefCell<Vec<OwnedFd>>,
}

/// The gate as the holder hands it to the sandbox: the read end of the
/// launcher's gate pipe, put on descriptor `target` (where the gate
/// program reads) right before the exec.
pub(crate) struct GateEnd<'a> {
    pub read: &'a OwnedFd,
    pub target: i32,
}

/// Forks the holder. It inherits the launcher's descriptors as they are
/// (close-on-exec ones, like the gate's write end, last until the exec;
/// the others are for the sandbox, e.g. its `--ro-bind-data` sources).
/// How the holder gets its id maps and ids.
pub(crate) struct Ids<'a> {
    pub uid_map: &'a str,
    pub gid_map: &'a str,
    /// The launcher writes the maps, and the holder becomes these ids
    /// once the interface is made (`JailPlan::becomes`).
    pub becomes: Option<(u32, u32)>,
}

pub(crate) fn spawn(
    maps: Ids<'_>,
    gate: GateEnd<'_>,
    signals: &Signals,
    before_ns: &mut dyn FnMut() -> std::io::Result<()>,
    exec_inner: &mut dyn FnMut() -> std::io::Error,
) -> Result<Helper, JailError> {
    let parent = nix::unistd::getpid();
    spawn_reporting("forking the holder", |chan| holder_main(chan, parent, maps, &gate, signals, before_ns, exec_inner))
}

/// Forks `main` with the child's end of a new channel; the launcher keeps
/// the other end.
pub(crate) fn spawn_reporting(step: &'static str, main: impl FnOnce(&OwnedFd) -> i32) -> Result<Helper, JailError> {
    let flags = SockFlag::SOCK_CLOEXEC;
    let (ours, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, flags).map_err(|e| JailError::sys("socketpair", errno(e)))?;
    let ours_raw = ours.as_raw_fd();
    let pid = fork_child(step, || {
        // The child never returns, so `ours` is never dropped there.
        let _ = nix::unistd::close(ours_raw);
        main(&theirs)
    })?;
    drop(theirs);
    Ok(Helper { pid, chan: ours, passed: Default::default() })
}

/// The holder's whole life; returns its exit status on failure.
fn holder_main(
    chan: &OwnedFd,
    parent: Pid,
    ids: Ids<'_>,
    gate: &GateEnd<'_>,
    signals: &Signals,
    before_ns: &mut dyn FnMut() -> std::io::Result<()>,
    exec_inner: &mut dyn FnMut() -> std::io::Error,
) -> i32 {
    if die_with_parent(parent).is_err() {
        return 1;
    }
    // 0. What needs the launcher's own rights (a root launcher's host
    // view, which ends in the session's unprivileged uid).
    if let Err(e) = before_ns() {
        return fail(chan, Failure::Exec { message: e.to_string() });
    }
    // 1. New user + network namespaces (the holder is single-threaded).
    if let Err(e) = nix::sched::unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET) {
        return fail(chan, Failure::Unshare { errno: e as i32 });
    }
    // 2. Id maps (its own, or the launcher's), then IPv6 off before the
    // interface is made.
    let mapped = match ids.becomes {
        None => write_id_maps(ids.uid_map, ids.gid_map),
        Some(_) if report(chan, &Report::Unshared).is_ok() && await_step(chan, Step::Maps) => Ok(()),
        Some(_) => return 1,
    };
    if let Err(e) = mapped {
        return fail(chan, Failure::IdMaps { errno: e.raw_os_error().unwrap_or(libc::EPERM), message: e.to_string() });
    }
    let ipv6 = match lockdown::disable_ipv6().and_then(|v6| lockdown::unlimit_rejects().map(|()| v6)) {
        Ok(v6) => v6,
        Err(f) => return fail(chan, f),
    };
    if let Err(message) = tap::make_persistent(JAIL_IFNAME) {
        return fail(chan, Failure::Tap { message });
    }
    if ipv6 == lockdown::Ipv6::Unaddressed {
        if let Err(f) = lockdown::keep_unaddressed(JAIL_IFNAME) {
            return fail(chan, f);
        }
    }
    if let Err(f) = lockdown::make_dead_end(ipv6) {
        return fail(chan, f);
    }
    // The session's outer ids, now that what needed root's is done (its
    // capabilities in the namespace last until the exec: the ids are not
    // 0 inside).
    if let Some((uid, gid)) = ids.becomes {
        if let Err(e) = become_ids(uid, gid, parent) {
            return fail(chan, Failure::Exec { message: format!("becoming uid {uid}: {e}") });
        }
    }
    if report_with_namespaces(chan, &Report::Ready).is_err() {
        return 1;
    }
    // 3. The sandbox, held at the gate: dup2 leaves the target without
    // close-on-exec, so bwrap inherits it. The channel is close-on-exec,
    // so EOF tells the launcher the exec succeeded.
    if let Err(e) = nix::unistd::dup2(gate.read.as_raw_fd(), gate.target) {
        return fail(chan, Failure::Exec { message: format!("placing the gate descriptor: {e}") });
    }
    signals.restore_in_child();
    let err = exec_inner();
    fail(chan, Failure::Exec { message: err.to_string() })
}

pub(crate) fn fail(chan: &OwnedFd, f: Failure) -> i32 {
    let _ = report(chan, &Report::Failed(f));
    1
}

pub(crate) fn report(chan: &OwnedFd, r: &Report) -> Result<(), nix::errno::Errno> {
    let bytes = serde_json::to_vec(r).unwrap_or_default();
    nix::sys::socket::send(chan.as_raw_fd(), &bytes, MsgFlags::empty()).map(|_| ())
}

/// `r` with the descriptors of this process's user and network namespaces
/// (close-on-exec here: the sandbox does not inherit them).
fn report_with_namespaces(chan: &OwnedFd, r: &Report) -> Result<(), nix::errno::Errno> {
    use nix::sys::socket::{sendmsg, ControlMessage};
    let open = |ns: &str| std::fs::File::open(format!("/proc/self/ns/{ns}")).map_err(|e| nix::errno::Errno::from_raw(e.raw_os_error().unwrap_or(libc::EIO)));
    let (user, net) = (open("user")?, open("net")?);
    let bytes = serde_json::to_vec(r).unwrap_or_default();
    let fds = [user.as_raw_fd(), net.as_raw_fd()];
    sendmsg::<()>(chan.as_raw_fd(), &[std::io::IoSlice::new(&bytes)], &[ControlMessage::ScmRights(&fds)], MsgFlags::empty(), None).map(|_| ())
}

/// Blocks until the launcher sends `want` (false on anything else or EOF).
pub(crate) fn await_step(chan: &OwnedFd, want: Step) -> bool {
    let mut b = [0u8; 1];
    loop {
        match nix::sys::socket::recv(chan.as_raw_fd(), &mut b, MsgFlags::empty()) {
            Ok(1) => return b[0] == want as u8,
            Err(nix::errno::Errno::EINTR) => continue,
            _ => return false,
        }
    }
}

/// What the launcher heard from a helper.
pub(crate) enum Heard {
    Report(Report),
    /// The channel closed: the holder exec'd, or the helper died.
    Closed,
    Signal(nix::sys::signalfd::siginfo),
    Timeout,
}

impl Helper {
    /// The launcher's end of the channel (for a last look after the
    /// helper died).
    pub(crate) fn chan_fd(&self) -> std::os::fd::RawFd {
        self.chan.as_raw_fd()
    }

    pub(crate) fn send(&self, step: Step) -> Result<(), JailError> {
        nix::sys::socket::send(self.chan.as_raw_fd(), &[step as u8], MsgFlags::empty()).map(|_| ()).map_err(|e| JailError::sys("talking to a helper", errno(e)))
    }

    /// The descriptors that came with the reports so far (taken: a second
    /// call gets none).
    pub(crate) fn take_passed(&self) -> Vec<OwnedFd> {
        std::mem::take(&mut *self.passed.borrow_mut())
    }

    /// The helper's next report, a signal, or the deadline.
    pub(crate) fn hear(&self, signals: &Signals, deadline: Instant) -> Result<Heard, JailError> {
        match wait_fd(Some(self.chan.as_fd()), signals, Some(deadline))? {
            Event::Signal(info) => return Ok(Heard::Signal(info)),
            Event::Timeout => return Ok(Heard::Timeout),
            Event::Ready => {}
        }
        // Room for the largest report (the seen set's elements, the
        // forwarder's names).
        let mut buf = vec![0u8; 256 * 1024];
        let n = self.receive(&mut buf)?;
        if n == 0 {
            return Ok(Heard::Closed);
        }
        let report =
            serde_json::from_slice(&buf[..n]).map_err(|e| JailError::RouteLock { step: "reading a helper's report".into(), message: e.to_string() })?;
        Ok(Heard::Report(report))
    }
}

impl Helper {
    /// One message into `buf` (its length returned); descriptors that
    /// came with it are kept for `take_passed`.
    fn receive(&self, buf: &mut [u8]) -> Result<usize, JailError> {
        use nix::sys::socket::{recvmsg, ControlMessageOwned};
        use std::os::fd::FromRawFd;
        let mut cmsg = nix::cmsg_space!([std::os::fd::RawFd; 2]);
        let mut iov = [std::io::IoSliceMut::new(buf)];
        let flags = MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_CMSG_CLOEXEC;
        let msg = recvmsg::<()>(self.chan.as_raw_fd(), &mut iov, Some(&mut cmsg), flags).map_err(|e| JailError::sys("reading from a helper", errno(e)))?;
        let n = msg.bytes;
        for c in msg.cmsgs().map_err(|e| JailError::sys("reading from a helper", errno(e)))? {
            if let ControlMessageOwned::ScmRights(fds) = c {
                // SAFETY: SCM_RIGHTS just installed these descriptors in
                // this process; nothing else owns them.
                self.passed.borrow_mut().extend(fds.into_iter().map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }));
            }
        }
        Ok(n)
    }
}

/// The holder becomes `uid`/`gid` (mapped in its namespace; supplementary
/// groups were set before it unshared), dumpable again and still dying
/// with the launcher (a change of credentials clears both).
fn become_ids(uid: u32, gid: u32, parent: Pid) -> Result<(), nix::errno::Errno> {
    nix::unistd::setresgid(gid.into(), gid.into(), gid.into())?;
    nix::unistd::setresuid(uid.into(), uid.into(), uid.into())?;
    nix::sys::prctl::set_dumpable(true)?;
    die_with_parent(parent)
}

/// The launcher writes the holder's maps (it may write any, being root
/// outside), `setgroups` denied first as the holder's own would.
pub(crate) fn write_maps_of(holder: Pid, uid_map: &str, gid_map: &str) -> std::io::Result<()> {
    crate::idmap::write(crate::idmap::Whose::Pid(holder.as_raw()), uid_map, gid_map, crate::idmap::Setgroups::Deny)
}

/// The holder writes its own id maps (one line mapping its own ids, which
/// the kernel allows a namespace's creator; `setgroups` must be denied
/// first). It has every capability in its namespace whatever its uid.
fn write_id_maps(uid_map: &str, gid_map: &str) -> std::io::Result<()> {
    crate::idmap::write(crate::idmap::Whose::This, uid_map, gid_map, crate::idmap::Setgroups::Deny)
}
