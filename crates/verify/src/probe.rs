//! The probe: `agent-sandbox __probe SPEC` run inside the session. It
//! records the descriptors it was started with, then runs every inside
//! check of the registry in order, each in a forked child with a deadline
//! (so a check that hangs, crashes or changes process state cannot affect
//! the next), and prints one JSON line per check on stdout (the lines are
//! `protocol`'s).

use super::checks::{sys, Ctx};
use super::protocol::{emit, Line};
use super::registry::{Run, CHECKS};
use super::spec::Spec;
use super::{Outcome, JAIL_OFF};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// How long one check may take.
const CHECK_DEADLINE: Duration = Duration::from_secs(20);

/// Descriptors open right now, found without opening one.
fn open_fds() -> Vec<i32> {
    // SAFETY: F_GETFD only queries descriptor flags.
    (0..1024).filter(|fd| unsafe { libc::fcntl(*fd, libc::F_GETFD) } >= 0).collect()
}

/// The probe's entry point; returns its exit status.
pub fn probe_main(args: &[String]) -> i32 {
    let initial_fds = open_fds();
    if args.first().map(String::as_str) == Some("--ns") {
        println!("{}", sys::ns_line());
        return 0;
    }
    let spec = match args.first().map(|a| Spec::from_arg(a)) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            eprintln!("agent-sandbox probe: {e}");
            return 2;
        }
        None => {
            eprintln!("agent-sandbox probe: missing specification (this verb is run by `agent-sandbox verify`)");
            return 2;
        }
    };
    let ctx = Ctx { spec, initial_fds };
    for check in CHECKS {
        let Run::Inside(f) = check.run else { continue };
        let outcome = if check.needs_jail && ctx.spec.jail.is_none() { Outcome::skip(JAIL_OFF) } else { isolated(|| f(&ctx)) };
        emit(&Line::Result { n: check.number, outcome });
    }
    0
}

/// Runs `f` in a forked child and returns the outcome it reports through a
/// pipe; a crash or a hang is a failure.
fn isolated(f: impl FnOnce() -> Outcome) -> Outcome {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors, owned below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Outcome::fail(format!("pipe2: {}", sys::errno()));
    }
    // SAFETY: both were just created and are owned only here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let r_fd = r.as_raw_fd();
    // SAFETY: the probe is single-threaded; the child writes its outcome.
    let child = unsafe {
        crate::child::run(move || {
            let _ = nix::unistd::close(r_fd);
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|_| Outcome::fail("the check panicked"));
            let mut file = std::fs::File::from(w);
            let _ = file.write_all(serde_json::to_string(&outcome).unwrap_or_default().as_bytes());
            0
        })
    };
    match child {
        Err(e) => Outcome::fail(format!("fork: {e}")),
        Ok(child) => {
            let deadline = Instant::now() + CHECK_DEADLINE;
            let mut buf = Vec::new();
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() || !sys::poll_one(r.as_raw_fd(), libc::POLLIN, left) {
                    break;
                }
                let mut chunk = [0u8; 4096];
                // SAFETY: reading into a stack buffer of the given length.
                let n = unsafe { libc::read(r.as_raw_fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
                if n <= 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n as usize]);
            }
            let waited = crate::child::wait_deadline(child, deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(100)));
            match serde_json::from_slice::<Outcome>(&buf) {
                Ok(o) => o,
                Err(_) => match waited {
                    Err(e) => Outcome::fail(format!("the check {e}")),
                    Ok(code) => Outcome::fail(format!("the check exited {code} without a result")),
                },
            }
        }
    }
}
