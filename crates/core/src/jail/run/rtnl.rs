//! A blocking rtnetlink client: dumps (routes of every table, rules,
//! addresses) and a socket subscribed to the IPv4 route, rule and address
//! changes of its network namespace. No runtime and no
//! thread: the launcher reads the container with it and watches it during
//! the session while staying single-threaded (it forks, and its children
//! join namespaces); inside the jail the locker and the follower speak
//! rtnetlink on a runtime instead (`netlink.rs`). Messages are
//! built and parsed by netlink-packet-route; the normalising is
//! `plan/readback.rs`.

use crate::jail::plan::container::ContainerNet;
use crate::jail::plan::readback::{self, LinkNames};
use netlink_packet_core::{NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_DUMP, NLM_F_DUMP_INTR, NLM_F_MULTIPART, NLM_F_REQUEST};
use netlink_packet_route::address::AddressMessage;
use netlink_packet_route::route::RouteMessage;
use netlink_packet_route::rule::RuleMessage;
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// How long the kernel may take to answer; a silent kernel is an error,
/// never a hang.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// A dump interrupted by a concurrent change is repeated this often.
const DUMP_TRIES: usize = 5;

/// `RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV4_RULE`
/// (linux/rtnetlink.h): what changes the container's IPv4 destinations.
pub(crate) const IPV4_CHANGES: u32 = 0x10 | 0x40 | 0x80;

pub struct Rtnl {
    fd: OwnedFd,
    seq: u32,
    buf: Vec<u8>,
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl Rtnl {
    /// A socket for requests and dumps in the current network namespace.
    pub fn open() -> io::Result<Rtnl> {
        Rtnl::bound(0, false)
    }

    /// A non-blocking socket that receives the notifications of `groups`.
    pub(crate) fn subscribe(groups: u32) -> io::Result<Rtnl> {
        Rtnl::bound(groups, true)
    }

    fn bound(groups: u32, nonblocking: bool) -> io::Result<Rtnl> {
        let kind = libc::SOCK_RAW | libc::SOCK_CLOEXEC | if nonblocking { libc::SOCK_NONBLOCK } else { 0 };
        // SAFETY: plain socket(2); the result is checked and owned below.
        let fd = unsafe { libc::socket(libc::AF_NETLINK, kind, libc::NETLINK_ROUTE) };
        if fd < 0 {
            return Err(os_err("opening an rtnetlink socket"));
        }
        // SAFETY: `fd` is a new descriptor owned only here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a zeroed sockaddr_nl is valid; the fields are set below.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        addr.nl_groups = groups;
        // SAFETY: bind with a valid sockaddr_nl of the size given.
        let rc = unsafe { libc::bind(fd.as_raw_fd(), (&addr as *const libc::sockaddr_nl).cast(), std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t) };
        if rc != 0 {
            return Err(os_err("binding an rtnetlink socket"));
        }
        if !nonblocking {
            let tv = libc::timeval { tv_sec: ANSWER_TIMEOUT.as_secs() as _, tv_usec: 0 };
            // SAFETY: SO_RCVTIMEO with a valid timeval of the size given.
            let rc = unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_RCVTIMEO,
                    (&tv as *const libc::timeval).cast(),
                    std::mem::size_of::<libc::timeval>() as libc::socklen_t,
                )
            };
            if rc != 0 {
                return Err(os_err("setting the rtnetlink receive timeout"));
            }
        }
        Ok(Rtnl { fd, seq: 0, buf: vec![0u8; 256 * 1024] })
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    fn send(&self, bytes: &[u8]) -> io::Result<()> {
        // SAFETY: send(2) of an initialised buffer of the length given.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len(), 0) };
        if n < 0 {
            return Err(os_err("sending to rtnetlink"));
        }
        if n as usize != bytes.len() {
            return Err(io::Error::other(format!("rtnetlink took {n} of {} bytes", bytes.len())));
        }
        Ok(())
    }

    /// The messages of the next datagram (none when a non-blocking socket
    /// has nothing to read).
    fn receive(&mut self) -> io::Result<Vec<NetlinkMessage<RouteNetlinkMessage>>> {
        let n = loop {
            // SAFETY: recv(2) into our own buffer of the length given.
            let n = unsafe { libc::recv(self.fd.as_raw_fd(), self.buf.as_mut_ptr().cast(), self.buf.len(), 0) };
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) => return Ok(Vec::new()),
                _ => return Err(io::Error::new(e.kind(), format!("reading from rtnetlink: {e}"))),
            }
        };
        parse_all(&self.buf[..n])
    }

    /// Every message a dump of `req` returns, repeated when the kernel
    /// says a change interrupted it.
    pub(crate) fn dump(&mut self, req: RouteNetlinkMessage) -> io::Result<Vec<RouteNetlinkMessage>> {
        for _ in 0..DUMP_TRIES {
            if let Some(all) = self.dump_once(req.clone())? {
                return Ok(all);
            }
        }
        Err(io::Error::other(format!("a dump was interrupted by changes {DUMP_TRIES} times in a row")))
    }

    fn dump_once(&mut self, req: RouteNetlinkMessage) -> io::Result<Option<Vec<RouteNetlinkMessage>>> {
        let seq = self.next_seq();
        self.send(&encode(req, NLM_F_REQUEST | NLM_F_DUMP, seq))?;
        let mut out = Vec::new();
        let mut interrupted = false;
        loop {
            let msgs = self.receive()?;
            if msgs.is_empty() {
                return Err(io::Error::other("rtnetlink ended a dump without a word"));
            }
            for m in msgs {
                if m.header.sequence_number != seq {
                    continue;
                }
                interrupted |= m.header.flags & NLM_F_DUMP_INTR != 0;
                match m.payload {
                    NetlinkPayload::Done(_) => return Ok((!interrupted).then_some(out)),
                    NetlinkPayload::Error(e) if e.code.is_some() => return Err(e.to_io()),
                    NetlinkPayload::InnerMessage(inner) => out.push(inner),
                    NetlinkPayload::Overrun(_) => return Err(io::Error::other("rtnetlink overran during a dump")),
                    _ => {}
                }
                if m.header.flags & NLM_F_MULTIPART == 0 {
                    return Ok((!interrupted).then_some(out));
                }
            }
        }
    }

    /// Sends `req` and waits for the kernel's acknowledgement.
    pub fn request(&mut self, req: RouteNetlinkMessage) -> io::Result<()> {
        self.request_with(req, 0)
    }

    /// `request` with more header flags (`NLM_F_CREATE | NLM_F_EXCL` for a
    /// new object). The kernel's refusal keeps its errno.
    pub fn request_with(&mut self, req: RouteNetlinkMessage, flags: u16) -> io::Result<()> {
        let seq = self.next_seq();
        self.send(&encode(req, NLM_F_REQUEST | NLM_F_ACK | flags, seq))?;
        loop {
            let msgs = self.receive()?;
            if msgs.is_empty() {
                return Err(io::Error::other("rtnetlink answered a request with nothing"));
            }
            for m in msgs.into_iter().filter(|m| m.header.sequence_number == seq) {
                match m.payload {
                    NetlinkPayload::Error(e) if e.code.is_some() => return Err(e.to_io()),
                    NetlinkPayload::Error(_) => return Ok(()),
                    _ => {}
                }
            }
        }
    }

    /// Reads every pending notification of a subscribed socket; true when
    /// there was any (an overrun counts: something changed unseen).
    pub(crate) fn drain(&mut self) -> io::Result<bool> {
        let mut any = false;
        loop {
            match self.receive() {
                Ok(msgs) if msgs.is_empty() => return Ok(any),
                Ok(_) => any = true,
                Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => any = true,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Interface names by index (if_nameindex: a netlink dump of the current
/// namespace).
pub(crate) fn link_names() -> io::Result<LinkNames> {
    let list = nix::net::if_::if_nameindex().map_err(|e| io::Error::other(format!("listing interfaces: {e}")))?;
    Ok(list.iter().map(|i| (i.index(), i.name().to_string_lossy().into_owned())).collect())
}

/// The IPv4 routes (every table), rules and addresses of the current
/// network namespace, normalised.
pub(crate) fn container_net() -> io::Result<ContainerNet> {
    let mut nl = Rtnl::open()?;
    let names = link_names()?;
    let mut net = ContainerNet::default();
    for m in nl.dump(get_routes(AddressFamily::Inet))? {
        if let RouteNetlinkMessage::NewRoute(r) = m {
            net.routes.extend(readback::route_v4(&r, &names));
        }
    }
    for m in nl.dump(get_rules(AddressFamily::Inet))? {
        if let RouteNetlinkMessage::NewRule(r) = m {
            net.rules.extend(readback::policy_rule(&r));
        }
    }
    for m in nl.dump(get_addresses(AddressFamily::Inet))? {
        if let RouteNetlinkMessage::NewAddress(a) = m {
            // Only IPv4 was asked for; anything else is not an IfAddr.
            net.addrs.extend(readback::address(&a, &names).ok());
        }
    }
    net.routes.sort();
    net.rules.sort();
    net.addrs.sort();
    Ok(net)
}

/// `IN6_ADDR_GEN_MODE_NONE` (linux/if_link.h): no IPv6 link-local address.
const IN6_ADDR_GEN_MODE_NONE: u8 = 1;

/// The interface `index` gets no IPv6 address of its own making (no
/// link-local address, so no route through it either), as an
/// RTM_SETLINK request.
pub(crate) fn no_ipv6_addresses(index: u32) -> RouteNetlinkMessage {
    use netlink_packet_route::link::{AfSpecInet6, AfSpecUnspec, LinkAttribute, LinkMessage};
    let mut req = LinkMessage::default();
    req.header.index = index;
    req.attributes.push(LinkAttribute::AfSpecUnspec(vec![AfSpecUnspec::Inet6(vec![AfSpecInet6::AddrGenMode(IN6_ADDR_GEN_MODE_NONE)])]));
    RouteNetlinkMessage::SetLink(req)
}

/// The interface `index` up and without ARP (the dead end: what is routed
/// there needs no neighbour to reach the output hook's filter), as an
/// RTM_SETLINK request.
pub(crate) fn up_without_arp(index: u32) -> RouteNetlinkMessage {
    use netlink_packet_route::link::{LinkFlag, LinkMessage};
    let mut req = LinkMessage::default();
    req.header.index = index;
    req.header.flags = vec![LinkFlag::Up, LinkFlag::Noarp];
    req.header.change_mask = vec![LinkFlag::Up, LinkFlag::Noarp];
    RouteNetlinkMessage::SetLink(req)
}

pub(crate) fn get_routes(family: AddressFamily) -> RouteNetlinkMessage {
    let mut req = RouteMessage::default();
    req.header.address_family = family;
    RouteNetlinkMessage::GetRoute(req)
}

pub(crate) fn get_addresses(family: AddressFamily) -> RouteNetlinkMessage {
    let mut req = AddressMessage::default();
    req.header.family = family;
    RouteNetlinkMessage::GetAddress(req)
}

pub(crate) fn get_rules(family: AddressFamily) -> RouteNetlinkMessage {
    let mut req = RuleMessage::default();
    req.header.family = family;
    RouteNetlinkMessage::GetRule(req)
}

fn encode(msg: RouteNetlinkMessage, flags: u16, seq: u32) -> Vec<u8> {
    let mut header = NetlinkHeader::default();
    header.flags = flags;
    header.sequence_number = seq;
    let mut m = NetlinkMessage::new(header, NetlinkPayload::InnerMessage(msg));
    m.finalize();
    let mut bytes = vec![0u8; m.buffer_len()];
    m.serialize(&mut bytes);
    bytes
}

/// Splits a datagram into its messages.
fn parse_all(mut buf: &[u8]) -> io::Result<Vec<NetlinkMessage<RouteNetlinkMessage>>> {
    let mut out = Vec::new();
    while buf.len() >= 16 {
        let len = u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        if len < 16 || len > buf.len() {
            return Err(io::Error::other(format!("a netlink message of bad length {len}")));
        }
        let msg = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&buf[..len])
            .map_err(|e| io::Error::other(format!("an rtnetlink message this program cannot read: {e}")))?;
        out.push(msg);
        buf = &buf[((len + 3) & !3).min(buf.len())..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_requests_parse_back() {
        let mut a = encode(RouteNetlinkMessage::GetRoute(RouteMessage::default()), NLM_F_REQUEST | NLM_F_DUMP, 7);
        let b = encode(RouteNetlinkMessage::GetRoute(RouteMessage::default()), NLM_F_REQUEST, 8);
        a.extend(&b);
        let msgs = parse_all(&a).unwrap();
        assert_eq!(msgs.len(), 2);
        assert_eq!((msgs[0].header.sequence_number, msgs[0].header.flags), (7, NLM_F_REQUEST | NLM_F_DUMP));
        assert_eq!(msgs[1].header.sequence_number, 8);
        assert!(parse_all(&[0xff; 16]).is_err());
    }

    /// The real kernel: this process's own namespace answers a dump of
    /// its IPv4 routes (the local table is never empty).
    #[test]
    fn a_dump_of_this_namespace() {
        let mut nl = Rtnl::open().unwrap();
        let routes = nl.dump(get_routes(AddressFamily::Inet)).unwrap();
        assert!(routes.iter().any(|m| matches!(m, RouteNetlinkMessage::NewRoute(_))), "{routes:?}");
        let net = container_net().unwrap();
        assert!(net.routes.iter().any(|r| r.table == crate::jail::plan::routes::TABLE_LOCAL), "{net:?}");
        assert!(net.rules.iter().any(|r| r.priority == 32766), "{net:?}");
        assert!(net.addrs.iter().any(|a| a.addr.is_loopback()), "{net:?}");
    }
}
