//! The outer processes, reached through /proc (probes 100-102): what a
//! session gets of them where it can see them. With a /proc of its own it
//! sees none; under a masked /proc it sees the container's (the plan binds
//! the container's /proc), and these probes prove what stays out of reach:
//! every ptrace-mode access (the kernel refuses those across the session's
//! user namespace) and every signal (its pid namespace), and what does not
//! (the settings a process's owner may change). Aimed at the
//! canary, through a descriptor of its /proc directory, so a pid reused
//! meanwhile cannot stand in for it.

use super::attack::{canary_by_pid, is_canary};
use super::sys;
use super::Ctx;
use crate::Outcome;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Files of /proc/PID the kernel gives only to who may ptrace-read PID:
/// its environment, memory and memory map, and what its stack and
/// registers reveal. Read, not only opened (some check at read time).
const GUARDED_FILES: &[&str] = &["environ", "mem", "maps", "smaps", "pagemap", "auxv", "stack", "syscall", "io", "personality"];
/// Links that open the process's files, root, working directory, program
/// and namespaces.
const GUARDED_LINKS: &[&str] = &["root", "cwd", "exe", "fd/0", "fd/1", "fd/2", "ns/mnt", "ns/net", "ns/user", "ns/pid", "ns/ipc"];
/// Directories that list its mapped files and descriptors' details.
const GUARDED_DIRS: &[&str] = &["map_files", "fdinfo"];

/// The canary's /proc directory, opened, when the session's /proc shows it.
fn canary_dir(c: &Ctx) -> Option<OwnedFd> {
    let pid = c.spec.canary_pid;
    let dir = sys::open(std::path::Path::new(&format!("/proc/{pid}")), libc::O_RDONLY | libc::O_DIRECTORY, 0).ok()?;
    // Checked after opening: the descriptor holds on to this process.
    is_canary(pid).then_some(dir)
}

const NOT_VISIBLE: &str = "the outer canary is not in the session's /proc (a /proc of its own pid namespace)";

/// Probe 100: nothing of the canary that the kernel guards with ptrace-mode
/// checks can be had, its secret environment least of all.
pub(crate) fn outer_reads(c: &Ctx) -> Outcome {
    let Some(dir) = canary_dir(c) else { return Outcome::pass_note(NOT_VISIBLE) };
    let mut got = guarded_reads(dir.as_raw_fd(), &crate::canary_secret(&c.spec.nonce));
    if canary_by_pid(c) {
        got.extend(vm_read(c.spec.canary_pid));
    }
    if got.is_empty() {
        let all: Vec<&str> = GUARDED_FILES.iter().chain(GUARDED_LINKS).chain(GUARDED_DIRS).copied().collect();
        Outcome::pass_note(format!("the canary (pid {}) is visible; refused: {}", c.spec.canary_pid, all.join(", ")))
    } else {
        Outcome::fail(got.join("; "))
    }
}

fn at(dir: RawFd, rel: &str, flags: i32) -> Result<OwnedFd, nix::errno::Errno> {
    let c = CString::new(rel).unwrap_or_default();
    // SAFETY: openat on a directory descriptor we hold, with a valid C
    // string; the result is checked and owned below.
    let fd = unsafe { libc::openat(dir, c.as_ptr(), flags | libc::O_CLOEXEC | libc::O_NOCTTY) };
    if fd < 0 {
        return Err(sys::errno());
    }
    // SAFETY: just returned by openat, owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// What of the process whose /proc directory is `dir` could be read: the
/// guarded files' contents (the secret named where it showed), the links'
/// targets, the directories' entries. Empty when everything was refused.
fn guarded_reads(dir: RawFd, secret: &str) -> Vec<String> {
    let mut got = Vec::new();
    for f in GUARDED_FILES {
        let Ok(fd) = at(dir, f, libc::O_RDONLY) else { continue };
        // mem is checked when opened (offset 0 is never mapped, so a read
        // proves nothing more); the others when read.
        if *f == "mem" {
            got.push("opened its mem".into());
            continue;
        }
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::Read::take(std::fs::File::from(fd), 1 << 20), &mut bytes);
        match bytes.len() {
            0 => {}
            _ if String::from_utf8_lossy(&bytes).contains(secret) => got.push(format!("read the canary's secret from its {f}")),
            _ => got.push(format!("read its {f}")),
        }
    }
    for l in GUARDED_LINKS {
        if at(dir, l, libc::O_PATH).is_ok() {
            got.push(format!("opened its {l}"));
        }
    }
    for d in GUARDED_DIRS {
        if let Ok(fd) = at(dir, d, libc::O_RDONLY | libc::O_DIRECTORY) {
            if has_entries(fd) {
                got.push(format!("listed its {d}"));
            }
        }
    }
    got
}

/// Whether the directory `fd` is open on can be listed (beyond . and ..).
fn has_entries(fd: OwnedFd) -> bool {
    // Dir takes the descriptor over (and closes it).
    let Ok(mut dir) = nix::dir::Dir::from_fd(std::os::fd::IntoRawFd::into_raw_fd(fd)) else { return false };
    let listed = dir.iter().flatten().any(|e| !matches!(e.file_name().to_bytes(), b"." | b".."));
    listed
}

/// `process_vm_readv` of one byte at a bad address of `pid`: the access
/// check comes first (EPERM), a bad address after it (EFAULT).
fn vm_read(pid: i32) -> Option<String> {
    let mut byte = [0u8; 1];
    let local = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let remote = libc::iovec { iov_base: 8 as *mut libc::c_void, iov_len: 1 };
    // SAFETY: one local iovec over a live stack byte; the remote address is
    // only read by the kernel after its access check.
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    match (n, sys::errno()) {
        (_, nix::errno::Errno::EPERM | nix::errno::Errno::EACCES | nix::errno::Errno::ESRCH) if n < 0 => None,
        _ => Some("process_vm_readv got past the access check".into()),
    }
}

/// Probe 101: the canary cannot be signalled: not through its /proc
/// directory as a pidfd (its pid namespace is not the session's), and not
/// by pid (the session's pid namespace has none for it).
pub(crate) fn outer_signals(c: &Ctx) -> Outcome {
    let mut got = Vec::new();
    let dir = canary_dir(c);
    if let Some(dir) = &dir {
        // SAFETY: pidfd_send_signal of signal 0 (a check only) on a
        // descriptor we hold.
        if unsafe { libc::syscall(libc::SYS_pidfd_send_signal, dir.as_raw_fd(), 0, std::ptr::null::<libc::siginfo_t>(), 0) } == 0 {
            got.push("signalled it through its /proc directory".to_string());
        }
    }
    if canary_by_pid(c) {
        // SAFETY: kill with signal 0 only checks whether a signal could be sent.
        if unsafe { libc::kill(c.spec.canary_pid, 0) } == 0 {
            got.push(format!("kill({}, 0) reached it", c.spec.canary_pid));
        }
    }
    match (got.is_empty(), dir.is_some()) {
        (false, _) => Outcome::fail(got.join("; ")),
        (true, true) => Outcome::pass_note(format!("the canary (pid {}) is visible but has no pid in the session's pid namespace", c.spec.canary_pid)),
        (true, false) => Outcome::pass_note(NOT_VISIBLE),
    }
}

/// Settings of /proc/PID that its owner's uid may change without a
/// ptrace-mode check: raising the OOM score, the autogroup's niceness,
/// what a core dump holds, resetting memory and scheduler accounting.
const OWNER_SETTINGS: &[&str] = &["oom_score_adj", "oom_adj", "autogroup", "coredump_filter", "clear_refs", "sched"];

/// Probe 102: which of the canary's `OWNER_SETTINGS` the session could
/// write (opened for writing, nothing written). Under a masked /proc a
/// session of the canary's uid can: degraded, named; without a pid
/// namespace of its own, a failure.
pub(crate) fn outer_settings(c: &Ctx) -> Outcome {
    let Some(dir) = canary_dir(c) else { return Outcome::pass_note(NOT_VISIBLE) };
    let writable: Vec<&str> = OWNER_SETTINGS.iter().copied().filter(|f| at(dir.as_raw_fd(), f, libc::O_WRONLY).is_ok()).collect();
    if writable.is_empty() {
        return Outcome::pass_note(format!(
            "the canary (pid {}) is visible; none of {} can be opened for writing",
            c.spec.canary_pid,
            OWNER_SETTINGS.join(", ")
        ));
    }
    let own_pid_ns = sys::ns_inode("self", "pid").is_some_and(|ns| Some(&ns) != c.spec.outer_ns.get("pid"));
    let what = format!("the canary's {} can be opened for writing (its uid is the session's on host files)", writable.join(", "));
    if c.spec.container_proc && own_pid_ns {
        Outcome::degraded(format!(
            "{what}: under the container's masked /proc a session may raise the OOM score and the niceness of the outer processes of its own uid \
             (under memory pressure it makes, the kernel then kills them first), and change their core dump filter and reset their accounting"
        ))
    } else {
        Outcome::fail(what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The detector itself: aimed at a process nothing protects (a child
    /// of this test, in its user namespace, with the same ids), it reports
    /// the secret and the rest. No plan can take the session's user
    /// namespace away, so this is where the probe is shown to fail.
    #[test]
    fn an_unguarded_process_is_reported() {
        let secret = format!("agent-sandbox-test-secret-{}", std::process::id());
        let mut child = std::process::Command::new("sleep").arg("30").env("SECRET", &secret).spawn().unwrap();
        let dir = sys::open(std::path::Path::new(&format!("/proc/{}", child.id())), libc::O_RDONLY | libc::O_DIRECTORY, 0).unwrap();
        // Until it has exec'd, its environment is still ours; its name
        // changes before the new program's stack (and environment) is set
        // up, when environ reads empty for a moment.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let ready = || {
            std::fs::read_to_string(format!("/proc/{}/comm", child.id())).unwrap_or_default().starts_with("sleep")
                && std::fs::read(format!("/proc/{}/environ", child.id())).is_ok_and(|e| !e.is_empty())
        };
        while !ready() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let got = guarded_reads(dir.as_raw_fd(), &secret);
        let vm = vm_read(child.id() as i32);
        let _ = child.kill();
        let _ = child.wait();
        assert!(got.contains(&"read the canary's secret from its environ".to_string()), "{got:?}");
        for what in ["opened its mem", "read its maps", "opened its root", "opened its cwd", "opened its fd/0", "opened its ns/mnt", "listed its fdinfo"] {
            assert!(got.iter().any(|g| g == what), "{what}: {got:?}");
        }
        assert!(vm.is_some(), "process_vm_readv of a process we may trace passes the check");
    }
}
