//! Running the session as a child and waiting for it, so the launcher can
//! look at the workspace afterwards. The launcher stays single-threaded:
//! fork, the child execs bwrap (`exec::exec`), the parent forwards SIGTERM,
//! SIGHUP, SIGINT and SIGQUIT to it (those it was not started ignoring)
//! and maps its status to an exit code.
//! (A terminal's Ctrl-C reaches bwrap twice that way; it ends on the first.)
//! If the launcher itself is killed, bwrap's --die-with-parent ends the
//! session.

use nix::sys::signal::{self, SigHandler, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;
use std::sync::atomic::{AtomicI32, Ordering};

static CHILD: AtomicI32 = AtomicI32::new(0);

extern "C" fn forward(sig: libc::c_int) {
    let pid = CHILD.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: kill is async-signal-safe; pid is our own child.
        unsafe { libc::kill(pid, sig) };
    }
}

/// The shell convention: the status, or 128+N after signal N.
pub(crate) fn exit_code(status: WaitStatus) -> Option<i32> {
    match status {
        WaitStatus::Exited(_, code) => Some(code),
        WaitStatus::Signaled(_, sig, _) => Some(128 + sig as i32),
        _ => None,
    }
}

/// Forks; the child calls `exec_inner` (which execs bwrap and returns only
/// on failure); the parent runs `meanwhile` (work for after the session
/// that can be done ahead, while the child sets the sandbox up), then
/// waits, forwarding signals.
pub fn run(exec_inner: &mut dyn FnMut() -> std::io::Error, meanwhile: &mut dyn FnMut()) -> std::io::Result<i32> {
    // SAFETY: the launcher is single-threaded here; the child only calls
    // exec (and writes an error line) before it replaces itself.
    let child = unsafe {
        crate::child::run(|| {
            let err = exec_inner();
            eprintln!("agent-sandbox: cannot start the sandbox: {err}");
            // A refusal, like every other one before the command runs.
            1
        })
    }?;
    wait_forwarding(child, meanwhile)
}

fn wait_forwarding(child: Pid, meanwhile: &mut dyn FnMut()) -> std::io::Result<i32> {
    CHILD.store(child.as_raw(), Ordering::SeqCst);
    crate::resident::shed_text();
    // A signal the launcher was started ignoring (nohup, a background job)
    // stays ignored: the session inherited that disposition too.
    for sig in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT, Signal::SIGQUIT].into_iter().filter(|s| !crate::jail::signal_ignored(*s)) {
        // SAFETY: the handler only reads an atomic and calls kill.
        let _ = unsafe { signal::signal(sig, SigHandler::Handler(forward)) };
    }
    meanwhile();
    loop {
        match waitpid(child, None) {
            Ok(status) => {
                if let Some(code) = exit_code(status) {
                    return Ok(code);
                }
            }
            Err(nix::errno::Errno::EINTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}
