//! System-call helpers the checks share: run a step in a forked child with
//! a deadline, try to create a file, connect with a timeout, add a route
//! over raw netlink, read /proc status fields. Thin and side-effect-free
//! beyond what each says (anything created is removed at once).

use nix::errno::Errno;
use std::ffi::CString;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Exit codes a child step reports with (`in_child`).
pub const OK: i32 = 0;
pub const NO: i32 = 1;

/// Runs `f` in a forked child and returns its exit code; a child that
/// outlives `timeout` is killed. The probe is single-threaded, so the child
/// may run arbitrary code.
pub fn in_child(timeout: Duration, f: impl FnOnce() -> i32) -> Result<i32, String> {
    // SAFETY: the probe has one thread.
    let child = unsafe { crate::child::run(f) }.map_err(|e| format!("fork: {e}"))?;
    crate::child::wait_deadline(child, timeout)
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

/// The errno of the last failed libc call.
pub fn errno() -> Errno {
    Errno::last()
}

/// Opens `p` with `flags` (close-on-exec added).
pub fn open(p: &Path, flags: i32, mode: u32) -> Result<OwnedFd, Errno> {
    let c = cpath(p);
    // SAFETY: `c` is a valid NUL-terminated path; the result is checked.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `fd` was just returned by open and is owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Tries to create a new file in `dir`; removes it when that worked.
/// Ok(()) means the directory is writable from here.
pub fn try_create(dir: &Path, nonce: &str) -> Result<(), Errno> {
    let p = dir.join(format!(".agent-sandbox-verify-{nonce}-{}", std::process::id()));
    let fd = open(&p, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o600)?;
    drop(fd);
    let _ = std::fs::remove_file(&p);
    Ok(())
}

/// Whether `p` can be opened for writing (nothing is written or truncated).
pub fn open_for_write(p: &Path) -> Result<(), Errno> {
    open(p, libc::O_WRONLY | libc::O_NOCTTY | libc::O_NONBLOCK, 0).map(drop)
}

/// What a connection attempt came to.
#[derive(Debug)]
pub enum Reach {
    /// Refused by the local stack before any packet left (a blackhole or
    /// unreachable route, no route, no address family).
    Blocked,
    /// Failed later (a reset or an ICMP answer: packets did leave).
    Failed(Errno),
    Connected(OwnedFd),
    TimedOut,
}

/// A TCP connection to `addr`, waiting at most `timeout`.
pub fn tcp_connect(addr: SocketAddr, timeout: Duration) -> Reach {
    use nix::sys::socket::{socket, AddressFamily, SockFlag, SockType, SockaddrIn, SockaddrIn6};
    let family = if addr.is_ipv4() { AddressFamily::Inet } else { AddressFamily::Inet6 };
    let flags = SockFlag::SOCK_NONBLOCK | SockFlag::SOCK_CLOEXEC;
    let fd = match socket(family, SockType::Stream, flags, None) {
        Ok(fd) => fd,
        Err(_) => return Reach::Blocked,
    };
    let started = Instant::now();
    let r = match addr {
        SocketAddr::V4(a) => nix::sys::socket::connect(fd.as_raw_fd(), &SockaddrIn::from(a)),
        SocketAddr::V6(a) => nix::sys::socket::connect(fd.as_raw_fd(), &SockaddrIn6::from(a)),
    };
    match r {
        Ok(()) => return Reach::Connected(fd),
        Err(Errno::EINPROGRESS) => {}
        Err(_) => return Reach::Blocked,
    }
    if !poll_one(fd.as_raw_fd(), libc::POLLOUT, timeout) {
        return Reach::TimedOut;
    }
    match nix::sys::socket::getsockopt(&fd, nix::sys::socket::sockopt::SocketError) {
        Ok(0) => Reach::Connected(fd),
        Ok(e) if started.elapsed() < Duration::from_millis(50) && is_route_error(Errno::from_raw(e)) => Reach::Blocked,
        Ok(e) => Reach::Failed(Errno::from_raw(e)),
        Err(e) => Reach::Failed(e),
    }
}

/// Errors the kernel gives for a destination it will not route.
pub fn is_route_error(e: Errno) -> bool {
    matches!(e, Errno::EINVAL | Errno::ENETUNREACH | Errno::EHOSTUNREACH | Errno::EACCES | Errno::EPERM | Errno::EAFNOSUPPORT)
}

/// Waits until `fd` is ready for `events`; false on timeout.
pub fn poll_one(fd: RawFd, events: i16, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut pfd = libc::pollfd { fd, events, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if n > 0 {
            return true;
        }
        if n == 0 || errno() != Errno::EINTR {
            return false;
        }
    }
}

/// Reads what arrives on `fd` within `timeout` (at most 256 bytes).
pub fn read_some(fd: &OwnedFd, timeout: Duration) -> Vec<u8> {
    let mut out = Vec::new();
    let deadline = Instant::now() + timeout;
    while out.len() < 256 && poll_one(fd.as_raw_fd(), libc::POLLIN, deadline.saturating_duration_since(Instant::now())) {
        let mut buf = [0u8; 256];
        // SAFETY: reading into a stack buffer of the given length.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
    out
}

/// One read of what arrives on `fd` within `timeout` (one datagram, or
/// whatever a stream has ready).
pub fn read_once(fd: &OwnedFd, timeout: Duration) -> Vec<u8> {
    if !poll_one(fd.as_raw_fd(), libc::POLLIN, timeout) {
        return Vec::new();
    }
    let mut buf = [0u8; 4096];
    // SAFETY: reading into a stack buffer of the given length.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    buf[..n.max(0) as usize].to_vec()
}

/// Adds (then, if that worked, deletes) an unreachable route to `dst`/32
/// in the main table of the current network namespace, over raw netlink.
/// Err is the kernel's refusal.
pub fn route_add(dst: Ipv4Addr) -> Result<(), Errno> {
    let fd = netlink_route()?;
    route_msg(&fd, libc::RTM_NEWROUTE, dst)?;
    let _ = route_msg(&fd, libc::RTM_DELROUTE, dst);
    Ok(())
}

fn netlink_route() -> Result<OwnedFd, Errno> {
    // SAFETY: plain socket call; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `fd` is a new descriptor owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// One RTM_NEWROUTE/RTM_DELROUTE request with an ack; the ack's error.
fn route_msg(fd: &OwnedFd, kind: u16, dst: Ipv4Addr) -> Result<(), Errno> {
    let mut m: Vec<u8> = Vec::with_capacity(36);
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_ACK) as u16 | if kind == libc::RTM_NEWROUTE { (libc::NLM_F_CREATE | libc::NLM_F_EXCL) as u16 } else { 0 };
    m.extend_from_slice(&36u32.to_ne_bytes()); // nlmsg_len
    m.extend_from_slice(&kind.to_ne_bytes());
    m.extend_from_slice(&flags.to_ne_bytes());
    m.extend_from_slice(&1u32.to_ne_bytes()); // seq
    m.extend_from_slice(&0u32.to_ne_bytes()); // pid
                                              // struct rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags
    m.extend_from_slice(&[libc::AF_INET as u8, 32, 0, 0, libc::RT_TABLE_MAIN, libc::RTPROT_BOOT, libc::RT_SCOPE_UNIVERSE, libc::RTN_UNREACHABLE]);
    m.extend_from_slice(&0u32.to_ne_bytes());
    m.extend_from_slice(&8u16.to_ne_bytes()); // rta_len
    m.extend_from_slice(&libc::RTA_DST.to_ne_bytes());
    m.extend_from_slice(&dst.octets());
    // SAFETY: sockaddr_nl is plain data; zeroed is a valid value (kernel as peer).
    let mut sa: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    sa.nl_family = libc::AF_NETLINK as u16;
    // SAFETY: the buffer and address are valid for the given lengths.
    let n = unsafe {
        libc::sendto(fd.as_raw_fd(), m.as_ptr().cast(), m.len(), 0, (&sa as *const libc::sockaddr_nl).cast(), std::mem::size_of::<libc::sockaddr_nl>() as u32)
    };
    if n < 0 {
        return Err(errno());
    }
    let reply = read_once(fd, Duration::from_secs(2));
    // nlmsghdr (16 bytes) then struct nlmsgerr { int error; ... }.
    if reply.len() < 20 || u16::from_ne_bytes([reply[4], reply[5]]) != libc::NLMSG_ERROR as u16 {
        return Err(Errno::EPROTO);
    }
    let err = i32::from_ne_bytes([reply[16], reply[17], reply[18], reply[19]]);
    if err == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw(-err))
    }
}

/// A `Key:\tvalue` field of /proc/PID/status ("self" when `pid` is None).
pub fn status_field(pid: Option<i32>, key: &str) -> Option<String> {
    let p = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".into(),
    };
    let text = std::fs::read_to_string(p).ok()?;
    text.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')).map(|v| v.trim().to_string()))
}

/// The inode of a namespace link (`/proc/PID/ns/NAME`).
pub fn ns_inode(pid: &str, name: &str) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}/ns/{name}")).ok().map(|m| m.ino())
}

/// `pid:<inode> mnt:<inode> user:<inode>` of this process.
pub fn ns_line() -> String {
    ["pid", "mnt", "user"].iter().map(|ns| format!("{ns}:{}", ns_inode("self", ns).unwrap_or(0))).collect::<Vec<_>>().join(" ")
}

/// Whether a directory exists and has no entries.
pub fn dir_is_empty(p: &Path) -> Result<bool, std::io::Error> {
    Ok(std::fs::read_dir(p)?.next().is_none())
}

/// Names of a directory's entries, sorted.
pub fn entries(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p).map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// A process's command line with NULs as spaces (empty when unreadable).
pub fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline")).map(|b| String::from_utf8_lossy(&b).replace('\0', " ")).unwrap_or_default()
}

/// The number the session's /proc gives the process that has `pid` in the
/// session's pid namespace: the same number where /proc is the session's
/// own, another where it is the container's (a masked /proc; processes
/// are then listed by the container's numbers). None when no process has
/// `pid` here.
pub fn proc_number(pid: i32) -> Option<i32> {
    // SAFETY: pidfd_open with integer arguments; a descriptor returned is
    // owned below.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return None;
    }
    // SAFETY: just returned by pidfd_open, owned only here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
    // A pidfd's `Pid:` is its number in the pid namespace of the /proc it
    // is read through (0: not a process of that namespace).
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", fd.as_raw_fd())).ok()?;
    info.lines().find_map(|l| l.strip_prefix("Pid:")).and_then(|v| v.trim().parse().ok()).filter(|n: &i32| *n > 0)
}
