//! Privilege checks (docs/defences.md, privileges): no capabilities in any set,
//! no-new-privs, a setuid-root binary that does not elevate (observed from
//! its /proc status while it is blocked writing), new namespaces, and no
//! outer process visible through the pid namespace.

use super::sys::{self, status_field};
use super::Ctx;
use crate::Outcome;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

pub(crate) fn capabilities_none(_c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    let mut hdr = [LINUX_CAPABILITY_VERSION_3, 0u32];
    let mut data = [0u32; 6]; // two of {effective, permitted, inheritable}
                              // SAFETY: capget fills `data` (two 3-word structs) for the header's pid 0 (self).
    let rc = unsafe { libc::syscall(libc::SYS_capget, hdr.as_mut_ptr(), data.as_mut_ptr()) };
    if rc != 0 {
        bad.push(format!("capget: {}", sys::errno()));
    } else {
        for (i, set) in ["effective", "permitted", "inheritable"].iter().enumerate() {
            if data[i] != 0 || data[i + 3] != 0 {
                bad.push(format!("{set} set is {:08x}{:08x}", data[i + 3], data[i]));
            }
        }
    }
    let last: i32 = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(40);
    // SAFETY: prctl with integer arguments only.
    let bounding: Vec<i32> = (0..=last).filter(|c| unsafe { libc::prctl(libc::PR_CAPBSET_READ, *c, 0, 0, 0) } == 1).collect();
    if !bounding.is_empty() {
        bad.push(format!("bounding set holds {} capabilities", bounding.len()));
    }
    // SAFETY: prctl with integer arguments only.
    let ambient = (0..=last).filter(|c| unsafe { libc::prctl(libc::PR_CAP_AMBIENT, libc::PR_CAP_AMBIENT_IS_SET, *c, 0, 0) } == 1).count();
    if ambient > 0 {
        bad.push(format!("ambient set holds {ambient} capabilities"));
    }
    Outcome::from_problems(bad)
}

pub(crate) fn no_new_privs(_c: &Ctx) -> Outcome {
    // SAFETY: prctl with integer arguments only.
    match unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) } {
        1 => Outcome::pass(),
        v => Outcome::fail(format!("no_new_privs is {v}")),
    }
}

/// setuid-root programs Debian-like systems ship, that print a usage text.
const SETUID_CANDIDATES: &[&str] = &["su", "passwd", "chsh", "chfn", "gpasswd", "newgrp", "mount", "umount"];

fn setuid_root_binaries() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for name in SETUID_CANDIDATES {
        for dir in crate::sysbin::SYSTEM_DIRS {
            let p = Path::new(dir).join(name);
            if let Ok(m) = std::fs::metadata(&p) {
                // Owned by root outside: inside a non-root user namespace
                // root shows as the overflow uid.
                if m.is_file() && m.mode() & libc::S_ISUID != 0 && (m.uid() == 0 || m.uid() == 65534) {
                    out.push(p);
                    break;
                }
            }
        }
    }
    out
}

/// What an exec of `bin` looked like from /proc while it was alive.
struct Observed {
    euid: String,
    cap_eff: String,
    cap_prm: String,
}

/// Execs `bin --help` with stdout and stderr on a full pipe, so it blocks
/// on its first write, then reads its status.
fn observe_exec(bin: &Path) -> Option<Observed> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return None;
    }
    // SAFETY: both descriptors were just created and are owned here.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Fill the pipe so the child's first write blocks.
    // SAFETY: fcntl and write with valid descriptors and a stack buffer.
    unsafe {
        libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, 4096);
        let chunk = [b'x'; 4096];
        while libc::write(w.as_raw_fd(), chunk.as_ptr().cast(), chunk.len()) > 0 {}
        let fl = libc::fcntl(w.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(w.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK);
    }
    let path = CString::new(bin.as_os_str().as_encoded_bytes()).ok()?;
    let arg = CString::new("--help").ok()?;
    let wfd = w.as_raw_fd();
    let work = || {
        // SAFETY: in the forked child: dup2 on descriptors we own,
        // execve with NUL-terminated arrays of live CStrings.
        unsafe {
            libc::dup2(wfd, 1);
            libc::dup2(wfd, 2);
            let argv = [path.as_ptr(), arg.as_ptr(), std::ptr::null()];
            let envp = [std::ptr::null()];
            libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr());
        }
        127
    };
    // SAFETY: single-threaded probe; the child only dup2s and execs.
    let child = unsafe { crate::child::run(work) }.ok()?;
    // The child as /proc numbers it (the container's numbers under a
    // masked /proc, not the ones fork returns).
    let me = std::fs::read("/proc/self/cmdline").map(|b| String::from_utf8_lossy(&b).replace('\0', " ")).unwrap_or_default();
    let at = sys::proc_number(child.as_raw());
    let name = bin.file_name()?.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut seen = None;
    while let Some(at) = at.filter(|_| Instant::now() < deadline) {
        let comm = std::fs::read_to_string(format!("/proc/{at}/comm")).unwrap_or_default();
        if comm.trim() == name && sys::cmdline(at) != me {
            let get = |k| status_field(Some(at), k).unwrap_or_default();
            // Uid: real effective saved fs
            let euid = get("Uid").split_whitespace().nth(1).unwrap_or("").to_string();
            seen = Some(Observed { euid, cap_eff: get("CapEff"), cap_prm: get("CapPrm") });
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
    let _ = nix::sys::wait::waitpid(child, None);
    drop(r);
    seen
}

pub(crate) fn setuid_no_elevation(_c: &Ctx) -> Outcome {
    let candidates = setuid_root_binaries();
    if candidates.is_empty() {
        return Outcome::pass_note("no setuid-root program in the system directories");
    }
    // SAFETY: geteuid has no preconditions.
    let my_euid = unsafe { libc::geteuid() }.to_string();
    for bin in &candidates {
        let Some(o) = observe_exec(bin) else { continue };
        let zero = "0000000000000000";
        if o.euid != my_euid {
            return Outcome::fail(format!("{} ran with euid {} (ours is {my_euid})", bin.display(), o.euid));
        }
        if o.cap_eff != zero || o.cap_prm != zero {
            return Outcome::fail(format!("{} gained capabilities (CapEff {}, CapPrm {})", bin.display(), o.cap_eff, o.cap_prm));
        }
        return Outcome::pass_note(format!("{} kept euid {my_euid} and no capabilities", bin.display()));
    }
    Outcome::fail(format!("could not observe any of {} while it ran", candidates.len()))
}

pub(crate) fn namespaces_new(c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    let mut notes = Vec::new();
    for ns in ["pid", "ipc", "uts", "mnt", "user", "cgroup"] {
        let inner = sys::ns_inode("self", ns);
        let outer = c.spec.outer_ns.get(ns).copied();
        if inner.is_some() && inner == outer {
            // The cgroup namespace is unshared only where possible.
            if ns == "cgroup" {
                notes.push("cgroup namespace shared (not possible here)");
            } else {
                bad.push(format!("the {ns} namespace is the launcher's"));
            }
        }
    }
    match (bad.is_empty(), notes.is_empty()) {
        (true, true) => Outcome::pass(),
        (true, false) => Outcome::pass_note(notes.join("; ")),
        _ => Outcome::fail(bad.join("; ")),
    }
}

/// Every visible process is the session's. Under a masked /proc (the
/// plan binds the container's) the outer processes are visible by design:
/// degraded, not failed, as long as the session still has a pid namespace
/// of its own (without one, it could signal them: a failure).
pub(crate) fn outer_processes_invisible(c: &Ctx) -> Outcome {
    let bad = visible_outer_processes(c);
    let own_pid_ns = sys::ns_inode("self", "pid").is_some_and(|ns| Some(&ns) != c.spec.outer_ns.get("pid"));
    match (bad.is_empty(), c.spec.container_proc && own_pid_ns) {
        (true, _) => Outcome::pass(),
        (false, true) => Outcome::degraded(format!(
            "the container's masked /proc refuses the session a /proc of its own, so it shows the container's processes: {}. \
             Their command lines and status are readable; their environments, memory, files and namespaces are not (100), \
             they cannot be signalled (101), and what their owner may change is 102's",
            bad.join("; ")
        )),
        (false, false) => Outcome::fail(bad.join("; ")),
    }
}

/// The outer processes the session sees: the launcher and the canary by
/// name, then any process in another pid namespace (its namespace link
/// differs, or, where the kernel refuses the link across user namespaces,
/// its pid namespaces do not reach down to the session's: fewer `NSpid`
/// levels than the session's own), at most five named, with the count of
/// the rest.
fn visible_outer_processes(c: &Ctx) -> Vec<String> {
    let mut bad = Vec::new();
    for (who, pid) in [("launcher", c.spec.launcher_pid), ("canary", c.spec.canary_pid)] {
        let cmd = sys::cmdline(pid);
        if cmd.contains(crate::CANARY_VERB) || (who == "launcher" && cmd.contains(" verify")) {
            bad.push(format!("the outer {who} (pid {pid}) is visible"));
        }
    }
    let depth = |pid: &str| status_field_of(pid, "NSpid").map(|v| v.split_whitespace().count());
    let (my_ns, my_depth) = (sys::ns_inode("self", "pid"), depth("self"));
    let is_outer = |n: &String| match sys::ns_inode(n, "pid") {
        Some(ns) => Some(ns) != my_ns,
        None => depth(n).zip(my_depth).is_some_and(|(d, m)| d < m),
    };
    let outer: Vec<String> = sys::entries(Path::new("/proc")).into_iter().filter(|n| n.parse::<u32>().is_ok() && is_outer(n)).collect();
    for name in outer.iter().take(5) {
        bad.push(format!("process {name} ({}) is outside the session's pid namespace", sys::cmdline(name.parse().unwrap_or(0)).trim()));
    }
    if outer.len() > 5 {
        bad.push(format!("{} more outer processes", outer.len() - 5));
    }
    bad
}

/// A field of /proc/NAME/status (`NAME`: a pid or `self`).
fn status_field_of(name: &str, key: &str) -> Option<String> {
    match name.parse::<i32>() {
        Ok(pid) => status_field(Some(pid), key),
        Err(_) => status_field(None, key),
    }
}
