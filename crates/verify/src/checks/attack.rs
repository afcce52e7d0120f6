//! Adversarial probes: what a steered agent would try to get out. Each
//! passes (BLOCKED) when the attempt fails and fails (ESCAPED) when it
//! works; anything an attempt creates is removed at once. Targets outside
//! are the canary the launcher started (its pid, secret and sockets).

use super::sys::{self, in_child, NO, OK};
use super::Ctx;
use crate::Outcome;
use nix::sched::{unshare, CloneFlags};
use std::ffi::CString;
use std::path::Path;
use std::time::Duration;

/// Whether /proc's entry `n` is the canary.
pub(crate) fn is_canary(n: i32) -> bool {
    sys::cmdline(n).contains(crate::CANARY_VERB)
}

/// Whether `pid` in the session's pid namespace is the canary (its own
/// pid namespace gives the canary no pid; a weakened plan without one
/// does).
pub(crate) fn canary_by_pid(c: &Ctx) -> bool {
    sys::proc_number(c.spec.canary_pid).is_some_and(|n| n == c.spec.canary_pid && is_canary(n))
}

pub(crate) fn ptrace_outer(c: &Ctx) -> Outcome {
    let pid = c.spec.canary_pid;
    if !canary_by_pid(c) {
        return Outcome::pass_note("the outer canary has no pid in the session's pid namespace: nothing to attach to");
    }
    // SAFETY: PTRACE_SEIZE with integer arguments; on success we detach at once.
    let rc = unsafe { libc::ptrace(libc::PTRACE_SEIZE, pid, 0, 0) };
    if rc == 0 {
        // SAFETY: detaching the tracee we just seized.
        unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0, 0) };
        return Outcome::fail(format!("attached to the outer process {pid}"));
    }
    Outcome::pass()
}

pub(crate) fn proc_root_outer(c: &Ctx) -> Outcome {
    let pid = c.spec.canary_pid;
    let root = format!("/proc/{pid}/root/");
    if std::fs::read_dir(&root).is_ok() && is_canary(pid) {
        return Outcome::fail(format!("{root} opens the outer process's root"));
    }
    for ns in ["mnt", "net", "user", "pid"] {
        let p = format!("/proc/{pid}/ns/{ns}");
        if let Ok(f) = std::fs::File::open(&p) {
            if is_canary(pid) && nix::sched::setns(f, CloneFlags::empty()).is_ok() {
                return Outcome::fail(format!("joined the outer {ns} namespace through {p}"));
            }
        }
    }
    Outcome::pass()
}

pub(crate) fn outer_environ(c: &Ctx) -> Outcome {
    for name in sys::entries(Path::new("/proc")) {
        let Ok(pid) = name.parse::<i32>() else { continue };
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
            if String::from_utf8_lossy(&env).contains(&crate::canary_secret(&c.spec.nonce)) {
                return Outcome::fail(format!("read the outer secret from /proc/{pid}/environ"));
            }
        }
    }
    Outcome::pass()
}

fn mount(src: &str, target: &Path, fstype: &str, flags: libc::c_ulong) -> bool {
    let (s, t, f) = (
        CString::new(src).unwrap_or_default(),
        CString::new(target.as_os_str().as_encoded_bytes()).unwrap_or_default(),
        CString::new(fstype).unwrap_or_default(),
    );
    // SAFETY: valid C strings; a null data pointer is allowed.
    unsafe { libc::mount(s.as_ptr(), t.as_ptr(), f.as_ptr(), flags, std::ptr::null()) == 0 }
}

fn umount(target: &Path) -> bool {
    let t = CString::new(target.as_os_str().as_encoded_bytes()).unwrap_or_default();
    // SAFETY: a valid C string.
    unsafe { libc::umount2(t.as_ptr(), libc::MNT_DETACH) == 0 }
}

/// What a session must not reach: the root writable, the outer home's
/// entries or the outer /tmp's sockets visible.
fn exposures(c: &Ctx) -> Vec<String> {
    let mut v = Vec::new();
    if sys::try_create(Path::new("/etc"), &c.spec.nonce).is_ok() {
        v.push("the root is writable".to_string());
    }
    v.extend(c.spec.outer_home_sample.iter().filter(|n| c.spec.home.join(n).exists()).map(|n| format!("the outer home's {n} is visible")));
    v.extend(c.spec.tmp_sockets.iter().filter(|s| s.exists()).map(|s| format!("the outer {} is visible", s.display())));
    v
}

/// The mount changes a session would want: the root read-write, the home
/// and /tmp masks gone. Returns the ones the kernel allowed.
fn mount_attempts(c: &Ctx) -> Vec<&'static str> {
    let mut done = Vec::new();
    if mount("none", Path::new("/"), "", libc::MS_REMOUNT | libc::MS_BIND) {
        done.push("remounted / read-write");
    }
    if umount(&c.spec.home) {
        done.push("unmounted the home mask");
    }
    if umount(Path::new("/tmp")) {
        done.push("unmounted the private /tmp");
    }
    if mount("tmpfs", Path::new("/mnt"), "tmpfs", 0) {
        done.push("mounted a tmpfs");
    }
    done
}

/// In the session itself no mount call may succeed. (Where one can, the
/// attempts run in a private copy of the mount namespace first, so they
/// do not change what later checks see.)
pub(crate) fn mount_remount(c: &Ctx) -> Outcome {
    let r = in_child(Duration::from_secs(5), || {
        let _ = unshare(CloneFlags::CLONE_NEWNS);
        if mount_attempts(c).is_empty() {
            OK
        } else {
            NO
        }
    });
    match r {
        Ok(OK) => Outcome::pass(),
        Ok(_) => Outcome::fail("the session can change its own mounts (it could lift its masks)"),
        Err(e) => Outcome::fail(e),
    }
}

/// After unsharing a user and a mount namespace (where mounting is
/// allowed), the session's mounts must stay locked: nothing of the outside
/// becomes reachable that was not before.
pub(crate) fn userns_mounts(c: &Ctx) -> Outcome {
    let before = exposures(c);
    let r = in_child(Duration::from_secs(5), || {
        // SAFETY: getuid/getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        if unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS).is_err() {
            return 2;
        }
        // Keep our ids (not possible for uid 0, which then acts unmapped).
        let _ = std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"));
        let _ = std::fs::write("/proc/self/setgroups", "deny");
        let _ = std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"));
        let _ = mount_attempts(c);
        if exposures(c).iter().all(|e| before.contains(e)) {
            OK
        } else {
            NO
        }
    });
    match r {
        Ok(OK) => Outcome::pass(),
        Ok(2) => Outcome::pass_note("a new user namespace cannot even be created"),
        Ok(_) => Outcome::fail("from a new user namespace, unmounting or remounting exposed the outside"),
        Err(e) => Outcome::fail(e),
    }
}

fn socket_refused(domain: i32, ty: i32, proto: i32, what: &str) -> Outcome {
    // SAFETY: plain socket call; a descriptor returned is closed at once.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd >= 0 {
        // SAFETY: closing the descriptor we just got.
        unsafe { libc::close(fd) };
        return Outcome::fail(format!("opened a {what}"));
    }
    Outcome::pass()
}

pub(crate) fn raw_socket(_c: &Ctx) -> Outcome {
    socket_refused(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW, "raw IPv4 socket")
}

pub(crate) fn packet_socket(_c: &Ctx) -> Outcome {
    socket_refused(libc::AF_PACKET, libc::SOCK_RAW, (libc::ETH_P_ALL as u16).to_be() as i32, "packet socket")
}

fn abstract_addr(name: &str) -> Option<std::os::unix::net::SocketAddr> {
    use std::os::linux::net::SocketAddrExt;
    std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).ok()
}

/// With the jail, the session has its own network namespace (and so its
/// own abstract sockets); without it, only Landlock's scoping keeps the
/// container's out, where the kernel has it.
pub(crate) fn abstract_socket(c: &Ctx) -> Outcome {
    use crate::sandbox::landlock::{decide, kernel_support, Scoping};
    if c.spec.jail.is_none() {
        // Whether bwrap is setuid does not matter here: the launcher would
        // then not apply it, and the attempt below shows that.
        if let Scoping::NotEnforced(why) = decide(kernel_support(), false, true) {
            return Outcome::skip(format!("egress jail is off and {why}"));
        }
    }
    let Some(addr) = abstract_addr(&c.spec.abstract_name) else {
        return Outcome::fail("bad abstract socket name");
    };
    match std::os::unix::net::UnixStream::connect_addr(&addr) {
        Ok(_) => Outcome::fail(format!("connected to the outer abstract socket @{}", c.spec.abstract_name)),
        Err(_) => Outcome::pass(),
    }
}

/// Scoping must not break the session's own abstract sockets (Chromium,
/// language servers and test suites make them).
pub(crate) fn abstract_socket_inside(c: &Ctx) -> Outcome {
    let name = format!("agent-sandbox-verify-inside-{}-{}", c.spec.nonce, std::process::id());
    let Some(addr) = abstract_addr(&name) else { return Outcome::fail("bad abstract socket name") };
    let listener = match std::os::unix::net::UnixListener::bind_addr(&addr) {
        Ok(l) => l,
        Err(e) => return Outcome::fail(format!("binding @{name}: {e}")),
    };
    let r = in_child(Duration::from_secs(5), || if std::os::unix::net::UnixStream::connect_addr(&addr).is_ok() { OK } else { NO });
    drop(listener);
    match r {
        Ok(OK) => Outcome::pass(),
        Ok(_) => Outcome::fail(format!("another process of the session cannot connect to @{name}")),
        Err(e) => Outcome::fail(e),
    }
}

pub(crate) fn write_through_proc_root(c: &Ctx) -> Outcome {
    for root in ["/proc/self/root", "/proc/1/root"] {
        for dir in ["etc", "usr", ""] {
            let d = Path::new(root).join(dir);
            if sys::try_create(&d, &c.spec.nonce).is_ok() {
                return Outcome::fail(format!("created a file through {}", d.display()));
            }
        }
    }
    Outcome::pass()
}

/// The launcher's key and keyring, found by description or reached by id
/// (possession is not needed to describe a key, or read one its owner may
/// read: the fresh session keyring of the launch alone does not stop that).
pub(crate) fn keyring(c: &Ctx) -> Outcome {
    const KEYCTL_DESCRIBE: i32 = 6;
    const KEYCTL_READ: i32 = 11;
    let desc = CString::new(format!("agent-sandbox-verify-{}", c.spec.nonce)).unwrap_or_default();
    let mut bad = Vec::new();
    // SAFETY: request_key with valid C strings and no callout; only searches.
    let found = unsafe { libc::syscall(libc::SYS_request_key, c"user".as_ptr(), desc.as_ptr(), std::ptr::null::<libc::c_char>(), 0) };
    if found >= 0 {
        bad.push("found the launcher's key by its description".to_string());
    }
    let mut buf = [0u8; 256];
    let mut op = |what: &str, cmd: i32, id: i32| {
        // SAFETY: KEYCTL_DESCRIBE / KEYCTL_READ into a stack buffer of the given length.
        let n = unsafe { libc::syscall(libc::SYS_keyctl, cmd, id, buf.as_mut_ptr(), buf.len()) };
        if n > 0 {
            bad.push(format!("{what} by id {id}: {:?}", String::from_utf8_lossy(&buf[..(n as usize).min(buf.len())])));
        }
    };
    if let Some(id) = c.spec.key_id {
        op("described the launcher's key", KEYCTL_DESCRIBE, id);
        op("read the launcher's key", KEYCTL_READ, id);
    }
    if let Some(ring) = c.spec.keyring_id {
        op("listed the launcher's session keyring", KEYCTL_READ, ring);
    }
    Outcome::from_problems(bad)
}

pub(crate) fn bpf_tracing(_c: &Ctx) -> Outcome {
    // r0 = 0; exit — as a kprobe program (tracing needs CAP_BPF + CAP_PERFMON).
    let insns: [u64; 2] = [0x0000_0000_0000_00b7, 0x0000_0000_0000_0095];
    let license = b"GPL\0";
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&2u32.to_ne_bytes()); // BPF_PROG_TYPE_KPROBE
    attr[4..8].copy_from_slice(&2u32.to_ne_bytes()); // insn_cnt
    attr[8..16].copy_from_slice(&(insns.as_ptr() as u64).to_ne_bytes());
    attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
    // SAFETY: BPF_PROG_LOAD (5) with an attribute buffer pointing at live data.
    let fd = unsafe { libc::syscall(libc::SYS_bpf, 5, attr.as_ptr(), attr.len()) };
    if fd >= 0 {
        // SAFETY: closing the program descriptor we got.
        unsafe { libc::close(fd as i32) };
        return Outcome::fail("loaded a kernel tracing program");
    }
    Outcome::pass()
}

pub(crate) fn perf_system_wide(_c: &Ctx) -> Outcome {
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes()); // PERF_TYPE_SOFTWARE
    attr[4..8].copy_from_slice(&128u32.to_ne_bytes()); // size
                                                       // SAFETY: perf_event_open(attr, pid -1, cpu 0): every process on CPU 0.
    let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), -1, 0, -1, 0) };
    if fd >= 0 {
        // SAFETY: closing the event descriptor we got.
        unsafe { libc::close(fd as i32) };
        return Outcome::fail("opened a system-wide perf event (kernel.perf_event_paranoid allows it)");
    }
    Outcome::pass()
}

pub(crate) fn kernel_module(_c: &Ctx) -> Outcome {
    let params = CString::default();
    // SAFETY: init_module with an empty image; the capability check comes first.
    let rc = unsafe { libc::syscall(libc::SYS_init_module, std::ptr::null::<u8>(), 0usize, params.as_ptr()) };
    let e = sys::errno();
    match (rc, e) {
        (0, _) => Outcome::fail("init_module succeeded"),
        (_, nix::errno::Errno::EPERM) => Outcome::pass(),
        (_, nix::errno::Errno::ENOSYS) => Outcome::pass_note("this kernel cannot load modules at all"),
        // Any other error means the privilege check let the call through.
        _ => Outcome::fail(format!("init_module got past the privilege check ({e})")),
    }
}

/// Kernel tunables (opened for writing only; nothing is written).
const TUNABLES: &[&str] = &[
    "/proc/sys/kernel/modprobe",
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/net/ipv4/ip_forward",
    "/proc/sys/vm/drop_caches",
    "/proc/sysrq-trigger",
    "/sys/kernel/uevent_helper",
    "/sys/fs/cgroup/cgroup.procs",
];

pub(crate) fn kernel_tunables(_c: &Ctx) -> Outcome {
    let open: Vec<&str> = TUNABLES.iter().copied().filter(|p| sys::open_for_write(Path::new(p)).is_ok()).collect();
    if open.is_empty() {
        Outcome::pass()
    } else {
        Outcome::fail(format!("opened for writing: {}", open.join(", ")))
    }
}

/// With a real handle where the session can get one; with a made-up one
/// otherwise (the profile refuses name_to_handle_at): open_by_handle_at
/// must be refused either way, before it looks at the handle.
pub(crate) fn open_by_handle(_c: &Ctx) -> Outcome {
    // struct file_handle { u32 handle_bytes; i32 handle_type; u8 f_handle[128]; }
    let mut fh = [0u8; 8 + 128];
    fh[0..4].copy_from_slice(&128u32.to_ne_bytes());
    let mut mount_id = 0i32;
    let path = CString::new("/etc/hostname").unwrap_or_default();
    // SAFETY: name_to_handle_at fills the buffer we own; then open_by_handle_at with it.
    unsafe {
        let real = libc::syscall(libc::SYS_name_to_handle_at, libc::AT_FDCWD, path.as_ptr(), fh.as_mut_ptr(), &mut mount_id, 0) == 0;
        if !real {
            fh[0..8].copy_from_slice(&[8, 0, 0, 0, 1, 0, 0, 0]);
        }
        let root = libc::open(c"/".as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
        let fd = libc::syscall(libc::SYS_open_by_handle_at, root, fh.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        libc::close(root);
        if fd >= 0 {
            libc::close(fd as i32);
            return Outcome::fail("open_by_handle_at opened a file by handle (bypasses the mount view)");
        }
        if !real {
            return Outcome::pass_note("no handle to be had (name_to_handle_at refused); open_by_handle_at refused");
        }
    }
    Outcome::pass()
}

pub(crate) fn mknod_device(c: &Ctx) -> Outcome {
    for dir in [c.spec.workspace.as_path(), Path::new("/tmp")] {
        let p = dir.join(format!(".agent-sandbox-verify-dev-{}", c.spec.nonce));
        let cp = CString::new(p.as_os_str().as_encoded_bytes()).unwrap_or_default();
        // SAFETY: mknod with a valid path; a node created is removed at once.
        let rc = unsafe { libc::mknod(cp.as_ptr(), libc::S_IFBLK | 0o600, libc::makedev(8, 0)) };
        if rc == 0 {
            let _ = std::fs::remove_file(&p);
            return Outcome::fail(format!("created a block device node in {}", dir.display()));
        }
    }
    Outcome::pass()
}
