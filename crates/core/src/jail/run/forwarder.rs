//! The jail's own DNS forwarder (allowDomains only): a child of the
//! launcher that joins the jail's user and network namespaces as the
//! locker does, and answers the session's resolver on 127.0.0.53:53, UDP
//! and TCP. A name not in allowDomains is refused at once (NXDOMAIN with
//! an extended error saying why); an allowed one is asked of the
//! container's resolver, and the IPv4 addresses of its answer (along the
//! CNAME chain) go into the filter's `allowed` set, each for its TTL plus
//! a grace, BEFORE the answer goes back: the session can connect as soon
//! as it learns an address.
//!
//! Its questions leave from the container's network, not the jail's:
//! before joining the jail it forks the dialer, which stays behind and
//! hands it fresh UDP and TCP sockets made there (SCM_RIGHTS, as the
//! relay's factory does the other way round), one per question, so each
//! has a source port of its own as well as a random id (an answer forged
//! from outside must guess both). The session itself cannot reach any
//! resolver: the filter refuses pasta's forwarder with the allowlist on.
//!
//! Order in the child: die with the launcher; close what it inherited;
//! fork the dialer; join the namespaces; wait for `Step::Lock` (the jail
//! is locked and its loopback up); bind its listeners; open its nf_tables
//! socket; not dumpable, no capability left but CAP_NET_ADMIN (which the
//! kernel asks of it, not only of its nf_tables socket, for each update
//! of the set); report `Ready`; then serve (`serve.rs`)
//! on a current-thread runtime made only now, until the launcher asks for
//! its report (`Step::Report`).
//!
//! Bounded whatever the session sends: questions waiting for an answer,
//! TCP connections, the refused names it counts, the allowed set's size.

mod serve;

use super::fdpass::{recv_fd, send_fd};
use super::holder::{self, Helper, Report, Step};
use super::join::{self, Namespaces};
use super::lockdown::Failure;
use super::nft;
use super::sys::{die_with_parent, fork_child};
use crate::jail::error::JailError;
use crate::jail::plan::allowlist::Allowlist;
use crate::jail::plan::launch::{JailPlan, DNS_LISTEN};
use nix::sys::socket::{socketpair, AddressFamily, MsgFlags, SockFlag, SockType};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

const DNS_PORT: u16 = 53;
/// Dialer requests: a fresh UDP or TCP socket of the container's network.
const UDP: u8 = b'U';
const TCP: u8 = b'T';

/// What the forwarder needs from the plan.
pub(crate) struct Spec {
    pub allowlist: Allowlist,
    /// The container's resolver.
    pub resolver: Ipv4Addr,
    pub grace: Duration,
}

impl Spec {
    pub(crate) fn of(plan: &JailPlan) -> Option<Spec> {
        Some(Spec { allowlist: plan.allowlist.clone()?, resolver: plan.resolver?, grace: plan.dns_grace })
    }
}

/// What the forwarder serves with.
pub(crate) struct Sockets {
    pub udp: std::net::UdpSocket,
    pub tcp: std::net::TcpListener,
    pub nft: nft::Socket,
    pub dialer: Dialer,
}

/// The forwarder's end of the dialer's channel.
pub(crate) struct Dialer(OwnedFd);

impl Dialer {
    /// A fresh socket of `kind` (`UDP`, `TCP`) in the container's network.
    fn socket(&self, kind: u8) -> std::io::Result<OwnedFd> {
        nix::sys::socket::send(self.0.as_raw_fd(), &[kind], MsgFlags::empty())?;
        match recv_fd(self.0.as_raw_fd())? {
            Some((_, Some(fd))) => Ok(fd),
            _ => Err(std::io::Error::other("the dialer is gone")),
        }
    }

    pub(crate) fn udp(&self) -> std::io::Result<std::net::UdpSocket> {
        self.socket(UDP).map(std::net::UdpSocket::from)
    }

    pub(crate) fn tcp(&self) -> std::io::Result<OwnedFd> {
        self.socket(TCP)
    }
}

/// Forks the forwarder; it reports `Ready` once it listens, after
/// `Step::Lock`.
pub(crate) fn spawn(ns: &Namespaces, spec: Spec) -> Result<Helper, JailError> {
    let parent = nix::unistd::getpid();
    holder::spawn_reporting("forking the jail's DNS forwarder", |chan| {
        let keep = [chan.as_raw_fd(), ns.user.as_raw_fd(), ns.net.as_raw_fd()];
        if die_with_parent(parent).is_err() || !isolate(&keep) {
            return 1;
        }
        let dialer = match dialer() {
            Ok(d) => d,
            Err(f) => return holder::fail(chan, f),
        };
        if let Err(f) = join::join(ns) {
            return holder::fail(chan, f);
        }
        if !holder::await_step(chan, Step::Lock) {
            return 1;
        }
        let socks = match sockets(dialer).and_then(|s| harden().map(|()| s)) {
            Ok(s) => s,
            Err(f) => return holder::fail(chan, f),
        };
        if holder::report(chan, &Report::Ready).is_err() {
            return 1;
        }
        serve::run(chan, socks, spec)
    })
}

/// Own process group (terminal signals are the session's) and no
/// inherited descriptor but `keep` (the gate's write end among them).
fn isolate(keep: &[RawFd]) -> bool {
    let _ = nix::unistd::setpgid(nix::unistd::Pid::from_raw(0), nix::unistd::Pid::from_raw(0));
    super::sys::close_fds_except(keep)
}

fn failed(step: &str, e: impl std::fmt::Display) -> Failure {
    Failure::Netlink { step: format!("starting the jail's DNS forwarder: {step}"), message: e.to_string() }
}

/// Forks the dialer, which stays in the container's network (the
/// forwarder's own, before it joins the jail) and dies with the forwarder.
fn dialer() -> Result<Dialer, Failure> {
    let (ours, theirs) = socketpair(AddressFamily::Unix, SockType::SeqPacket, None, SockFlag::SOCK_CLOEXEC).map_err(|e| failed("a socketpair", e))?;
    let forwarder = nix::unistd::getpid();
    let ours_raw = ours.as_raw_fd();
    fork_child("forking the DNS forwarder's dialer", || {
        let _ = nix::unistd::close(ours_raw);
        if die_with_parent(forwarder).is_err() || !super::sys::close_fds_except(&[theirs.as_raw_fd()]) {
            return 1;
        }
        dial(theirs.as_raw_fd())
    })
    .map_err(|e| failed("forking the dialer", e))?;
    drop(theirs);
    Ok(Dialer(ours))
}

/// The dialer's loop: one fresh socket per request, until the forwarder
/// hangs up.
fn dial(chan: RawFd) -> i32 {
    let mut b = [0u8; 1];
    loop {
        let kind = match nix::sys::socket::recv(chan, &mut b, MsgFlags::empty()) {
            Ok(1) if b[0] == UDP => libc::SOCK_DGRAM,
            Ok(1) if b[0] == TCP => libc::SOCK_STREAM,
            Err(nix::errno::Errno::EINTR) => continue,
            _ => return 0,
        };
        // SAFETY: plain socket(2); the result is checked and owned below.
        let fd = unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            return 1;
        }
        // SAFETY: a new descriptor owned only here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        if send_fd(chan, b"s", fd.as_raw_fd()).is_err() {
            return 0;
        }
    }
}

fn sockets(dialer: Dialer) -> Result<Sockets, Failure> {
    let udp = std::net::UdpSocket::from(listener(libc::SOCK_DGRAM).map_err(|e| failed("binding UDP 127.0.0.53:53", e))?);
    let tcp = std::net::TcpListener::from(listener(libc::SOCK_STREAM).map_err(|e| failed("binding TCP 127.0.0.53:53", e))?);
    let nft = nft::Socket::open().map_err(|e| failed(e.step, e.message))?;
    Ok(Sockets { udp, tcp, nft, dialer })
}

/// A non-blocking socket of `kind` bound to 127.0.0.53:53 (listening, for
/// TCP).
fn listener(kind: libc::c_int) -> std::io::Result<OwnedFd> {
    let check = |rc: libc::c_int| if rc < 0 { Err(std::io::Error::last_os_error()) } else { Ok(rc) };
    // SAFETY: plain socket(2); the result is checked and owned below.
    let fd = check(unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK, 0) })?;
    // SAFETY: a new descriptor owned only here.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: DNS_PORT.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(DNS_LISTEN).to_be() },
        sin_zero: [0; 8],
    };
    // SAFETY: bind with a valid sockaddr_in of the size given.
    check(unsafe { libc::bind(fd.as_raw_fd(), (&addr as *const libc::sockaddr_in).cast(), std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t) })?;
    if kind == libc::SOCK_STREAM {
        // SAFETY: listen on the socket just bound.
        check(unsafe { libc::listen(fd.as_raw_fd(), 64) })?;
    }
    Ok(fd)
}

const CAP_NET_ADMIN: u32 = 12;
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The forwarder parses what the session sends: it keeps nothing it does
/// not need. Not dumpable (no core, no ptrace by its uid), and of its
/// capabilities in the jail's namespace only CAP_NET_ADMIN, for the set.
fn harden() -> Result<(), Failure> {
    nix::sys::prctl::set_dumpable(false).map_err(|e| failed("making it non-dumpable", e))?;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let header = Header { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let only = Data { effective: 1 << CAP_NET_ADMIN, permitted: 1 << CAP_NET_ADMIN, inheritable: 0 };
    let data = [only, Data { effective: 0, permitted: 0, inheritable: 0 }];
    // SAFETY: capset with a version-3 header and the two data words it
    // reads; both live through the call.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr()) };
    if rc != 0 {
        return Err(failed("dropping capabilities", std::io::Error::last_os_error()));
    }
    Ok(())
}
