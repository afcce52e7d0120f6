//! The one way the product runs its own code in a child process: fork, run
//! a closure there, and leave with `_exit` (a panic is exit code 101), so a
//! child never unwinds or returns into its parent's frames, never runs its
//! destructors or atexit handlers and never flushes its copied stdio.
//! Every production `fork` goes through [`run`]; what the child does stays
//! with its caller.

use nix::errno::Errno;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};
use std::time::{Duration, Instant};

/// Forks; the child runs `f` and exits with the code it returns. The
/// parent gets the child's pid.
///
/// # Safety
/// The calling process must be single-threaded (the launcher before any
/// runtime starts, doctor, the probe), or `f` must make only
/// async-signal-safe calls: the child is a copy of the calling thread
/// alone, and locks other threads held at the fork stay held in it.
pub unsafe fn run(f: impl FnOnce() -> i32) -> nix::Result<Pid> {
    // SAFETY: the caller's contract above.
    match unsafe { fork() }? {
        ForkResult::Parent { child } => Ok(child),
        ForkResult::Child => {
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(101);
            // SAFETY: _exit ends the child at once; see the module's doc.
            unsafe { libc::_exit(code) }
        }
    }
}

/// Waits for `child` to end (through EINTR) and returns how.
pub fn wait(child: Pid) -> nix::Result<WaitStatus> {
    loop {
        match waitpid(child, None) {
            Ok(status @ (WaitStatus::Exited(..) | WaitStatus::Signaled(..))) => return Ok(status),
            Ok(_) | Err(Errno::EINTR) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Waits for `child`, killing it after `timeout`: its exit code, or why
/// there is none.
pub fn wait_deadline(child: Pid, timeout: Duration) -> Result<i32, String> {
    let deadline = Instant::now() + timeout;
    loop {
        match waitpid(child, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => return Ok(code),
            Ok(WaitStatus::Signaled(_, sig, _)) => return Err(format!("killed by {sig}")),
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(format!("waitpid: {e}")),
        }
        if Instant::now() >= deadline {
            let _ = kill(child, Signal::SIGKILL);
            let _ = waitpid(child, None);
            return Err(format!("did not finish within {} ms", timeout.as_millis()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Kills `child` and reaps it.
pub fn kill_and_reap(child: Pid) {
    let _ = kill(child, Signal::SIGKILL);
    let _ = waitpid(child, None);
}
