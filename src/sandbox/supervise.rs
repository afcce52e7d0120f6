//! Running the session as a child and waiting for it, so the launcher can
//! look at the workspace afterwards. The launcher stays single-threaded:
//! fork, the child execs bwrap (`exec::exec`), the parent forwards SIGTERM,
//! SIGHUP, SIGINT and SIGQUIT to it and maps its status to an exit code.
//! (A terminal's Ctrl-C reaches bwrap twice that way; it ends on the first.)
//! If the launcher itself is killed, bwrap's --die-with-parent ends the
//! session.

use nix::sys::signal::{self, SigHandler, Signal};
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};
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
pub fn exit_code(status: WaitStatus) -> Option<i32> {
    match status {
        WaitStatus::Exited(_, code) => Some(code),
        WaitStatus::Signaled(_, sig, _) => Some(128 + sig as i32),
        _ => None,
    }
}

/// Forks; the child calls `exec_inner` (which execs bwrap and returns only
/// on failure); the parent waits, forwarding signals.
pub fn run(exec_inner: &mut dyn FnMut() -> std::io::Error) -> std::io::Result<i32> {
    // SAFETY: the launcher is single-threaded here; the child only calls
    // exec (and writes an error line) before it replaces itself.
    match unsafe { fork() }.map_err(std::io::Error::from)? {
        ForkResult::Child => {
            let err = exec_inner();
            eprintln!("agent-sandbox: cannot start the sandbox: {err}");
            // A refusal, like every other one before the command runs.
            // SAFETY: _exit is always safe; skips atexit handlers of the parent's image.
            unsafe { libc::_exit(1) }
        }
        ForkResult::Parent { child } => wait_forwarding(child),
    }
}

fn wait_forwarding(child: Pid) -> std::io::Result<i32> {
    CHILD.store(child.as_raw(), Ordering::SeqCst);
    shed_resident_text();
    // SAFETY: the handler only reads an atomic and calls kill.
    unsafe {
        for sig in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT, Signal::SIGQUIT] {
            let _ = signal::signal(sig, SigHandler::Handler(forward));
        }
    }
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

/// Lets the kernel drop this binary's code pages from the launcher's
/// resident set once it only waits for the session: they are clean file
/// pages (re-read on demand), but count as the launcher's memory for as
/// long as an agent runs. Only executable mappings of the binary without
/// any private (copied) page are touched, so no relocated data is lost.
pub fn shed_resident_text() {
    let Ok(exe) = std::fs::read_link("/proc/self/exe") else { return };
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else { return };
    let exe = exe.to_string_lossy();
    let mut current: Option<(usize, usize)> = None;
    for line in smaps.lines() {
        let mut f = line.split_whitespace();
        let first = f.next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-').filter(|_| !first.ends_with(':')) {
            let perms = f.next().unwrap_or("");
            let path = line.split_whitespace().nth(5).unwrap_or("");
            current = match (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
                (Ok(lo), Ok(hi)) if perms == "r-xp" && path == exe => Some((lo, hi - lo)),
                _ => None,
            };
        } else if first == "Anonymous:" {
            if let (Some((addr, len)), Some("0")) = (current.take(), f.next()) {
                // SAFETY: the range is one of our own clean, read-only,
                // executable file mappings; MADV_DONTNEED only drops its
                // page-table entries, and the pages fault back in from the
                // file when executed again.
                unsafe { libc::madvise(addr as *mut libc::c_void, len, libc::MADV_DONTNEED) };
            }
        }
    }
}
