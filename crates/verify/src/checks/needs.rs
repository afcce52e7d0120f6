//! What agents need from the kernel, and the session's profile keeps,
//! still works: nested user namespaces as `unshare -r`, Chromium's sandbox
//! and rootless containers use them (mounts, pivot_root, chroot, a
//! hostname, setns, clone3), and debugging a child (ptrace,
//! process_vm_readv/writev, kcmp, gdb's ADDR_NO_RANDOMIZE).
//!
//! Each check lists the operations that fail. A container runtime's own
//! seccomp profile may refuse some of them to everything in the container
//! (podman's refuses sethostname, kcmp, ADDR_NO_RANDOMIZE): the launcher
//! tries the same operations outside the session first
//! (`outside_refusals`), and what fails there too is reported as a note,
//! not as a failure of the session.

use super::abi::{self, Answer};
use super::sys::in_child;
use super::Ctx;
use crate::child::wait_deadline;
use crate::Outcome;
use std::time::Duration;

/// The operations that fail where this runs (the launcher's side).
pub(crate) fn outside_refusals() -> Vec<String> {
    let mut v = nested_failures();
    v.extend(debug_failures());
    v
}

pub(crate) fn nested_userns(c: &Ctx) -> Outcome {
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    judge(nested_failures(), &c.spec.outside_refuses, root.then_some(ROOT_MAP_NOTE))
}

pub(crate) fn debugging(c: &Ctx) -> Outcome {
    judge(debug_failures(), &c.spec.outside_refuses, None)
}

/// Why a session run by root keeps its nested namespaces unmapped.
const ROOT_MAP_NOTE: &str =
    "run by root: the nested namespace stays unmapped, since mapping the outer uid 0 needs CAP_SETFCAP (Linux 5.12+), which no session has";

/// Failures that also happen outside the session are the container's.
fn judge(failures: Vec<String>, outside: &[String], note: Option<&str>) -> Outcome {
    let (theirs, ours): (Vec<String>, Vec<String>) = failures.into_iter().partition(|f| outside.contains(f));
    if !ours.is_empty() {
        return Outcome::fail(format!("{} failed", ours.join(", ")));
    }
    let mut notes: Vec<String> = note.map(String::from).into_iter().collect();
    if !theirs.is_empty() {
        notes.push(format!("refused outside the session too (the container's own profile): {}", theirs.join(", ")));
    }
    if notes.is_empty() {
        Outcome::pass()
    } else {
        Outcome::pass_note(notes.join("; "))
    }
}

fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Names of the bits `mount_steps` and `uts_steps` report.
const MOUNT_STEPS: &[&str] = &["uid_map/gid_map (`unshare -r`)", "private mounts", "a tmpfs", "pivot_root", "umount of the old root", "chroot"];
const UTS_STEPS: &[&str] = &["sethostname in a new UTS namespace", "setns back into a UTS namespace"];
/// A child's exit code when it could not even unshare.
const NO_UNSHARE: i32 = 128;

fn nested_failures() -> Vec<String> {
    let mut f = run_steps("unshare(CLONE_NEWUSER | CLONE_NEWNS)", MOUNT_STEPS, mount_steps);
    f.extend(run_steps("unshare(CLONE_NEWUSER | CLONE_NEWUTS)", UTS_STEPS, uts_steps));
    f.extend(clone_newuser());
    f
}

/// Runs `steps` in a child; its exit code has a bit per failed step.
fn run_steps(unshare: &str, names: &[&str], steps: fn() -> i32) -> Vec<String> {
    match in_child(Duration::from_secs(10), steps) {
        Ok(0) => vec![],
        Ok(NO_UNSHARE) => vec![unshare.to_string()],
        Ok(bits) => names.iter().enumerate().filter(|(i, _)| bits & (1 << i) != 0).map(|(_, n)| n.to_string()).collect(),
        Err(e) => vec![format!("{unshare} ({e})")],
    }
}

/// `unshare -r`, then what a container runtime does inside: its own root
/// on a tmpfs (pivot_root, the old root unmounted), chroot.
fn mount_steps() -> i32 {
    use nix::mount::{mount, umount2, MntFlags, MsFlags};
    use nix::sched::{unshare, CloneFlags};
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).is_err() {
        return NO_UNSHARE;
    }
    // Root's mapping needs CAP_SETFCAP (see ROOT_MAP_NOTE); others map
    // themselves to root inside.
    let mapped = uid == 0
        || std::fs::write("/proc/self/setgroups", "deny").is_ok()
            && std::fs::write("/proc/self/uid_map", format!("0 {uid} 1")).is_ok()
            && std::fs::write("/proc/self/gid_map", format!("0 {gid} 1")).is_ok();
    let private = mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>).is_ok();
    let tmpfs = mount(Some("tmpfs"), "/tmp", Some("tmpfs"), MsFlags::empty(), None::<&str>).is_ok() && nix::unistd::chdir("/tmp").is_ok();
    // The new root over the old one (runc's way: no directory to create).
    let pivot = tmpfs && nix::unistd::pivot_root(".", ".").is_ok();
    let old_gone = pivot && umount2(".", MntFlags::MNT_DETACH).is_ok() && nix::unistd::chdir("/").is_ok();
    let chroot = nix::unistd::chroot("/").is_ok();
    bits(&[mapped, private, tmpfs, pivot, old_gone, chroot])
}

/// A hostname of its own, and back into a UTS namespace it owns.
fn uts_steps() -> i32 {
    use nix::sched::{setns, unshare, CloneFlags};
    if unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWUTS).is_err() {
        return NO_UNSHARE;
    }
    let Ok(first) = std::fs::File::open("/proc/self/ns/uts") else { return 0b11 };
    let named = unshare(CloneFlags::CLONE_NEWUTS).is_ok() && nix::unistd::sethostname("agent-sandbox-nested").is_ok();
    let back = setns(first, CloneFlags::CLONE_NEWUTS).is_ok();
    bits(&[named, back])
}

/// A bit per step that did not work.
fn bits(ok: &[bool]) -> i32 {
    ok.iter().enumerate().filter(|(_, ok)| !**ok).map(|(i, _)| 1 << i).sum()
}

/// A user and pid namespace made by clone3 (glibc and modern runtimes),
/// or by clone where clone3 is not available (glibc falls back the same
/// way on ENOSYS, which the session's profile never answers for clone3).
fn clone_newuser() -> Vec<String> {
    let flags = (libc::CLONE_NEWUSER | libc::CLONE_NEWPID) as u64;
    // struct clone_args { flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls }
    let mut args = [flags, 0, 0, 0, libc::SIGCHLD as u64, 0, 0, 0];
    // SAFETY: clone3 without a stack behaves like fork; the child only _exits.
    let mut pid = unsafe { libc::syscall(libc::SYS_clone3, args.as_mut_ptr(), std::mem::size_of_val(&args)) };
    let mut what = "clone3(CLONE_NEWUSER | CLONE_NEWPID)";
    if pid < 0 && last_errno() == libc::ENOSYS {
        what = "clone(CLONE_NEWUSER | CLONE_NEWPID)";
        // SAFETY: clone without a stack behaves like fork (x86_64 and aarch64 argument order agree on the first two).
        pid = unsafe { libc::syscall(libc::SYS_clone, flags | libc::SIGCHLD as u64, 0usize, 0usize, 0usize, 0usize) };
    }
    match pid {
        0 => {
            // SAFETY: the child ends at once, without unwinding.
            unsafe { libc::_exit(if libc::getpid() == 1 { 0 } else { 1 }) }
        }
        p if p < 0 => vec![what.to_string()],
        p => match wait_deadline(nix::unistd::Pid::from_raw(p as i32), Duration::from_secs(5)) {
            Ok(0) => vec![],
            _ => vec![what.to_string()],
        },
    }
}

/// A value a forked child has at the same address.
static MAGIC: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0x05ee_d0fa_9e57_ab1e);
const ADDR_NO_RANDOMIZE: u64 = 0x0004_0000;

/// gdb's and strace's view of a child, and gdb's personality flag.
fn debug_failures() -> Vec<String> {
    let paused = || loop {
        // SAFETY: pause has no preconditions.
        unsafe { libc::pause() };
    };
    // SAFETY: single-threaded (the probe, or the launcher before the
    // session); the child only pauses until killed.
    let mut f = match unsafe { crate::child::run(paused) } {
        Err(e) => vec![format!("fork ({e})")],
        Ok(child) => {
            let f = trace(child.as_raw());
            crate::child::kill_and_reap(child);
            f
        }
    };
    f.extend(norandom());
    f
}

fn trace(pid: i32) -> Vec<String> {
    let addr = MAGIC.as_ptr() as usize;
    let want = MAGIC.load(std::sync::atomic::Ordering::Relaxed);
    let mut f = Vec::new();
    // SAFETY: ptrace requests on our own child with integer arguments; the
    // tracee is detached here and killed by the caller.
    unsafe {
        if libc::ptrace(libc::PTRACE_SEIZE, pid, 0, 0) != 0 {
            return vec!["PTRACE_SEIZE".into()];
        }
        libc::ptrace(libc::PTRACE_INTERRUPT, pid, 0, 0);
        let mut status = 0;
        libc::waitpid(pid, &mut status, libc::__WALL);
        if libc::ptrace(libc::PTRACE_PEEKDATA, pid, addr, 0) as u64 != want {
            f.push("PTRACE_PEEKDATA".into());
        }
    }
    f.extend(vm_read_write(pid, addr, want));
    // SAFETY: kcmp with integer arguments (do we share memory with the child?).
    if unsafe {
        libc::syscall(libc::SYS_kcmp, libc::getpid(), pid, 0 /* KCMP_VM */, 0, 0)
    } < 0
    {
        f.push("kcmp".into());
    }
    // SAFETY: detaching our tracee.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0, 0) };
    f
}

fn vm_read_write(pid: i32, addr: usize, want: u64) -> Vec<String> {
    let mut got = 0u64;
    let local = libc::iovec { iov_base: (&mut got as *mut u64).cast(), iov_len: 8 };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: 8 };
    let mut f = Vec::new();
    // SAFETY: both iovecs describe 8 live bytes (ours, and the child's copy of MAGIC).
    if unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) } != 8 || got != want {
        f.push("process_vm_readv".into());
    }
    let mut new = !want;
    let local = libc::iovec { iov_base: (&mut new as *mut u64).cast(), iov_len: 8 };
    // SAFETY: as above, writing the child's copy.
    if unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) } != 8 {
        f.push("process_vm_writev".into());
    }
    f
}

/// gdb turns address randomisation off for the programs it runs, on each
/// ABI whose calls the kernel runs (in a child: the persona is the
/// process's own).
fn norandom() -> Vec<String> {
    let mut f = Vec::new();
    for a in abi::reachable().runs {
        let Some(nr) = crate::sandbox::seccomp::table::by_name("personality").and_then(|r| r.nr(a)) else { continue };
        let works = in_child(Duration::from_secs(2), || {
            let call = |v: u64| -> Answer { abi::call(a, nr, [v, 0, 0, 0, 0, 0]) };
            match call(0xffff_ffff) {
                Ok(current) if call(ADDR_NO_RANDOMIZE).is_ok() && call(current as u64).is_ok() => 0,
                _ => 1,
            }
        });
        if works != Ok(0) {
            f.push(format!("personality(ADDR_NO_RANDOMIZE) ({})", a.name()));
        }
    }
    f
}
