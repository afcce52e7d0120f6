//! Running pasta: attached from outside to the holder's namespaces, in the
//! foreground as the launcher's child (it dies with the launcher and is
//! killed at the end: Debian 12's pasta outlives its namespace otherwise),
//! in its own process group (a Ctrl-C at the terminal is the session's,
//! not pasta's). Readiness: pasta writes its pid file once the namespace
//! is configured; the pid file is a pipe the locker keeps open, opened
//! through /proc/LOCKER/fd/N, so no file is ever created.

use crate::jail::error::{errno, JailError};
use crate::jail::plan::launch::{pasta_argv, PastaPlan};
use nix::unistd::Pid;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

pub(crate) struct Pasta {
    pub pid: Pid,
    /// pasta's stderr (for the attach error; drained during the session).
    pub stderr: Option<OwnedFd>,
}

/// The readiness pipe: the locker inherits `write` and pasta opens it
/// through /proc; the launcher reads `read`.
pub(crate) struct ReadyPipe {
    pub read: OwnedFd,
    pub write: OwnedFd,
}

impl ReadyPipe {
    pub(crate) fn new() -> Result<ReadyPipe, JailError> {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| JailError::sys("pipe", errno(e)))?;
        Ok(ReadyPipe { read, write })
    }
}

/// The pid-file path through which pasta reaches `keeper`'s copy of the
/// readiness pipe.
pub(crate) fn pid_file_path(keeper: Pid, fd: i32) -> String {
    format!("/proc/{keeper}/fd/{fd}")
}

/// Starts pasta for the namespaces of `target` (a process in the jail's
/// user and network namespaces that keeps the launcher's credentials: the
/// locker, not the holder, which may have become a root launcher's
/// unprivileged uid, whose /proc files a root pasta may not open); it
/// reports through the pid file `pid_file`.
pub(crate) fn spawn(plan: &PastaPlan, target: Pid, pid_file: String) -> Result<Pasta, JailError> {
    let parent = nix::unistd::getpid();
    let argv = pasta_argv(plan, &pid_file, target.as_raw());
    let mut cmd = Command::new(&plan.path);
    cmd.arg0(&argv[0]).args(&argv[1..]);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    cmd.process_group(0).env_clear();
    // SAFETY: the closure runs in the forked child before exec and only
    // makes async-signal-safe calls (prctl, getppid).
    unsafe {
        cmd.pre_exec(move || super::sys::die_with_parent(parent).map_err(std::io::Error::from));
    }
    let mut child = cmd.spawn().map_err(|e| attach_error(format!("starting {}: {e}", plan.path.display())))?;
    let stderr = child.stderr.take().map(OwnedFd::from);
    Ok(Pasta { pid: Pid::from_raw(child.id() as i32), stderr })
}

/// Reads pasta's pid line off the readiness pipe (called when readable).
/// `Some(true)`: ready; `Some(false)`: pipe closed without a pid.
pub(crate) fn read_ready(read: &OwnedFd, buf: &mut Vec<u8>) -> Option<bool> {
    let mut chunk = [0u8; 64];
    match nix::unistd::read(read.as_raw_fd(), &mut chunk) {
        Ok(0) => Some(false),
        Ok(n) => {
            buf.extend_from_slice(&chunk[..n]);
            buf.contains(&b'\n').then_some(true)
        }
        Err(_) => None,
    }
}

/// Whatever pasta wrote to stderr (it has exited, so this ends).
pub(crate) fn read_stderr(stderr: Option<OwnedFd>) -> String {
    let mut out = String::new();
    if let Some(fd) = stderr {
        let mut f = std::fs::File::from(fd);
        let _ = f.by_ref().take(16 * 1024).read_to_string(&mut out);
    }
    meaningful_lines(&out)
}

/// pasta's lines without its noise: complaints about a missing syslog
/// (Debian 12's pasta logs to both; containers rarely have /dev/log) and
/// newer pastas' notice that `--stderr`, needed by Debian 12's, is
/// deprecated.
pub(crate) fn meaningful_lines(text: &str) -> String {
    let noise = |l: &str| l.trim().is_empty() || (l.starts_with("Failed to send") && l.contains("syslog")) || l.contains("--stderr will be dropped");
    let keep = |l: &&str| !noise(l);
    text.lines().filter(keep).collect::<Vec<_>>().join("; ")
}

/// The attach failure, with the fix that matches pasta's complaint.
pub(crate) fn attach_error(detail: String) -> JailError {
    // Opening or entering the namespaces as the `nobody` a root pasta
    // drops to without --runas.
    let refused = detail.contains("Permission denied") || detail.contains("Operation not permitted");
    let fix = if refused && detail.contains("namespace") {
        format!(
            "pasta could not open the namespaces: as root it needs `--runas 0` (the jail passes it), so this pasta \
             is probably too old or restricted; {}",
            crate::fixes::PASTA_ATTACH
        )
    } else if detail.contains("tun") {
        format!("pasta could not use /dev/net/tun: {}", crate::fixes::TUN)
    } else {
        crate::fixes::PASTA_ATTACH.to_owned()
    };
    JailError::PastaAttach { detail, fix }
}
