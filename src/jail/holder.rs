//! The holder: the child that owns the jail's user and network namespaces,
//! locks its routes and then becomes the sandbox (exec of bwrap), so the
//! session's own namespaces descend from the holder's and cannot change
//! its routes. The launcher drives it step by step over a socketpair.
//!
//! Order in the holder (security-relevant):
//! 1. die with the launcher (PDEATHSIG), then unshare user + net;
//! 2. write its own id maps (`plan::id_map`: no uid 0 inside); switch
//!    IPv6 off before pasta creates the interface;
//! 3. wait for pasta to be attached; lock the routes and read them back
//!    (`lock.rs`); report any difference and stop;
//! 4. wait for the relays; restore the signal mask; exec the sandbox.

use super::error::{errno, JailError};
use super::lock::{self, Failure};
use super::routes::PlanInputs;
use super::sys::{die_with_parent, fork_child, wait_fd, Event, Signals};
use nix::sched::CloneFlags;
use nix::sys::socket::{socketpair, AddressFamily, MsgFlags, SockFlag, SockType};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Instant;

/// Launcher → holder: proceed to the next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Step {
    /// pasta is attached: lock the routes.
    Lock = b'L',
    /// Relays are up: exec the sandbox.
    Go = b'G',
}

/// Holder → launcher.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Report {
    /// Namespaces made, id maps written, IPv6 off: pasta may attach.
    Ready,
    Locked { routes: usize },
    Failed(Failure),
}

/// The launcher's handle on the holder.
pub(crate) struct Holder {
    pub pid: Pid,
    chan: OwnedFd,
}

/// Forks the holder. It inherits the launcher's descriptors as they are
/// (close-on-exec ones, like pasta's readiness pipe, last until the exec;
/// the others are for the sandbox, e.g. its `--ro-bind-data` sources).
pub(crate) fn spawn(
    inputs: &PlanInputs,
    maps: (&str, &str),
    signals: &Signals,
    exec_inner: &mut dyn FnMut() -> std::io::Error,
) -> Result<Holder, JailError> {
    let flags = SockFlag::SOCK_CLOEXEC;
    let (ours, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, flags)
        .map_err(|e| JailError::sys("socketpair", errno(e)))?;
    let parent = nix::unistd::getpid();
    let ours_raw = ours.as_raw_fd();
    let pid = fork_child("forking the holder", || {
        // The child never returns, so `ours` is never dropped there.
        let _ = nix::unistd::close(ours_raw);
        holder_main(&theirs, parent, inputs, maps, signals, exec_inner)
    })?;
    drop(theirs);
    Ok(Holder { pid, chan: ours })
}

/// The holder's whole life; returns its exit status on failure.
fn holder_main(
    chan: &OwnedFd,
    parent: Pid,
    inputs: &PlanInputs,
    (uid_map, gid_map): (&str, &str),
    signals: &Signals,
    exec_inner: &mut dyn FnMut() -> std::io::Error,
) -> i32 {
    if die_with_parent(parent).is_err() {
        return 1;
    }
    // 1. New user + network namespaces (the holder is single-threaded).
    if let Err(e) = nix::sched::unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET) {
        return fail(chan, Failure::Unshare { errno: e as i32 });
    }
    // 2. Id maps, then IPv6 off before pasta creates the interface.
    if let Err(e) = write_id_maps(uid_map, gid_map) {
        return fail(chan, Failure::IdMaps { errno: e.raw_os_error().unwrap_or(libc::EPERM), message: e.to_string() });
    }
    if let Err(f) = lock::disable_ipv6() {
        return fail(chan, f);
    }
    if report(chan, &Report::Ready).is_err() || !await_step(chan, Step::Lock) {
        return 1;
    }
    // 3. Routes locked and read back; nothing launches on a difference.
    match lock::lock(inputs) {
        Ok(routes) => {
            if report(chan, &Report::Locked { routes }).is_err() {
                return 1;
            }
        }
        Err(f) => return fail(chan, f),
    }
    if !await_step(chan, Step::Go) {
        return 1;
    }
    // 4. The sandbox: the channel is close-on-exec, so EOF tells the
    // launcher the exec succeeded.
    signals.restore_in_child();
    let err = exec_inner();
    fail(chan, Failure::Exec { message: err.to_string() })
}

fn fail(chan: &OwnedFd, f: Failure) -> i32 {
    let _ = report(chan, &Report::Failed(f));
    1
}

fn report(chan: &OwnedFd, r: &Report) -> Result<(), nix::errno::Errno> {
    let bytes = serde_json::to_vec(r).unwrap_or_default();
    nix::sys::socket::send(chan.as_raw_fd(), &bytes, MsgFlags::empty()).map(|_| ())
}

/// Blocks until the launcher sends `want` (false on anything else or EOF).
fn await_step(chan: &OwnedFd, want: Step) -> bool {
    let mut b = [0u8; 1];
    loop {
        match nix::sys::socket::recv(chan.as_raw_fd(), &mut b, MsgFlags::empty()) {
            Ok(1) => return b[0] == want as u8,
            Err(nix::errno::Errno::EINTR) => continue,
            _ => return false,
        }
    }
}

/// What the launcher heard from the holder.
pub(crate) enum Heard {
    Report(Report),
    /// The channel closed: the holder exec'd (or died).
    Closed,
    Signal(nix::sys::signalfd::siginfo),
    Timeout,
}

impl Holder {
    pub(crate) fn send(&self, step: Step) -> Result<(), JailError> {
        nix::sys::socket::send(self.chan.as_raw_fd(), &[step as u8], MsgFlags::empty())
            .map(|_| ())
            .map_err(|e| JailError::sys("talking to the holder", errno(e)))
    }

    /// The holder's next report, a signal, or the deadline.
    pub(crate) fn hear(&self, signals: &Signals, deadline: Instant) -> Result<Heard, JailError> {
        match wait_fd(Some(self.chan.as_fd()), signals, Some(deadline))? {
            Event::Signal(info) => return Ok(Heard::Signal(info)),
            Event::Timeout => return Ok(Heard::Timeout),
            Event::Ready => {}
        }
        let mut buf = vec![0u8; 64 * 1024];
        let n = nix::sys::socket::recv(self.chan.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT)
            .map_err(|e| JailError::sys("reading from the holder", errno(e)))?;
        if n == 0 {
            return Ok(Heard::Closed);
        }
        let report = serde_json::from_slice(&buf[..n]).map_err(|e| JailError::RouteLock {
            step: "reading the holder's report".into(),
            message: e.to_string(),
        })?;
        Ok(Heard::Report(report))
    }
}

/// The holder writes its own id maps (one line mapping its own ids, which
/// the kernel allows a namespace's creator; `setgroups` must be denied
/// first). It has every capability in its namespace whatever its uid.
fn write_id_maps(uid_map: &str, gid_map: &str) -> std::io::Result<()> {
    std::fs::write("/proc/self/uid_map", uid_map)?;
    std::fs::write("/proc/self/setgroups", "deny\n")?;
    std::fs::write("/proc/self/gid_map", gid_map)
}
