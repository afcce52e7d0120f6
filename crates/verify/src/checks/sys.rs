//! System-call helpers the checks share: run a step in a forked child with
//! a deadline, try to create a file, connect with a timeout, add a route
//! over rtnetlink, read /proc status fields. Thin and side-effect-free
//! beyond what each says (anything created is removed at once).

use nix::errno::Errno;
use std::ffi::CString;
use std::net::{Ipv4Addr, SocketAddr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// Exit codes a child step reports with (`in_child`).
pub(crate) const OK: i32 = 0;
pub(crate) const NO: i32 = 1;

/// Runs `f` in a forked child and returns its exit code; a child that
/// outlives `timeout` is killed. The probe is single-threaded, so the child
/// may run arbitrary code.
pub(crate) fn in_child(timeout: Duration, f: impl FnOnce() -> i32) -> Result<i32, String> {
    // SAFETY: the probe has one thread.
    let child = unsafe { crate::child::run(f) }.map_err(|e| format!("fork: {e}"))?;
    crate::child::wait_deadline(child, timeout)
}

fn cpath(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

/// The errno of the last failed libc call.
pub(crate) fn errno() -> Errno {
    Errno::last()
}

/// Opens `p` with `flags` (close-on-exec added).
pub(crate) fn open(p: &Path, flags: i32, mode: u32) -> Result<OwnedFd, Errno> {
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
pub(crate) fn try_create(dir: &Path, nonce: &str) -> Result<(), Errno> {
    let p = dir.join(format!(".agent-sandbox-verify-{nonce}-{}", std::process::id()));
    let fd = open(&p, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, 0o600)?;
    drop(fd);
    let _ = std::fs::remove_file(&p);
    Ok(())
}

/// Whether `p` can be opened for writing (nothing is written or truncated).
pub(crate) fn open_for_write(p: &Path) -> Result<(), Errno> {
    open(p, libc::O_WRONLY | libc::O_NOCTTY | libc::O_NONBLOCK, 0).map(drop)
}

/// What a connection attempt came to.
#[derive(Debug)]
pub(crate) enum Reach {
    /// Refused by the local stack before any packet left (a blackhole or
    /// unreachable route, no route, no address family).
    Blocked,
    /// Failed later (a reset or an ICMP answer: packets did leave).
    Failed(Errno),
    Connected(OwnedFd),
    TimedOut,
}

/// A TCP connection to `addr`, waiting at most `timeout`.
pub(crate) fn tcp_connect(addr: SocketAddr, timeout: Duration) -> Reach {
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
fn is_route_error(e: Errno) -> bool {
    matches!(e, Errno::EINVAL | Errno::ENETUNREACH | Errno::EHOSTUNREACH | Errno::EACCES | Errno::EPERM | Errno::EAFNOSUPPORT)
}

/// Waits until `fd` is ready for `events`; false on timeout.
pub(crate) fn poll_one(fd: RawFd, events: i16, timeout: Duration) -> bool {
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
pub(crate) fn read_some(fd: &OwnedFd, timeout: Duration) -> Vec<u8> {
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
pub(crate) fn read_once(fd: &OwnedFd, timeout: Duration) -> Vec<u8> {
    if !poll_one(fd.as_raw_fd(), libc::POLLIN, timeout) {
        return Vec::new();
    }
    let mut buf = [0u8; 4096];
    // SAFETY: reading into a stack buffer of the given length.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    buf[..n.max(0) as usize].to_vec()
}

/// Adds (then, if that worked, deletes) an unreachable route to `dst`/32
/// in the main table of the current network namespace, over rtnetlink (the
/// launcher's own blocking client, `jail::run::rtnl`). Err is the
/// kernel's refusal (EPROTO where no errno came back).
pub(crate) fn route_add(dst: Ipv4Addr) -> Result<(), Errno> {
    use crate::jail::run::rtnl::Rtnl;
    use netlink_packet_core::{NLM_F_CREATE, NLM_F_EXCL};
    let errno = |e: std::io::Error| e.raw_os_error().map_or(Errno::EPROTO, Errno::from_raw);
    let mut nl = Rtnl::open().map_err(errno)?;
    nl.request_with(unreachable_route(dst, true), NLM_F_CREATE | NLM_F_EXCL).map_err(errno)?;
    let _ = nl.request(unreachable_route(dst, false));
    Ok(())
}

/// An RTM_NEWROUTE (`add`) or RTM_DELROUTE request for an unreachable
/// route to `dst`/32 in the main table.
fn unreachable_route(dst: Ipv4Addr, add: bool) -> netlink_packet_route::RouteNetlinkMessage {
    use netlink_packet_route::route::{RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteProtocol, RouteScope, RouteType};
    use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
    let mut m = RouteMessage::default();
    m.header.address_family = AddressFamily::Inet;
    m.header.destination_prefix_length = 32;
    m.header.table = RouteHeader::RT_TABLE_MAIN;
    m.header.protocol = RouteProtocol::Boot;
    m.header.scope = RouteScope::Universe;
    m.header.kind = RouteType::Unreachable;
    m.attributes.push(RouteAttribute::Destination(RouteAddress::Inet(dst)));
    if add {
        RouteNetlinkMessage::NewRoute(m)
    } else {
        RouteNetlinkMessage::DelRoute(m)
    }
}

/// A `Key:\tvalue` field of /proc/PID/status ("self" when `pid` is None).
pub(crate) fn status_field(pid: Option<i32>, key: &str) -> Option<String> {
    let p = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".into(),
    };
    let text = std::fs::read_to_string(p).ok()?;
    text.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')).map(|v| v.trim().to_string()))
}

/// The inode of a namespace link (`/proc/PID/ns/NAME`).
pub(crate) fn ns_inode(pid: &str, name: &str) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/{pid}/ns/{name}")).ok().map(|m| m.ino())
}

/// `pid:<inode> mnt:<inode> user:<inode>` of this process.
pub(crate) fn ns_line() -> String {
    ["pid", "mnt", "user"].iter().map(|ns| format!("{ns}:{}", ns_inode("self", ns).unwrap_or(0))).collect::<Vec<_>>().join(" ")
}

/// Whether a directory exists and has no entries.
pub(crate) fn dir_is_empty(p: &Path) -> Result<bool, std::io::Error> {
    Ok(std::fs::read_dir(p)?.next().is_none())
}

/// Names of a directory's entries, sorted.
pub(crate) fn entries(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p).map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect()).unwrap_or_default();
    v.sort();
    v
}

/// A process's command line with NULs as spaces (empty when unreadable).
pub(crate) fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline")).map(|b| String::from_utf8_lossy(&b).replace('\0', " ")).unwrap_or_default()
}

/// The number the session's /proc gives the process that has `pid` in the
/// session's pid namespace: the same number where /proc is the session's
/// own, another where it is the container's (a masked /proc; processes
/// are then listed by the container's numbers). None when no process has
/// `pid` here.
pub(crate) fn proc_number(pid: i32) -> Option<i32> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sched::CloneFlags;

    /// The real kernel, both outcomes of checks 41 and 42's attempt: in a
    /// network namespace a new user namespace owns, the route goes in (and
    /// out again); from a new user namespace over the test's own network
    /// namespace, which it does not own, it is refused with EPERM.
    #[test]
    fn a_route_goes_in_only_where_the_network_namespace_is_owned() {
        let attempt = |flags: CloneFlags| {
            in_child(Duration::from_secs(10), move || {
                if nix::sched::unshare(flags).is_err() {
                    return 10;
                }
                match route_add(Ipv4Addr::new(203, 0, 113, 201)) {
                    Ok(()) => 0,
                    Err(Errno::EPERM) => 1,
                    Err(e) => 20 + e as i32,
                }
            })
        };
        assert_eq!(attempt(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNET), Ok(0));
        assert_eq!(attempt(CloneFlags::CLONE_NEWUSER), Ok(1));
    }
}
