//! The session's syscall profile, checked from inside (SPEC §3 syscalls).
//! Per group of the table: every refused call answers the profile's errno
//! on every ABI this process can reach, called with all-zero arguments
//! (which the kernel would reject differently, or which are harmless, had
//! the filter let the call through), plus a real attempt where one is
//! harmless. Personality flags and address families get their own probes.
//! Just as important, what agents need still works: nested user namespaces
//! with mounts, pivot_root and chroot inside them; ptrace, process_vm_* and
//! kcmp on a child.

use super::abi::{self, Answer, LowPage};
use super::sys::{in_child, NO, OK};
use super::Ctx;
use crate::sandbox::seccomp::abi::Abi;
use crate::sandbox::seccomp::table::{self, Group, Rule, ALLOWED_FAMILIES, EAFNOSUPPORT, ENOSYS, EOPNOTSUPP, EPERM, ROWS};
use crate::verify::Outcome;
use std::ffi::CString;
use std::time::Duration;

fn errno(e: u16) -> Answer {
    Err(i32::from(e))
}

/// The native number of `name` (every row used here has one).
fn nr(name: &str, abi: Abi) -> Option<u32> {
    table::by_name(name).and_then(|r| r.nr(abi))
}

fn native_call(name: &str, args: [u64; 6]) -> Answer {
    let native = crate::sandbox::seccomp::abi::native();
    match nr(name, native) {
        Some(n) => abi::call(native, n, args),
        None => Err(libc::ENOSYS),
    }
}

/// Every refused call of `g`, with all-zero arguments, on `abis`.
fn sweep(g: Group, abis: &[Abi]) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut bad = Vec::new();
    for row in ROWS.iter().filter(|r| r.group == g) {
        let Rule::Deny(e) = row.rule else { continue };
        for abi in abis {
            let Some(nr) = row.nr(*abi) else { continue };
            n += 1;
            let got = abi::call(*abi, nr, [0; 6]);
            if got != errno(e) {
                bad.push(format!("{} ({}) {}", row.name, abi.name(), abi::describe(got)));
            }
        }
    }
    (n, bad)
}

fn finish(bad: Vec<String>, what: String, notes: Vec<String>) -> Outcome {
    if !bad.is_empty() {
        let more = bad.len().saturating_sub(8);
        let mut shown = bad.into_iter().take(8).collect::<Vec<_>>().join("; ");
        if more > 0 {
            shown += &format!("; and {more} more");
        }
        return Outcome::fail(shown);
    }
    Outcome::pass_note(std::iter::once(what).chain(notes).collect::<Vec<_>>().join("; "))
}

fn abi_names(abis: &[Abi]) -> String {
    abis.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
}

/// The probe of one group of refusals.
pub fn group(c: &Ctx, g: Group) -> Outcome {
    let reach = abi::reachable();
    let (n, mut bad) = sweep(g, &reach.filtered);
    bad.extend(attempts(c, g));
    finish(bad, format!("{n} calls refused ({})", abi_names(&reach.filtered)), reach.notes)
}

/// Real attempts that are harmless even where they would work.
fn attempts(c: &Ctx, g: Group) -> Vec<String> {
    let mut bad = Vec::new();
    let mut expect = |what: &str, got: Answer, want: u16| {
        if got != errno(want) {
            bad.push(format!("{what} {}", abi::describe(got)));
        }
    };
    match g {
        Group::Keyrings => expect("add_key to the session's own keyring", add_key(&c.spec.nonce), EPERM),
        Group::KernelHooks => {
            // O_CLOEXEC | UFFD_USER_MODE_ONLY: allowed without privileges on 5.11+.
            expect("userfaultfd (user-mode only)", native_call("userfaultfd", [(libc::O_CLOEXEC | 1) as u64, 0, 0, 0, 0, 0]), EPERM);
            expect("perf_event_open of this process", perf_self(), EPERM);
        }
        Group::IoUring => {
            let params = [0u8; 120];
            expect("io_uring_setup", native_call("io_uring_setup", [4, params.as_ptr() as u64, 0, 0, 0, 0]), ENOSYS);
        }
        Group::FileHandles => {
            let mut fh = [0u8; 8 + 128];
            fh[0..4].copy_from_slice(&128u32.to_ne_bytes());
            let mut mount_id = 0i32;
            let path = c"/etc/hostname";
            let args = [libc::AT_FDCWD as u64, path.as_ptr() as u64, fh.as_mut_ptr() as u64, (&mut mount_id as *mut i32) as u64, 0, 0];
            expect("name_to_handle_at", native_call("name_to_handle_at", args), EOPNOTSUPP);
        }
        _ => {}
    }
    bad
}

fn add_key(nonce: &str) -> Answer {
    let desc = CString::new(format!("agent-sandbox-verify-{nonce}-own")).unwrap_or_default();
    let args = [c"user".as_ptr() as u64, desc.as_ptr() as u64, nonce.as_ptr() as u64, nonce.len() as u64, libc::KEY_SPEC_SESSION_KEYRING as u64, 0];
    native_call("add_key", args)
}

/// A software clock event on this process (kernel.perf_event_paranoid <= 2
/// allows it to anyone).
fn perf_self() -> Answer {
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes()); // PERF_TYPE_SOFTWARE
    attr[4..8].copy_from_slice(&128u32.to_ne_bytes()); // size; config 0: CPU clock
    native_call("perf_event_open", [attr.as_ptr() as u64, 0, u64::MAX /* cpu -1 */, u64::MAX /* no group */, 0, 0])
}

/// Personality flags that weaken memory protections.
const WEAKENING_PERSONAS: &[(u64, &str)] = &[
    (0x0040_0000, "READ_IMPLIES_EXEC"),
    (0x0010_0000, "MMAP_PAGE_ZERO"),
    (0x0020_0000, "ADDR_COMPAT_LAYOUT"),
    (0x0800_0000, "ADDR_LIMIT_3GB"),
];
const ADDR_NO_RANDOMIZE: u64 = 0x0004_0000;

pub fn personality(_c: &Ctx) -> Outcome {
    let reach = abi::reachable();
    let mut bad = Vec::new();
    for abi in &reach.filtered {
        let Some(n) = nr("personality", *abi) else { continue };
        let call = |v: u64| abi::call(*abi, n, [v, 0, 0, 0, 0, 0]);
        let runs = reach.runs.contains(abi);
        let current = call(0xffff_ffff);
        if runs && current.is_err() {
            bad.push(format!("the personality query {} on {}", abi::describe(current), abi.name()));
        }
        for (flag, name) in WEAKENING_PERSONAS {
            let got = call(*flag);
            if got != errno(EPERM) {
                bad.push(format!("{name} ({}) {}", abi.name(), abi::describe(got)));
            }
        }
        // gdb turns address randomisation off for the programs it runs.
        if let (true, Ok(current)) = (runs, current) {
            if call(ADDR_NO_RANDOMIZE).is_err() || call(current as u64).is_err() {
                bad.push(format!("ADDR_NO_RANDOMIZE (gdb) is refused on {}", abi.name()));
            }
        }
    }
    finish(bad, format!("weakening flags refused, ADDR_NO_RANDOMIZE allowed ({})", abi_names(&reach.filtered)), reach.notes)
}

const SOCKET_TYPES: &[i32] = &[libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_RAW, libc::SOCK_SEQPACKET];
/// One past the highest address family (AF_MCTP is 45).
const AF_END: i32 = 46;

fn socket(domain: i32, ty: i32, proto: i32) -> Answer {
    // SAFETY: plain socket call; a descriptor returned is closed at once.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: closing the descriptor we just got.
    unsafe { libc::close(fd) };
    Ok(i64::from(fd))
}

fn socketpair(domain: i32) -> Answer {
    let mut fds = [0i32; 2];
    // SAFETY: socketpair fills the two-element array; both are closed at once.
    if unsafe { libc::socketpair(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
    }
    // SAFETY: closing the descriptors we just got.
    unsafe { libc::close(fds[0]) };
    // SAFETY: as above.
    unsafe { libc::close(fds[1]) };
    Ok(0)
}

fn refused_families() -> impl Iterator<Item = i32> {
    (0..AF_END).filter(|f| !ALLOWED_FAMILIES.contains(&(*f as u32)))
}

pub fn families(_c: &Ctx) -> Outcome {
    let mut bad = Vec::new();
    for fam in refused_families() {
        for ty in SOCKET_TYPES {
            let got = socket(fam, *ty, 0);
            if got != errno(EAFNOSUPPORT) {
                bad.push(format!("socket({fam}, {ty}) {}", abi::describe(got)));
            }
        }
        let got = socketpair(fam);
        if got != errno(EAFNOSUPPORT) {
            bad.push(format!("socketpair({fam}) {}", abi::describe(got)));
        }
    }
    let mut reach = abi::reachable();
    bad.extend(compat_sockets(&reach.filtered));
    bad.extend(packet_in_nested_netns(&mut reach.notes));
    bad.extend(allowed_families_open(&mut reach.notes));
    finish(bad, format!("families other than unix, inet, inet6, netlink refused ({})", abi_names(&reach.filtered)), reach.notes)
}

/// vsock through x32's and i386's socket calls, and i386's socketcall.
fn compat_sockets(abis: &[Abi]) -> Vec<String> {
    let vsock = libc::AF_VSOCK as u64;
    let mut bad = Vec::new();
    for abi in abis.iter().filter(|a| **a != crate::sandbox::seccomp::abi::native()) {
        let Some(n) = nr("socket", *abi) else { continue };
        let got = abi::call(*abi, n, [vsock, libc::SOCK_STREAM as u64, 0, 0, 0, 0]);
        if got != errno(EAFNOSUPPORT) {
            bad.push(format!("socket(AF_VSOCK) ({}) {}", abi.name(), abi::describe(got)));
        }
    }
    if let (true, Some(n), Some(page)) = (abis.contains(&Abi::I386), nr("socketcall", Abi::I386), LowPage::new()) {
        let args = page.put(&[libc::AF_VSOCK as u32, libc::SOCK_STREAM as u32, 0]);
        let got = abi::call(Abi::I386, n, [1 /* SYS_SOCKET */, args, 0, 0, 0, 0]);
        if got != errno(ENOSYS) {
            bad.push(format!("socketcall(SYS_SOCKET, AF_VSOCK) (i386) {}", abi::describe(got)));
        }
    }
    bad
}

/// In a new user + network namespace the capability checks of packet
/// sockets pass; only the profile stops them.
fn packet_in_nested_netns(notes: &mut Vec<String>) -> Vec<String> {
    let r = in_child(Duration::from_secs(5), || {
        if nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER | nix::sched::CloneFlags::CLONE_NEWNET).is_err() {
            return 2;
        }
        match socket(libc::AF_PACKET, libc::SOCK_RAW, i32::from((libc::ETH_P_ALL as u16).to_be())) {
            Err(e) if e == i32::from(EAFNOSUPPORT) => OK,
            _ => NO,
        }
    });
    match r {
        Ok(OK) => vec![],
        Ok(2) => {
            notes.push("no nested user namespace here for the packet-socket attempt".into());
            vec![]
        }
        Ok(_) => vec!["an AF_PACKET socket opened in a nested user + network namespace".into()],
        Err(e) => vec![format!("the nested packet-socket attempt {e}")],
    }
}

fn allowed_families_open(notes: &mut Vec<String>) -> Vec<String> {
    let mut bad = Vec::new();
    let ipv6 = std::path::Path::new("/proc/net/if_inet6").exists();
    for (fam, ty, proto, name) in [
        (libc::AF_UNIX, libc::SOCK_STREAM, 0, "unix"),
        (libc::AF_INET, libc::SOCK_DGRAM, 0, "inet"),
        (libc::AF_INET6, libc::SOCK_DGRAM, 0, "inet6"),
        (libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE, "netlink"),
    ] {
        match socket(fam, ty, proto) {
            Ok(_) => {}
            Err(e) if fam == libc::AF_INET6 && !ipv6 && e == i32::from(EAFNOSUPPORT) => notes.push("the kernel has IPv6 off".into()),
            got => bad.push(format!("a {name} socket {} (sessions need it)", abi::describe(got))),
        }
    }
    bad
}

/// Nested user namespaces as Chromium's sandbox, `unshare -r` and rootless
/// containers use them.
pub fn nested_userns(_c: &Ctx) -> Outcome {
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    let steps = in_child(Duration::from_secs(10), nested_userns_steps);
    let mut bad = Vec::new();
    match steps {
        Ok(OK) => {}
        Ok(code) => bad.push(NESTED_STEPS.get(code as usize).map_or(format!("step {code}"), |s| s.to_string()) + " failed"),
        Err(e) => bad.push(format!("the nested namespace steps {e}")),
    }
    if let Err(e) = clone3_newuser() {
        bad.push(e);
    }
    match (bad.is_empty(), root) {
        (true, true) => Outcome::pass_note(ROOT_MAP_NOTE),
        _ => Outcome::from_problems(bad),
    }
}

/// Why a session run by root keeps its nested namespaces unmapped.
const ROOT_MAP_NOTE: &str = "run by root: the nested namespace stays unmapped, since mapping the outer uid 0 needs CAP_SETFCAP (Linux 5.12+), which no session has";

/// What each exit code of `nested_userns_steps` means.
const NESTED_STEPS: &[&str] = &[
    "",
    "",
    "unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS)",
    "writing uid_map/gid_map (as `unshare -r` does)",
    "making the mounts private",
    "mounting a tmpfs",
    "pivot_root into it",
    "unmounting the old root",
    "chroot",
    "unshare(CLONE_NEWUTS) and sethostname",
    "setns back into the first UTS namespace",
];

/// `unshare -r`, then what a container runtime does inside: its own root
/// on a tmpfs (pivot_root, the old root unmounted), chroot, a hostname.
fn nested_userns_steps() -> i32 {
    use nix::mount::{mount, umount2, MntFlags, MsFlags};
    use nix::sched::{setns, unshare, CloneFlags};
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWUTS).is_err() {
        return 2;
    }
    // Root's mapping needs CAP_SETFCAP (see ROOT_MAP_NOTE); others map
    // themselves to root inside.
    let mapped = uid == 0
        || std::fs::write("/proc/self/setgroups", "deny").is_ok()
            && std::fs::write("/proc/self/uid_map", format!("0 {uid} 1")).is_ok()
            && std::fs::write("/proc/self/gid_map", format!("0 {gid} 1")).is_ok();
    // A UTS namespace this user namespace owns, to come back to.
    let Ok(first_uts) = std::fs::File::open("/proc/self/ns/uts") else { return 10 };
    if !mapped {
        return 3;
    }
    if mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>).is_err() {
        return 4;
    }
    if mount(Some("tmpfs"), "/tmp", Some("tmpfs"), MsFlags::empty(), None::<&str>).is_err() || nix::unistd::chdir("/tmp").is_err() {
        return 5;
    }
    // The new root over the old one (runc's way: no directory to create).
    if nix::unistd::pivot_root(".", ".").is_err() {
        return 6;
    }
    if umount2(".", MntFlags::MNT_DETACH).is_err() || nix::unistd::chdir("/").is_err() {
        return 7;
    }
    if nix::unistd::chroot("/").is_err() {
        return 8;
    }
    if unshare(CloneFlags::CLONE_NEWUTS).is_err() || nix::unistd::sethostname("agent-sandbox-nested").is_err() {
        return 9;
    }
    if setns(first_uts, CloneFlags::CLONE_NEWUTS).is_err() {
        return 10;
    }
    OK
}

/// clone3 with CLONE_NEWUSER | CLONE_NEWPID (glibc's posix_spawn and
/// modern runtimes create namespaces with clone3).
fn clone3_newuser() -> Result<(), String> {
    // struct clone_args { flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls }
    let mut args = [0u64; 8];
    args[0] = (libc::CLONE_NEWUSER | libc::CLONE_NEWPID) as u64;
    args[4] = libc::SIGCHLD as u64;
    // SAFETY: clone3 without a stack behaves like fork; the child only _exits.
    let pid = unsafe { libc::syscall(libc::SYS_clone3, args.as_mut_ptr(), std::mem::size_of_val(&args)) };
    match pid {
        0 => {
            // SAFETY: the child ends at once, without unwinding.
            unsafe { libc::_exit(if libc::getpid() == 1 { 0 } else { 1 }) }
        }
        p if p < 0 => Err(format!("clone3(CLONE_NEWUSER | CLONE_NEWPID) {}", abi::describe(Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))))),
        p => match super::sys::wait_deadline(nix::unistd::Pid::from_raw(p as i32), Duration::from_secs(5)) {
            Ok(0) => Ok(()),
            Ok(code) => Err(format!("the clone3 child was not pid 1 of its namespace ({code})")),
            Err(e) => Err(format!("the clone3 child {e}")),
        },
    }
}

/// A value the child has at the same address (fork copies it).
static MAGIC: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0x5eed_0f_a9e5_7ab1e);

/// gdb's and strace's view of a child: attach, read its memory with
/// ptrace and process_vm_readv, write it with process_vm_writev, compare
/// it with kcmp.
pub fn ptrace_child(_c: &Ctx) -> Outcome {
    // SAFETY: the probe is single-threaded; the child only pauses until killed.
    let child = match unsafe { nix::unistd::fork() } {
        Err(e) => return Outcome::fail(format!("fork: {e}")),
        Ok(nix::unistd::ForkResult::Child) => loop {
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        },
        Ok(nix::unistd::ForkResult::Parent { child }) => child,
    };
    let result = trace(child.as_raw());
    let _ = nix::sys::signal::kill(child, nix::sys::signal::Signal::SIGKILL);
    let _ = nix::sys::wait::waitpid(child, None);
    Outcome::from_problems(result)
}

fn trace(pid: i32) -> Vec<String> {
    let mut bad = Vec::new();
    let addr = MAGIC.as_ptr() as usize;
    let want = MAGIC.load(std::sync::atomic::Ordering::Relaxed);
    // SAFETY: ptrace requests on our own child with integer arguments; the
    // tracee is detached (then killed) by the caller.
    unsafe {
        if libc::ptrace(libc::PTRACE_SEIZE, pid, 0, 0) != 0 {
            return vec![format!("PTRACE_SEIZE of a child {}", abi::describe(Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))))];
        }
        libc::ptrace(libc::PTRACE_INTERRUPT, pid, 0, 0);
        let mut status = 0;
        libc::waitpid(pid, &mut status, libc::__WALL);
        *libc::__errno_location() = 0;
        let peek = libc::ptrace(libc::PTRACE_PEEKDATA, pid, addr, 0) as u64;
        if peek != want {
            bad.push(format!("PTRACE_PEEKDATA read {peek:#x}, not {want:#x}"));
        }
    }
    bad.extend(vm_read_write(pid, addr, want));
    // SAFETY: kcmp with integer arguments: do this process and the child share their memory?
    let k = unsafe { libc::syscall(libc::SYS_kcmp, libc::getpid(), pid, 0 /* KCMP_VM */, 0, 0) };
    if k < 0 {
        bad.push(format!("kcmp of a child {}", abi::describe(Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0)))));
    }
    // SAFETY: detaching our tracee.
    unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0, 0) };
    bad
}

fn vm_read_write(pid: i32, addr: usize, want: u64) -> Vec<String> {
    let mut got = 0u64;
    let local = libc::iovec { iov_base: (&mut got as *mut u64).cast(), iov_len: 8 };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: 8 };
    // SAFETY: both iovecs describe 8 live bytes (ours, and the child's copy of MAGIC).
    let n = unsafe { libc::process_vm_readv(pid, &local, 1, &remote, 1, 0) };
    if n != 8 || got != want {
        return vec![format!("process_vm_readv of a child read {n} bytes ({got:#x})")];
    }
    let mut new = !want;
    let local = libc::iovec { iov_base: (&mut new as *mut u64).cast(), iov_len: 8 };
    // SAFETY: as above, writing the child's copy.
    let n = unsafe { libc::process_vm_writev(pid, &local, 1, &remote, 1, 0) };
    if n != 8 {
        return vec![format!("process_vm_writev of a child wrote {n} bytes")];
    }
    vec![]
}
