//! The jail's gate: the first program of a jailed session. bwrap is
//! started before the routes are locked, so that its setup overlaps
//! pasta's; what bwrap runs is the gate (the launcher's own executable,
//! bound read-only at [`GATE_PATH`]), which waits for one byte on
//! [`GATE_FD`] and only then becomes the command (exec, same process).
//!
//! The launcher sends the byte once the routes are locked and read back.
//! Any other end of the wait (the launcher stopped the launch, or died:
//! every copy of the write end is gone) ends the gate without running the
//! command, and with it bwrap. bwrap's own `--block-fd` cannot do this: it
//! carries on at end-of-file, and its child does not die with its parent
//! while it waits.

use crate::jail::error::JailError;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// The descriptor the gate waits on, far above the sandbox's data files.
pub const GATE_FD: i32 = 500;

/// Where the gate is bound in a jailed session (inside bwrap's private
/// /dev); being run by this name selects the gate.
pub const GATE_PATH: &str = "/dev/.agent-sandbox-gate";

/// Exit status of a gate that closed without the launcher's go.
const GATE_CLOSED: u8 = 125;

/// Whether the process was started as the gate.
pub fn is_gate(argv0: &OsStr) -> bool {
    argv0 == OsStr::new(GATE_PATH)
}

/// The launcher's executable, to be bound into the session as the gate.
pub fn executable() -> Result<PathBuf, JailError> {
    let gate_error = |why: String| JailError::GateExecutable { why };
    let exe = std::env::current_exe().map_err(|e| gate_error(e.to_string()))?;
    match std::fs::metadata(&exe) {
        Ok(m) if m.is_file() => Ok(exe),
        Ok(_) => Err(gate_error(format!("{} is not a regular file", exe.display()))),
        Err(e) => Err(gate_error(format!("{}: {e}", exe.display()))),
    }
}

/// The gate's whole life: wait for the go, then exec `command` (looked up
/// in PATH, as bwrap does). Returns only on failure, with the exit status.
pub fn pass(command: &[OsString]) -> u8 {
    if !wait_for_go() {
        return GATE_CLOSED;
    }
    // The session does not keep the gate, nor the SIGPIPE disposition the
    // Rust runtime gave this process (ignored; exec would pass that on, and
    // `producer | head` would then report write errors).
    let _ = nix::unistd::close(GATE_FD);
    // SAFETY: restores the default action; no handler code is involved.
    let _ = unsafe { nix::sys::signal::signal(nix::sys::signal::Signal::SIGPIPE, nix::sys::signal::SigHandler::SigDfl) };
    let Some(program) = command.first() else { return GATE_CLOSED };
    let argv: Result<Vec<CString>, _> = command.iter().map(|a| CString::new(a.as_bytes())).collect();
    let (Ok(path), Ok(argv)) = (CString::new(program.as_bytes()), argv) else {
        eprintln!("agent-sandbox: an argument contains a NUL byte");
        return 1;
    };
    let err = nix::unistd::execvp(&path, &argv).err().map(|e| e.desc()).unwrap_or("exec failed");
    eprintln!("agent-sandbox: execvp {}: {err}", program.to_string_lossy());
    1
}

/// Blocks until a byte arrives on the gate (true) or it closes (false:
/// the launcher said why, or was killed).
fn wait_for_go() -> bool {
    let mut b = [0u8; 1];
    loop {
        // SAFETY: read(2) into a one-byte buffer that outlives the call.
        let n = unsafe { libc::read(GATE_FD, b.as_mut_ptr().cast(), 1) };
        if n == 1 {
            return true;
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) if n < 0 => continue,
            // Not started by the jail (e.g. a `--print-plan` argv run by hand).
            Some(libc::EBADF) if n < 0 => {
                eprintln!("agent-sandbox: {GATE_PATH} starts commands only inside a jailed `agent-sandbox run` session");
                return false;
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bound_name_is_the_gate() {
        assert!(is_gate(OsStr::new(GATE_PATH)));
        for other in ["agent-sandbox", "/usr/local/bin/agent-sandbox", ".agent-sandbox-gate", "claude"] {
            assert!(!is_gate(OsStr::new(other)), "{other}");
        }
    }
}
