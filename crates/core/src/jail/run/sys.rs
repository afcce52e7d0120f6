//! Small process plumbing shared by the launcher side of the jail: forking
//! a child that runs a closure, dying with the parent, waiting on a file
//! descriptor while watching signals, and the launcher's signal mask.
//! No policy here.

use crate::jail::error::{errno, JailError};
use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{siginfo, SfdFlags, SignalFd};
use nix::unistd::Pid;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::{Duration, Instant};

/// Signals the launcher receives through its signalfd: the ones it
/// forwards to the session, plus SIGCHLD.
pub(crate) const FORWARDED: &[Signal] = &[Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP, Signal::SIGQUIT, Signal::SIGUSR1, Signal::SIGUSR2];

/// Forks; the child runs `child` and exits with its status without
/// returning into the caller (no destructors, no stdio flush).
pub(crate) fn fork_child(step: &'static str, child: impl FnOnce() -> i32) -> Result<Pid, JailError> {
    // SAFETY: the launcher is single-threaded (the seam's contract), so the
    // child is a complete copy.
    unsafe { crate::child::run(child) }.map_err(|e| JailError::sys(step, errno(e)))
}

/// Closes every inherited descriptor above stderr except `keep`.
pub(crate) fn close_fds_except(keep: &[std::os::fd::RawFd]) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return false };
    let fds: Vec<std::os::fd::RawFd> = dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter(|fd| *fd > 2 && !keep.contains(fd)).collect();
    for fd in fds {
        // Closing an already-closed number (the directory's own fd) is harmless.
        let _ = nix::unistd::close(fd);
    }
    true
}

/// In a child: receive SIGKILL when the parent dies, and fail if it is
/// already gone (the race between fork and prctl).
pub(crate) fn die_with_parent(parent: Pid) -> Result<(), Errno> {
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL)?;
    if nix::unistd::getppid() != parent {
        return Err(Errno::ESRCH);
    }
    Ok(())
}

/// The launcher's signals: blocked while the jail runs and read from a
/// signalfd; the previous mask comes back on drop (and in children
/// before they exec).
pub(crate) struct Signals {
    fd: SignalFd,
    old: SigSet,
    /// The caller's SIGCHLD action (SIG_IGN would make the kernel reap our
    /// children before we learn their status).
    old_chld: SigAction,
}

/// Whether `sig` is ignored in this process (inherited from `nohup`, or a
/// shell that starts background jobs with SIGINT and SIGQUIT ignored).
pub(crate) fn ignored(sig: Signal) -> bool {
    // SAFETY: with a null new action, sigaction only reads the current one
    // into `old`, which it fully initialises.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig as libc::c_int, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

impl Signals {
    /// Blocks the forwarded signals and SIGCHLD and opens their signalfd.
    /// A forwarded signal the launcher was started ignoring stays ignored,
    /// unblocked: a blocked signal is queued even when ignored, so the
    /// launcher would react to what its caller told it to ignore, stop a
    /// launch or forward it to a session that (inheriting the same
    /// disposition) ignores it.
    pub(crate) fn block() -> Result<Signals, JailError> {
        let mut set = SigSet::empty();
        FORWARDED.iter().filter(|s| !ignored(**s)).for_each(|s| set.add(*s));
        set.add(Signal::SIGCHLD);
        let mut old = SigSet::empty();
        nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old)).map_err(|e| JailError::sys("blocking signals", errno(e)))?;
        let flags = SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK;
        let fd = SignalFd::with_flags(&set, flags).map_err(|e| JailError::sys("signalfd", errno(e)))?;
        let dfl = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
        // SAFETY: installs the default action, no handler code runs.
        let old_chld = unsafe { sigaction(Signal::SIGCHLD, &dfl) }.map_err(|e| JailError::sys("sigaction", errno(e)))?;
        Ok(Signals { fd, old, old_chld })
    }

    /// In a forked child, before exec: the launcher's original mask and
    /// SIGCHLD action.
    pub(crate) fn restore_in_child(&self) {
        self.restore();
    }

    fn restore(&self) {
        // SAFETY: puts back the action the caller had installed.
        let _ = unsafe { sigaction(Signal::SIGCHLD, &self.old_chld) };
        let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&self.old), None);
    }

    /// The next pending signal, if any.
    pub(crate) fn next(&self) -> Option<siginfo> {
        self.fd.read_signal().ok().flatten()
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        // Signals that arrived while blocked stay pending in the signalfd's
        // queue of the process; drain ours so none is delivered late.
        while self.next().is_some() {}
        self.restore();
    }
}

/// What ended a wait.
pub(crate) enum Event {
    /// The watched descriptor is readable (or hung up).
    Ready,
    /// A signal arrived.
    Signal(siginfo),
    /// The deadline passed.
    Timeout,
}

/// Waits until `fd` is readable, a signal arrives or `deadline` passes.
pub(crate) fn wait_fd(fd: Option<BorrowedFd<'_>>, signals: &Signals, deadline: Option<Instant>) -> Result<Event, JailError> {
    match wait_fds(&[fd], signals, deadline)? {
        Events::Ready(_) => Ok(Event::Ready),
        Events::Signal(info) => Ok(Event::Signal(info)),
        Events::Timeout => Ok(Event::Timeout),
    }
}

/// What ended a wait on several descriptors.
pub(crate) enum Events {
    /// Which of the watched descriptors are readable (or hung up).
    Ready(Vec<bool>),
    Signal(siginfo),
    Timeout,
}

/// Waits until one of `fds` is readable, a signal arrives or `deadline`
/// passes (absent descriptors are not watched).
pub(crate) fn wait_fds(fds: &[Option<BorrowedFd<'_>>], signals: &Signals, deadline: Option<Instant>) -> Result<Events, JailError> {
    loop {
        if let Some(info) = signals.next() {
            return Ok(Events::Signal(info));
        }
        let timeout = match deadline {
            None => PollTimeout::NONE,
            Some(d) => match d.checked_duration_since(Instant::now()) {
                None => return Ok(Events::Timeout),
                Some(left) => millis(left),
            },
        };
        let watched: Vec<BorrowedFd<'_>> = fds.iter().flatten().copied().collect();
        let mut polled = vec![PollFd::new(signals.fd.as_fd(), PollFlags::POLLIN)];
        polled.extend(watched.iter().map(|fd| PollFd::new(*fd, PollFlags::POLLIN)));
        match poll(&mut polled, timeout) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(JailError::sys("poll", errno(e))),
        }
        let mut ready = polled.iter().skip(1).map(|p| p.revents().is_some_and(|r| !r.is_empty()));
        let flags: Vec<bool> = fds.iter().map(|fd| fd.is_some() && ready.next().unwrap_or(false)).collect();
        if flags.iter().any(|r| *r) {
            return Ok(Events::Ready(flags));
        }
    }
}

fn millis(d: Duration) -> PollTimeout {
    let ms = d.as_millis().clamp(1, i32::MAX as u128) as i32;
    PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
}

/// The launcher as child subreaper while the jail runs: pasta leaves
/// zombie helper processes behind, and when pasta is killed they would be
/// handed to the container's pid 1, which in many containers never reaps.
/// Adopted orphans are reaped at the end; the previous setting and the
/// launcher's own earlier children are left alone.
pub(crate) struct Subreaper {
    was: bool,
    earlier: Vec<i32>,
}

impl Subreaper {
    pub(crate) fn adopt_orphans() -> Subreaper {
        let was = nix::sys::prctl::get_child_subreaper().unwrap_or(false);
        let _ = nix::sys::prctl::set_child_subreaper(true);
        Subreaper { was, earlier: children() }
    }

    /// Reaps every adopted child that has exited.
    pub(crate) fn sweep(&self) {
        for pid in children().into_iter().filter(|p| !self.earlier.contains(p)) {
            let _ = nix::sys::wait::waitpid(Pid::from_raw(pid), Some(nix::sys::wait::WaitPidFlag::WNOHANG));
        }
    }

    /// Ends and reaps the adopted children: every one is this launch's (a
    /// sandbox stopped at the gate, whose bwrap child is handed to the
    /// launcher when the holder is killed; a bwrap child orphaned before
    /// it set its own death signal, which would otherwise outlive the
    /// launcher; what pasta leaves). They get a moment to end on their own
    /// (the gate closes), then SIGKILL.
    pub(crate) fn reap_dying(&self, signals: &Signals) {
        let grace = Instant::now() + Duration::from_millis(200);
        loop {
            self.sweep();
            let left: Vec<i32> = children().into_iter().filter(|p| !self.earlier.contains(p)).collect();
            if left.is_empty() {
                return;
            }
            if Instant::now() >= grace {
                for pid in left {
                    let pid = Pid::from_raw(pid);
                    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
                    let _ = nix::sys::wait::waitpid(pid, None);
                }
                return;
            }
            let _ = wait_fd(None, signals, Some(grace));
        }
    }
}

impl Drop for Subreaper {
    fn drop(&mut self) {
        self.sweep();
        let _ = nix::sys::prctl::set_child_subreaper(self.was);
    }
}

/// The launcher's children (it is single-threaded: its pid is its only
/// thread); empty where the kernel does not list children.
fn children() -> Vec<i32> {
    let me = nix::unistd::getpid();
    let list = std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")).unwrap_or_default();
    list.split_whitespace().filter_map(|p| p.parse().ok()).collect()
}

/// The shell convention for a signal's exit status.
pub(crate) fn signal_status(signo: i32) -> i32 {
    128 + signo
}
