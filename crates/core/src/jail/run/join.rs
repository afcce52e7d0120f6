//! The locker: a short-lived child of the launcher that joins the jail's
//! user and network namespaces from outside (as pasta does) and locks the
//! routes there (`lockdown.rs`), while the sandbox waits at the gate. The
//! holder has exec'd the sandbox by then, so it cannot do this itself.
//!
//! It also keeps pasta's readiness pipe: pasta opens its pid file through
//! /proc/LOCKER/fd/N, which the kernel allows only for a process in
//! pasta's own user namespace (pasta keeps CAP_SYS_PTRACE there, none
//! outside), and the launcher is not.
//!
//! Steps: join, report `Ready`; wait for `Lock` (pasta is attached); lock
//! the routes, then install the packet filter derived from them; report
//! `Locked` or `Failed`. Then it keeps the report: when the session has
//! ended, the launcher asks (`Report`) and it answers with what the filter
//! refused (the `seen` set's elements), read from inside the namespace it
//! still holds; then it exits.
//!
//! The follower (`spawn_follow`) is the same child later in the session:
//! it joins, moves the locked jail to a plan with more blocked
//! destinations (`lockdown::follow`), reports and exits.
//!
//! Joining needs the launcher's own rights only: the launcher's user owns
//! the jail's user namespace (the holder made it), so a process of that
//! user in the parent namespace holds every capability in it. The
//! session's processes do not: their namespaces are nested inside it.

use super::holder::{self, Helper, Report, Step};
use super::lockdown::{self, Failure};
use super::nft;
use super::sys::die_with_parent;
use crate::jail::error::{errno, JailError};
use crate::jail::plan::filter::{self, Shape};
use crate::jail::plan::report;
use crate::jail::plan::routes::PlanInputs;
use nix::sched::CloneFlags;
use std::os::fd::{AsRawFd, OwnedFd};

/// The jail's namespaces, opened through the holder once it made them;
/// the locker and the relays join them.
pub(crate) struct Namespaces {
    pub user: OwnedFd,
    pub net: OwnedFd,
}

impl Namespaces {
    /// The holder's namespaces, as it passed them with its `Ready` (not
    /// looked up in /proc: by then the holder may be a sandbox that
    /// already failed and exited).
    pub(crate) fn passed_by(holder: &Helper) -> Result<Namespaces, JailError> {
        match <[OwnedFd; 2]>::try_from(holder.take_passed()) {
            Ok([user, net]) => Ok(Namespaces { user, net }),
            Err(got) => Err(JailError::RouteLock {
                step: "receiving the jail's namespaces".into(),
                message: format!("the holder passed {} descriptors with its report, not its user and network namespaces", got.len()),
            }),
        }
    }
}

/// Forks the locker. It inherits the launcher's descriptors (pasta's
/// readiness pipe among them). `filter` is `None` only in weakened-plan
/// tests. The launcher writes the lock's inputs (JSON) to
/// the returned pipe after `Step::Lock`, and closes it: they are known
/// only then (the container is read again while pasta starts), and a pipe
/// takes inputs of any size.
pub(crate) fn spawn(ns: &Namespaces, filter: Option<Shape>) -> Result<(Helper, OwnedFd), JailError> {
    let parent = nix::unistd::getpid();
    let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| JailError::sys("pipe", errno(e)))?;
    let write_raw = write.as_raw_fd();
    let helper = holder::spawn_reporting("forking the route locker", |chan| {
        let _ = nix::unistd::close(write_raw);
        if die_with_parent(parent).is_err() {
            return 1;
        }
        if let Err(f) = join(ns) {
            return holder::fail(chan, f);
        }
        if holder::report(chan, &Report::Ready).is_err() || !holder::await_step(chan, Step::Lock) {
            return 1;
        }
        let inputs = match read_inputs(read.as_raw_fd()) {
            Ok(i) => i,
            Err(message) => return holder::fail(chan, Failure::Netlink { step: "reading the lock's inputs".into(), message }),
        };
        let locked = lockdown::lock(&inputs).and_then(|net| {
            let filter_rules = match filter {
                Some(shape) => lockdown::lock_filter(&net, shape)?,
                None => 0,
            };
            Ok(Report::Locked { routes: net.main.len(), filter_rules })
        });
        match locked {
            Ok(report) if holder::report(chan, &report).is_ok() => {}
            Ok(_) => return 1,
            Err(f) => return holder::fail(chan, f),
        }
        if filter.is_some_and(|s| s.report) && holder::await_step(chan, Step::Report) {
            return i32::from(holder::report(chan, &refused()).is_err());
        }
        0
    })?;
    drop(read);
    Ok((helper, write))
}

/// What the filter refused, as the `seen` set holds it now.
fn refused() -> Report {
    match nft::elements_of(&filter::seen_set()) {
        Ok(els) => Report::Refused { full: els.len() >= filter::SEEN_SIZE as usize, refused: report::refused_from(&els) },
        Err(e) => Report::Failed(Failure::Filter { step: e.step.into(), errno: e.errno, message: e.message }),
    }
}

/// The lock's inputs, as the launcher wrote them to the pipe.
fn read_inputs(fd: std::os::fd::RawFd) -> Result<PlanInputs, String> {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    // SAFETY: the pipe's read end, owned by this (forked) process alone;
    // the File takes it over and closes it.
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}

/// The launcher is single-threaded, so its fork may join a user
/// namespace; the network namespace's owner is that namespace.
pub(crate) fn join(ns: &Namespaces) -> Result<(), Failure> {
    for (fd, kind, what) in [(&ns.user, CloneFlags::CLONE_NEWUSER, "user"), (&ns.net, CloneFlags::CLONE_NEWNET, "network")] {
        if let Err(e) = nix::sched::setns(fd, kind) {
            let message = format!("joining the jail's {what} namespace: {}", errno(e));
            return Err(Failure::Netlink { step: "joining the jail".into(), message });
        }
    }
    Ok(())
}

/// Forks the follower: joins the jail and moves it to the plan for
/// `inputs`; reports `Locked` or `Failed`.
pub(crate) fn spawn_follow(ns: &Namespaces, inputs: &PlanInputs, filter: Option<Shape>) -> Result<Helper, JailError> {
    let parent = nix::unistd::getpid();
    holder::spawn_reporting("forking the route follower", |chan| {
        if die_with_parent(parent).is_err() {
            return 1;
        }
        let followed = join(ns).and_then(|()| lockdown::follow(inputs, filter));
        match followed {
            Ok(net) => i32::from(holder::report(chan, &Report::Locked { routes: net.main.len(), filter_rules: 0 }).is_err()),
            Err(f) => holder::fail(chan, f),
        }
    })
}
