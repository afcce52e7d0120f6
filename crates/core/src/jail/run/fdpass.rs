//! Passing sockets between namespaces: a socket keeps the network
//! namespace it was created in, so a helper that has entered the jail
//! creates sockets there and hands them over a unix socketpair
//! (SCM_RIGHTS) to the relay, which lives outside. This file is the
//! helper ("factory") and the two ends of its tiny protocol.

use nix::sched::CloneFlags;
use nix::sys::socket::{recvmsg, sendmsg, socket, AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, SockaddrIn};
use std::io::{IoSlice, IoSliceMut};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Request byte: "send me a fresh, unconnected TCP socket".
const FRESH_SOCKET: u8 = b'S';
/// Tag of the message that ends the list of listeners.
pub(crate) const END_OF_LISTENERS: &[u8] = b"end";

/// Sends `fd` with a small tag.
pub(crate) fn send_fd(chan: RawFd, tag: &[u8], fd: RawFd) -> nix::Result<()> {
    let fds = [fd];
    let iov = [IoSlice::new(tag)];
    sendmsg::<()>(chan, &iov, &[ControlMessage::ScmRights(&fds)], MsgFlags::empty(), None).map(|_| ())
}

/// Receives one message: its tag and the descriptor it carries, if any.
/// `Ok(None)` at EOF.
pub(crate) fn recv_fd(chan: RawFd) -> nix::Result<Option<(Vec<u8>, Option<OwnedFd>)>> {
    let mut buf = [0u8; 16];
    let mut cmsg = nix::cmsg_space!([RawFd; 1]);
    let mut iov = [IoSliceMut::new(&mut buf)];
    let msg = recvmsg::<()>(chan, &mut iov, Some(&mut cmsg), MsgFlags::MSG_CMSG_CLOEXEC)?;
    let mut fd = None;
    for c in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(fds) = c {
            for raw in fds {
                // SAFETY: SCM_RIGHTS just installed `raw` in this process;
                // nothing else owns it.
                let owned = unsafe { OwnedFd::from_raw_fd(raw) };
                fd.get_or_insert(owned);
            }
        }
    }
    let n = msg.bytes;
    if n == 0 && fd.is_none() {
        return Ok(None);
    }
    Ok(Some((buf[..n].to_vec(), fd)))
}

/// Asks the factory for a fresh TCP socket inside the jail.
pub(crate) fn request_socket(chan: RawFd) -> nix::Result<OwnedFd> {
    nix::sys::socket::send(chan, &[FRESH_SOCKET], MsgFlags::empty())?;
    match recv_fd(chan)? {
        Some((_, Some(fd))) => Ok(fd),
        _ => Err(nix::errno::Errno::EPIPE),
    }
}

/// The factory, in a forked child of the relay (single-threaded):
/// 1. enter the jail (user namespace first: it grants the capability to
///    enter the network namespace, also to a non-root launcher);
/// 2. listen on the jail's 127.0.0.1:P for each local port and send each
///    listener (tag = port), then `END_OF_LISTENERS`;
/// 3. serve fresh sockets until the relay hangs up.
pub(crate) fn factory_main(chan: &OwnedFd, ns_user: &OwnedFd, ns_net: &OwnedFd, local_ports: &[u16]) -> i32 {
    if nix::sched::setns(ns_user, CloneFlags::CLONE_NEWUSER).is_err() || nix::sched::setns(ns_net, CloneFlags::CLONE_NEWNET).is_err() {
        return 1;
    }
    let c = chan.as_raw_fd();
    for port in local_ports {
        let Ok(l) = std::net::TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, *port)) else {
            return 2;
        };
        if send_fd(c, &port.to_be_bytes(), l.as_raw_fd()).is_err() {
            return 1;
        }
    }
    if nix::sys::socket::send(c, END_OF_LISTENERS, MsgFlags::empty()).is_err() {
        return 1;
    }
    serve_sockets(c)
}

fn serve_sockets(c: RawFd) -> i32 {
    let mut b = [0u8; 1];
    loop {
        match nix::sys::socket::recv(c, &mut b, MsgFlags::empty()) {
            Ok(1) if b[0] == FRESH_SOCKET => {}
            Err(nix::errno::Errno::EINTR) => continue,
            _ => return 0,
        }
        let Ok(s) = socket(AddressFamily::Inet, SockType::Stream, SockFlag::SOCK_CLOEXEC, None) else {
            return 1;
        };
        if send_fd(c, b"s", s.as_raw_fd()).is_err() {
            return 0;
        }
    }
}

/// Starts connecting a socket from the factory to the jail's
/// 127.0.0.1:`port` without blocking (the caller waits for writability).
pub(crate) fn start_connect(sock: OwnedFd, port: u16) -> std::io::Result<std::net::TcpStream> {
    let flags = nix::fcntl::fcntl(sock.as_raw_fd(), nix::fcntl::FcntlArg::F_GETFL)?;
    let flags = nix::fcntl::OFlag::from_bits_truncate(flags) | nix::fcntl::OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(sock.as_raw_fd(), nix::fcntl::FcntlArg::F_SETFL(flags))?;
    let addr = SockaddrIn::from(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    match nix::sys::socket::connect(sock.as_raw_fd(), &addr) {
        Ok(()) | Err(nix::errno::Errno::EINPROGRESS) => Ok(std::net::TcpStream::from(sock)),
        Err(e) => Err(e.into()),
    }
}
