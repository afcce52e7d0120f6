//! Attempts to send past the egress jail the way a hostile agent would:
//! every way a socket can name its outgoing interface (and so skip the
//! route lookup's blackholes), plus the plain routed send. `verify` runs
//! them inside a session against the blocked ranges; the jail's lab tests
//! run the same attempts against real listeners. Each attempt says what the
//! local stack did with the packet; nothing here judges.

use nix::errno::Errno;
use std::net::SocketAddrV4;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// How the socket picks its interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// No interface named: the route lookup decides.
    Routed,
    /// `SO_BINDTODEVICE` with the interface's name.
    BindToDevice,
    /// `SO_BINDTOIFINDEX` with its index.
    BindToIfindex,
    /// `IP_UNICAST_IF` with its index.
    UnicastIf,
    /// An `IP_PKTINFO` control message naming the index on each send
    /// (datagrams only).
    PktInfo,
    /// `SO_DONTROUTE` / `MSG_DONTROUTE`: "the destination is on-link".
    DontRoute,
    /// `IP_MULTICAST_IF` (multicast destinations).
    MulticastIf,
}

impl Method {
    /// Every method that names an interface.
    pub const NAMING: &'static [Method] =
        &[Method::BindToDevice, Method::BindToIfindex, Method::UnicastIf, Method::PktInfo, Method::DontRoute, Method::MulticastIf];

    pub fn name(self) -> &'static str {
        match self {
            Method::Routed => "routed",
            Method::BindToDevice => "SO_BINDTODEVICE",
            Method::BindToIfindex => "SO_BINDTOIFINDEX",
            Method::UnicastIf => "IP_UNICAST_IF",
            Method::PktInfo => "IP_PKTINFO",
            Method::DontRoute => "MSG_DONTROUTE",
            Method::MulticastIf => "IP_MULTICAST_IF",
        }
    }
}

/// What the local stack did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// The send or connect failed at once with this error.
    Refused(Errno),
    /// A datagram was handed to the interface (it left the session).
    Sent,
    Connected,
    /// A connection neither succeeded nor failed in time.
    Pending,
}

// Linux socket options the libc crate may not name on every target.
const SO_BINDTOIFINDEX: libc::c_int = 62;
const IP_UNICAST_IF: libc::c_int = 50;

fn check(rc: libc::c_int) -> Result<(), Errno> {
    if rc < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

fn socket(kind: libc::c_int) -> Result<OwnedFd, Errno> {
    // SAFETY: plain socket(2); the result is checked and owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, 0) };
    check(fd)?;
    // SAFETY: a new descriptor owned only here.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn setsockopt<T>(fd: &OwnedFd, level: libc::c_int, name: libc::c_int, value: &T) -> Result<(), Errno> {
    // SAFETY: `value` points to a live T of the size passed.
    check(unsafe { libc::setsockopt(fd.as_raw_fd(), level, name, (value as *const T).cast(), std::mem::size_of::<T>() as libc::socklen_t) })
}

fn ifindex(ifname: &str) -> Result<libc::c_int, Errno> {
    let c = std::ffi::CString::new(ifname).map_err(|_| Errno::EINVAL)?;
    // SAFETY: `c` is a valid NUL-terminated name.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        Err(Errno::last())
    } else {
        Ok(i as libc::c_int)
    }
}

/// Applies the socket-level part of `method` (PktInfo and DontRoute on
/// datagrams act per send instead).
fn name_interface(fd: &OwnedFd, method: Method, ifname: &str, stream: bool) -> Result<(), Errno> {
    match method {
        Method::Routed | Method::PktInfo => Ok(()),
        Method::BindToDevice => {
            let name = std::ffi::CString::new(ifname).map_err(|_| Errno::EINVAL)?;
            let bytes = name.as_bytes_with_nul();
            // SAFETY: the name's bytes (with the NUL) are live for the call.
            check(unsafe { libc::setsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_BINDTODEVICE, bytes.as_ptr().cast(), bytes.len() as libc::socklen_t) })
        }
        Method::BindToIfindex => setsockopt(fd, libc::SOL_SOCKET, SO_BINDTOIFINDEX, &ifindex(ifname)?),
        Method::UnicastIf => setsockopt(fd, libc::IPPROTO_IP, IP_UNICAST_IF, &(ifindex(ifname)? as u32).to_be()),
        Method::DontRoute if stream => setsockopt(fd, libc::SOL_SOCKET, libc::SO_DONTROUTE, &1 as &libc::c_int),
        Method::DontRoute => Ok(()),
        Method::MulticastIf => {
            let req = libc::ip_mreqn { imr_multiaddr: libc::in_addr { s_addr: 0 }, imr_address: libc::in_addr { s_addr: 0 }, imr_ifindex: ifindex(ifname)? };
            setsockopt(fd, libc::IPPROTO_IP, libc::IP_MULTICAST_IF, &req)
        }
    }
}

fn sockaddr(dst: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: dst.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*dst.ip()).to_be() },
        sin_zero: [0; 8],
    }
}

/// One datagram to `dst` through interface `ifname` by `method` (the
/// socket may broadcast, so a broadcast address is tested by the jail, not
/// refused for want of SO_BROADCAST).
pub fn udp(method: Method, ifname: &str, dst: SocketAddrV4, payload: &[u8]) -> Attempt {
    match send_udp(method, ifname, dst, payload) {
        Ok(()) => Attempt::Sent,
        Err(e) => Attempt::Refused(e),
    }
}

fn send_udp(method: Method, ifname: &str, dst: SocketAddrV4, payload: &[u8]) -> Result<(), Errno> {
    let fd = socket(libc::SOCK_DGRAM)?;
    setsockopt(&fd, libc::SOL_SOCKET, libc::SO_BROADCAST, &1 as &libc::c_int)?;
    name_interface(&fd, method, ifname, false)?;
    let mut addr = sockaddr(dst);
    let mut iov = libc::iovec { iov_base: payload.as_ptr() as *mut libc::c_void, iov_len: payload.len() };
    // Room for one in_pktinfo control message.
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is valid; the fields set below point to
    // live locals for the duration of sendmsg.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = (&mut addr as *mut libc::sockaddr_in).cast();
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if method == Method::PktInfo {
        let info = libc::in_pktinfo { ipi_ifindex: ifindex(ifname)?, ipi_spec_dst: libc::in_addr { s_addr: 0 }, ipi_addr: libc::in_addr { s_addr: 0 } };
        // SAFETY: CMSG_SPACE/LEN only compute sizes.
        let (space, len) =
            unsafe { (libc::CMSG_SPACE(std::mem::size_of::<libc::in_pktinfo>() as u32), libc::CMSG_LEN(std::mem::size_of::<libc::in_pktinfo>() as u32)) };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        // SAFETY: the control buffer is aligned and large enough for one
        // in_pktinfo message (CMSG_SPACE above); CMSG_FIRSTHDR points into it.
        unsafe {
            let cmsg = libc::CMSG_FIRSTHDR(&msg);
            (*cmsg).cmsg_level = libc::IPPROTO_IP;
            (*cmsg).cmsg_type = libc::IP_PKTINFO;
            (*cmsg).cmsg_len = len as _;
            std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<libc::in_pktinfo>(), info);
        }
    }
    let flags = if method == Method::DontRoute { libc::MSG_DONTROUTE } else { 0 };
    // SAFETY: `msg` describes live buffers (see above).
    let n = unsafe { libc::sendmsg(fd.as_raw_fd(), &msg, flags) };
    check(n as libc::c_int)
}

/// A TCP connection to `dst` through `ifname` by `method`, waiting at
/// most `wait` (`PktInfo` has no stream form and is tried as `Routed`).
pub fn tcp(method: Method, ifname: &str, dst: SocketAddrV4, wait: Duration) -> Attempt {
    let fd = match socket(libc::SOCK_STREAM | libc::SOCK_NONBLOCK) {
        Ok(fd) => fd,
        Err(e) => return Attempt::Refused(e),
    };
    if let Err(e) = name_interface(&fd, method, ifname, true) {
        return Attempt::Refused(e);
    }
    let addr = sockaddr(dst);
    // SAFETY: `addr` is a valid sockaddr_in of the size passed.
    let rc = unsafe { libc::connect(fd.as_raw_fd(), (&addr as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t) };
    if rc == 0 {
        return Attempt::Connected;
    }
    match Errno::last() {
        Errno::EINPROGRESS => await_connect(&fd, wait),
        e => Attempt::Refused(e),
    }
}

fn await_connect(fd: &OwnedFd, wait: Duration) -> Attempt {
    let deadline = Instant::now() + wait;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut p = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if n == 0 {
            return Attempt::Pending;
        }
        if n < 0 && Errno::last() == Errno::EINTR {
            continue;
        }
        let mut err: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: SO_ERROR into a live c_int of the size passed.
        unsafe { libc::getsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_ERROR, (&mut err as *mut libc::c_int).cast(), &mut len) };
        return if err == 0 { Attempt::Connected } else { Attempt::Refused(Errno::from_raw(err)) };
    }
}
