//! Terminal checks (docs/defences.md, terminal injection): on a fresh pseudo-terminal
//! that is the controlling terminal of a new session (where the kernel
//! itself allows TIOCSTI), TIOCSTI and TIOCLINUX fail; a window resize
//! still delivers SIGWINCH and job-control ioctls still work.

use super::sys::{self, in_child, NO, OK};
use super::Ctx;
use crate::Outcome;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// A new pty pair: (master, slave path).
fn open_pty() -> Result<(OwnedFd, String), String> {
    // SAFETY: posix_openpt/grantpt/unlockpt/ptsname_r on a descriptor we own.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        if m < 0 {
            return Err(format!("posix_openpt: {}", sys::errno()));
        }
        let master = OwnedFd::from_raw_fd(m);
        if libc::grantpt(m) != 0 || libc::unlockpt(m) != 0 {
            return Err(format!("unlockpt: {}", sys::errno()));
        }
        let mut buf = [0 as libc::c_char; 128];
        if libc::ptsname_r(m, buf.as_mut_ptr(), buf.len()) != 0 {
            return Err(format!("ptsname: {}", sys::errno()));
        }
        let name = std::ffi::CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        Ok((master, name))
    }
}

/// In a child: a new session whose controlling terminal is the pty's
/// slave. Returns the slave descriptor.
fn become_session_leader(slave: &str) -> Result<RawFd, i32> {
    // SAFETY: setsid/open/ioctl with valid arguments in a forked child.
    unsafe {
        if libc::setsid() < 0 {
            return Err(3);
        }
        let c = std::ffi::CString::new(slave).map_err(|_| 3)?;
        let fd = libc::open(c.as_ptr(), libc::O_RDWR);
        if fd < 0 || libc::ioctl(fd, libc::TIOCSCTTY, 0) != 0 {
            return Err(3);
        }
        Ok(fd)
    }
}

/// Runs `ioctl(slave, req, arg)` as the session leader of the pty; exit
/// code OK when it failed with `want` (or any errno when `want` is 0).
fn ioctl_in_session(req: libc::c_ulong, arg: *const libc::c_char, want: i32) -> Result<i32, String> {
    let (_master, slave) = open_pty()?;
    in_child(Duration::from_secs(5), move || {
        let fd = match become_session_leader(&slave) {
            Ok(fd) => fd,
            Err(code) => return code,
        };
        // SAFETY: the request takes a pointer to one char (TIOCSTI) or a subcode byte (TIOCLINUX).
        let rc = unsafe { libc::ioctl(fd, req as _, arg) };
        let e = sys::errno() as i32;
        if rc == 0 {
            NO
        } else if want == 0 || e == want {
            OK
        } else {
            10 + e.min(100)
        }
    })
}

pub(crate) fn tiocsti(_c: &Ctx) -> Outcome {
    let ch = b'#' as libc::c_char;
    match ioctl_in_session(libc::TIOCSTI as libc::c_ulong, &ch, 0) {
        Ok(OK) => Outcome::pass(),
        Ok(NO) => Outcome::fail("TIOCSTI injected a character into the terminal's input"),
        Ok(3) => Outcome::fail("could not set up a controlling pseudo-terminal"),
        Ok(c) => Outcome::fail(format!("unexpected result {c}")),
        Err(e) => Outcome::fail(e),
    }
}

pub(crate) fn tioclinux(_c: &Ctx) -> Outcome {
    // Subcode 6 (TIOCL_GETSHIFTSTATE) reads only; on a pty the kernel would
    // answer ENOTTY, the session's filter answers EPERM first.
    let sub = 6 as libc::c_char;
    match ioctl_in_session(crate::sandbox::seccomp::TIOCLINUX as libc::c_ulong, &sub, libc::EPERM) {
        Ok(OK) => Outcome::pass(),
        Ok(NO) => Outcome::fail("TIOCLINUX succeeded"),
        Ok(3) => Outcome::fail("could not set up a controlling pseudo-terminal"),
        Ok(c) if c >= 10 => Outcome::fail(format!("TIOCLINUX failed with errno {}, not the filter's EPERM", c - 10)),
        Ok(c) => Outcome::fail(format!("unexpected result {c}")),
        Err(e) => Outcome::fail(e),
    }
}

pub(crate) fn sigwinch_and_job_control(_c: &Ctx) -> Outcome {
    let (master, slave) = match open_pty() {
        Ok(p) => p,
        Err(e) => return Outcome::fail(e),
    };
    let mut ready = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors, owned below.
    if unsafe { libc::pipe2(ready.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Outcome::fail("pipe2 failed");
    }
    // SAFETY: just created, owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(ready[0]), OwnedFd::from_raw_fd(ready[1])) };
    let wfd = w.as_raw_fd();
    let mfd = master.as_raw_fd();
    let work = || {
        let fd = become_session_leader(&slave).unwrap_or(-1);
        if fd < 0 {
            return 3;
        }
        // SAFETY: signal mask and job-control calls on our own terminal.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGWINCH);
            libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            if libc::tcsetpgrp(fd, libc::getpgrp()) != 0 {
                return 4;
            }
            libc::write(wfd, b"r".as_ptr().cast(), 1);
            let ts = libc::timespec { tv_sec: 3, tv_nsec: 0 };
            if libc::sigtimedwait(&set, std::ptr::null_mut(), &ts) != libc::SIGWINCH {
                return 5;
            }
        }
        OK
    };
    // SAFETY: single-threaded probe.
    let child = match unsafe { crate::child::run(work) } {
        Err(e) => return Outcome::fail(format!("fork: {e}")),
        Ok(child) => child,
    };
    drop(w);
    let got = sys::read_once(&r, Duration::from_secs(3));
    if got.is_empty() {
        let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
    } else {
        let ws = libc::winsize { ws_row: 33, ws_col: 101, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: TIOCSWINSZ with a valid winsize on our master.
        unsafe { libc::ioctl(mfd, libc::TIOCSWINSZ, &ws) };
    }
    match crate::child::wait_deadline(child, Duration::from_secs(5)) {
        Ok(OK) => Outcome::pass(),
        Ok(3) => Outcome::fail("could not set up a controlling pseudo-terminal"),
        Ok(4) => Outcome::fail("tcsetpgrp (job control) failed"),
        Ok(5) => Outcome::fail("a window resize did not deliver SIGWINCH"),
        Ok(c) => Outcome::fail(format!("unexpected result {c}")),
        Err(e) => Outcome::fail(e),
    }
}
